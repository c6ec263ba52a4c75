// The all-reduce cost model of cost_model.h. Every algorithm's time is the sum of its phases (on one
// core a rank's copies, adds and messages do not overlap); concurrent flows of one node share its links.

#include <kusari/distributed/cost_model.h>

#include <algorithm>
#include <cmath>

#include <kusari/core/error.h>

namespace kusari::distributed::cost {
namespace {

// ⌈log2 s⌉ and ⌊log2 s⌋ for s ≥ 1.
int ceil_log2(int s) {
  int steps = 0;
  while ((1 << steps) < s) ++steps;
  return steps;
}
int floor_log2(int s) {
  int steps = 0;
  while ((2 << steps) <= s) ++steps;
  return steps;
}

bool crosses_nodes(const Span& span) { return span.ranks > span.ranks_per_node; }

// The link one of `flows` concurrent flows of a node gets between nodes, `own_flows` of them this rank's,
// each with `messages` in flight: the wire's β stretched when the flows outnumber the node's links. A
// message with an end in memory gets its flow's share of what its link streams with the messages in
// flight of the flows sharing it (streaming_beta, at least β: so at least β × stretch a byte); where
// β_streams is not measured, this rank pays the memory end (β_memory beyond β) of each of its own flows
// one after another on its one thread.
Link shared_inter(const Span& span, int flows, int own_flows, int64_t messages) {
  const Link& inter = span.inter;
  const double stretch = std::max(1.0, double(flows) / std::max(1, span.links_per_node));
  const double beta = inter.beta * stretch;
  if (inter.beta_streams > 0) {
    return {inter.alpha, beta, stretch * streaming_beta(inter, stretch * double(messages))};
  }
  if (inter.beta_memory == 0) return {inter.alpha, beta};
  return {inter.alpha, beta, beta + std::max(0.0, inter.beta_memory - inter.beta) * own_flows};
}

// The link of a ring over the span in rank order: its slowest hop (one flow per node crosses).
Link ring_link(const Span& span) { return crosses_nodes(span) ? span.inter : span.intra; }

// The messages one flow of the ring engine keeps in flight for n elements over `ranks`: the receives its
// pipeline posts (pipeline_depth, the one it waits for included; ring.cpp), at most one step's.
int64_t ring_in_flight(int64_t n, int ranks, int64_t chunk, int depth) {
  return std::min<int64_t>(depth, ring_messages_per_step(n, ranks, chunk));
}

// The link of the ring engine over the span for n elements: ring_link, whose memory-end messages stream
// between nodes with the ring's pipeline in flight (streaming_beta).
Link engine_ring_link(const Span& span, int64_t n, int64_t chunk, int depth) {
  if (!crosses_nodes(span)) return span.intra;
  Link link = span.inter;
  link.beta_memory = streaming_beta(span.inter, double(ring_in_flight(n, span.ranks, chunk, depth)));
  return link;
}

// The chunk of the ring engine in elements of w bytes (CommunicatorOptions::chunk_bytes, checked ≥ 64).
int64_t chunk_elements(const CommunicatorOptions& options, int w) { return options.chunk_bytes / w; }

// A whole ring all-reduce of n elements on `link` (pack the own segment, reduce-scatter with each
// received element accumulated by `accumulate`, all-gather, unpack all n).
double ring_seconds(int64_t n, int ranks, int w, int64_t chunk, const Link& link, double pack, double accumulate,
                    double unpack) {
  const double own = ranks > 0 ? double(n) / ranks : 0;
  return own * pack + ring_reduce_scatter_seconds(n, ranks, w, chunk, link, accumulate) +
         ring_allgather_seconds(n, ranks, w, chunk, link) + double(n) * unpack;
}

// The node phases of two_dimensional and multi_color (ring.cpp's reduce_within_nodes): a reduce-scatter
// inside the node (own chunks packed, the rest accumulated), `across` on the n/k slice, an all-gather
// inside the node (everything unpacked).
template <class Across>
double within_nodes_seconds(const Cluster& cluster, int64_t n, int w, int64_t chunk, const WireCosts& c,
                            Across across) {
  const int k = cluster.ranks_per_node;
  const int64_t slice = (n + k - 1) / k;
  return double(slice) * c.pack + ring_reduce_scatter_seconds(n, k, w, chunk, cluster.intra, c.accumulate) +
         across(slice) + ring_allgather_seconds(n, k, w, chunk, cluster.intra) + double(n) * c.unpack;
}

// `colors` rings at once over the S ranks of `span` on the n elements split evenly among them: their
// messages travel side by side, so the message time is the slowest color's, its share of the bytes on a
// link shared by the node's `flows_per_color`·colors flows (`colors` of them this rank's, each with its
// pipeline in flight); the adds of every color run on this rank's one thread ((S-1)/S·n of them in all).
double colored_rings_seconds(int64_t n, int colors, int flows_per_color, const Span& span, int w, int64_t chunk,
                             int depth, double accumulate) {
  double messages = 0;
  for (int color = 0; color < colors; ++color) {
    const int64_t part = n * (color + 1) / colors - n * color / colors;
    const Link link = crosses_nodes(span) ? shared_inter(span, flows_per_color * colors, colors,
                                                         ring_in_flight(part, span.ranks, chunk, depth))
                                          : span.intra;
    messages = std::max(messages, ring_reduce_scatter_seconds(part, span.ranks, w, chunk, link, 0) +
                                      ring_allgather_seconds(part, span.ranks, w, chunk, link));
  }
  return messages + double(span.ranks - 1) / span.ranks * double(n) * accumulate;
}

// The span of the inter-node communicator: one rank of each of the N nodes, k of them side by side.
Span leaders(const Cluster& cluster) {
  return {cluster.nodes(), 1, cluster.intra, cluster.inter, cluster.links_per_node, cluster.mpi};
}
// The span of one node's ranks.
Span one_node(const Cluster& cluster) {
  return {cluster.ranks_per_node, cluster.ranks_per_node, cluster.intra, cluster.inter, cluster.links_per_node,
          cluster.mpi};
}

// One communicator call of `algorithm` on one buffer of n elements, after the common checks.
double algorithm_seconds(const Cluster& cluster, const std::string& algorithm, const CommunicatorOptions& options,
                         const std::vector<int64_t>& tensors, int64_t n) {
  const Dtype wire = options.wire_dtype;
  const int w = static_cast<int>(itemsize(wire));
  const WireCosts& c = cluster.local(wire);
  const bool builtin = wire == Dtype::float32;
  const int64_t chunk = chunk_elements(options, w);
  const int depth = options.pipeline_depth;
  const int k = cluster.ranks_per_node, nodes = cluster.nodes();
  const Span all = cluster.all();
  const double convert = double(n) * (c.pack + c.unpack);
  if (algorithm == "naive") {
    double t = convert;
    for (int64_t part : tensors) {
      if (part > 0) t += mpi_allreduce_seconds(part, w, builtin, all, c.add);
    }
    return t;
  }
  if (algorithm == "flat") return convert + mpi_allreduce_seconds(n, w, builtin, all, c.add);
  const Link all_ring = engine_ring_link(all, n, chunk, depth);
  if (algorithm == "ring") return ring_seconds(n, cluster.ranks, w, chunk, all_ring, c.pack, c.accumulate, c.unpack);
  if (algorithm == "hierarchical") {
    if (k == 1) return ring_seconds(n, cluster.ranks, w, chunk, all_ring, c.pack, c.accumulate, c.unpack);
    double t = convert + mpi_reduce_seconds(n, w, builtin, one_node(cluster), c.add) +
               mpi_bcast_seconds(n, w, one_node(cluster));
    if (nodes > 1) {
      const Link leaders_ring = engine_ring_link(leaders(cluster), n, chunk, depth);
      t += ring_reduce_scatter_seconds(n, nodes, w, chunk, leaders_ring, c.add) +
           ring_allgather_seconds(n, nodes, w, chunk, leaders_ring);
    }
    return t;
  }
  if (algorithm == "two_dimensional") {
    if (k == 1) return convert + ring_reduce_scatter_seconds(n, cluster.ranks, w, chunk, all_ring, c.add) +
                       ring_allgather_seconds(n, cluster.ranks, w, chunk, all_ring);
    return within_nodes_seconds(cluster, n, w, chunk, c, [&](int64_t slice) {
      return nodes > 1 ? colored_rings_seconds(slice, 1, k, leaders(cluster), w, chunk, depth, c.add) : 0.0;
    });
  }
  if (algorithm == "multi_color") {
    const int colors = options.colors;
    if (k == 1) {
      return double(n) / cluster.ranks * c.pack + double(n) * c.unpack +
             colored_rings_seconds(n, colors, 1, all, w, chunk, depth, c.accumulate);
    }
    return within_nodes_seconds(cluster, n, w, chunk, c, [&](int64_t slice) {
      return nodes > 1 ? colored_rings_seconds(slice, colors, k, leaders(cluster), w, chunk, depth, c.add) : 0.0;
    });
  }
  if (algorithm == "hybrid") {
    const bool large = n * w >= options.hybrid_threshold_bytes;
    return algorithm_seconds(cluster, large ? "ring" : "hierarchical", options, tensors, n);
  }
  std::string known;
  for (const std::string& name : modelled_algorithms()) known += (known.empty() ? "" : ", ") + name;
  throw ValueError(cat("allreduce_seconds: expected one of ", known, ", got '", algorithm, "'"));
}

}  // namespace

const WireCosts& Cluster::local(Dtype wire) const {
  if (wire == Dtype::float32) return float32;
  if (wire == Dtype::float16) return float16;
  if (wire == Dtype::bfloat16) return bfloat16;
  throw DtypeError(cat("Cluster::local: expected a wire dtype (float32, float16 or bfloat16), got ", wire));
}

void Cluster::check() const {
  nodes();
  if (links_per_node < 1) throw ValueError(cat("Cluster: expected links_per_node ≥ 1, got ", links_per_node));
  const auto finite = [](double v) { return std::isfinite(v) && v >= 0; };
  for (const Link* link : {&intra, &inter}) {
    if (!finite(link->alpha) || !finite(link->beta) || !finite(link->beta_memory) || !finite(link->beta_streams)) {
      throw ValueError(cat("Cluster: expected finite α, β, β_memory and β_streams ≥ 0, got α = ", link->alpha,
                           ", β = ", link->beta, ", β_memory = ", link->beta_memory, ", β_streams = ",
                           link->beta_streams));
    }
  }
  for (const WireCosts* w : {&float32, &float16, &bfloat16}) {
    for (double v : {w->pack, w->accumulate, w->add, w->unpack, w->max_abs}) {
      if (!finite(v)) throw ValueError(cat("Cluster: expected finite local costs ≥ 0, got ", v));
    }
  }
  for (double v : {mpi.allreduce, mpi.allreduce_half, mpi.reduce, mpi.reduce_half, mpi.bcast, mpi.from_bytes}) {
    if (!finite(v)) throw ValueError(cat("Cluster: expected finite MPI factors ≥ 0, got ", v));
  }
  if (mpi.by_node && mpi.open_mpi) {
    throw ValueError("Cluster: expected MPICH's composition by node (mpi.by_node) or Open MPI's choices "
                     "(mpi.open_mpi), got both");
  }
}

int Cluster::nodes() const {
  if (ranks < 1 || ranks_per_node < 1 || ranks % ranks_per_node != 0) {
    throw ValueError(cat("Cluster: expected ranks_per_node dividing ranks (both positive), got ", ranks_per_node,
                         " and ", ranks));
  }
  return ranks / ranks_per_node;
}

Span Cluster::all() const { return {ranks, ranks_per_node, intra, inter, links_per_node, mpi}; }

int64_t ring_messages_per_step(int64_t elements, int ranks, int64_t chunk_elements) {
  const int64_t segment = (elements + ranks - 1) / std::max(1, ranks);
  return std::max<int64_t>(1, (segment + chunk_elements - 1) / std::max<int64_t>(1, chunk_elements));
}

double memory_beta(const Link& link) { return link.beta_memory > 0 ? link.beta_memory : link.beta; }

double streaming_beta(const Link& link, double messages) {
  const double one_message = memory_beta(link);
  if (link.beta_streams <= 0 || one_message <= 0) return one_message;
  const double m = std::clamp(messages, 1.0, double(kStreamsMessages));
  const double many = std::min(link.beta_streams, one_message);
  const double way = std::log(m) / std::log(double(kStreamsMessages));  // 0 at one message, 1 at kStreamsMessages
  return std::max(link.beta, one_message * std::pow(many / one_message, way));
}

namespace {

// The messages of one ring phase: S-1 steps of m messages, n/S·w bytes a step, one step with an end in
// the owned slice's buffer (see ring_reduce_scatter_seconds).
double ring_phase_message_seconds(int64_t n, int ranks, int wire_bytes, int64_t chunk_elements, const Link& link) {
  const double step_bytes = double(n) / ranks * wire_bytes;
  return double(ranks - 1) * double(ring_messages_per_step(n, ranks, chunk_elements)) * link.alpha +
         step_bytes * (double(ranks - 2) * link.beta + memory_beta(link));
}

}  // namespace

double ring_reduce_scatter_seconds(int64_t n, int ranks, int wire_bytes, int64_t chunk_elements, const Link& link,
                                   double accumulate) {
  if (ranks <= 1) return 0;
  return ring_phase_message_seconds(n, ranks, wire_bytes, chunk_elements, link) +
         double(ranks - 1) / ranks * double(n) * accumulate;
}

double ring_allgather_seconds(int64_t n, int ranks, int wire_bytes, int64_t chunk_elements, const Link& link) {
  if (ranks <= 1) return 0;
  return ring_phase_message_seconds(n, ranks, wire_bytes, chunk_elements, link);
}

namespace {

// The buffer size from which MPI's messages of a collective have an end beyond the caches and move one
// at a time: below the factors' size they cross each link at its β_memory.
constexpr double kMpiMemoryBytes = 1 << 20;

// The span of MPI's messages of a collective on a buffer of `bytes`: the span itself below
// kMpiMemoryBytes, its links at β_memory from there to the factors' size, and from that size up MPI's
// extra copies: `factor` (an MpiFactors entry) times the intra-node β, and the same extra copies,
// (factor - 1) times the intra-node β per byte, added to the inter-node β (a network's wire does not
// make MPI's copies slower; where both links are one machine's memory this is factor times both).
Span scaled(const Span& span, double factor, double bytes) {
  if (bytes < kMpiMemoryBytes) return span;
  Span out = span;
  if (bytes < span.mpi.from_bytes) {
    out.intra.beta = memory_beta(span.intra);
    out.inter.beta = memory_beta(span.inter);
    return out;
  }
  out.intra.beta *= factor;
  out.inter.beta += (factor - 1) * span.intra.beta;
  return out;
}

// The link of an exchange between ranks `distance` apart: inside the node when the distance is below k
// (nodes of consecutive ranks), across it otherwise, where the node's k ranks exchange at once and share
// its links.
Link exchange_link(const Span& span, int distance) {
  const int k = std::min(span.ranks_per_node, span.ranks);
  return distance < k ? span.intra : shared_inter(span, k, 1, 1);
}

// One half of Rabenseifner's algorithm over the largest power of two p ≤ S: log2 p exchanges at
// distances 1, 2, 4, ..., the i-th carrying bytes / 2^(i+1) (recursive halving; the all-gather mirrors it).
double halving_seconds(double bytes, const Span& span) {
  const int p = 1 << floor_log2(span.ranks);
  double t = 0, part = bytes;
  for (int distance = 1; distance < p; distance *= 2) {
    part /= 2;
    const Link link = exchange_link(span, distance);
    t += link.alpha + part * link.beta;
  }
  return t;
}

// log2 p exchanges of all the bytes at distances 1, 2, 4, ... (recursive doubling), each followed by
// `per_step` seconds of local work.
double doubling_seconds(double bytes, const Span& span, double per_step) {
  const int p = 1 << floor_log2(span.ranks);
  double t = 0;
  for (int distance = 1; distance < p; distance *= 2) {
    const Link link = exchange_link(span, distance);
    t += link.alpha + bytes * link.beta + per_step;
  }
  return t;
}

// MPICH's extra whole-buffer steps for S ranks that are not a power of two: the ranks beyond p fold
// their data into a partner first (and, for an all-reduce, get the result back last).
double fold_seconds(double bytes, const Span& span, int steps, double reduction) {
  if ((span.ranks & (span.ranks - 1)) == 0) return 0;
  const Link link = ring_link(span);
  return steps * (link.alpha + bytes * link.beta) + reduction;
}

// The algorithms of an MPI all-reduce or reduce (MPI's ring only under Open MPI, for an all-reduce).
enum class Reduction { recursive_doubling, rabenseifner, ring };

// The algorithm MPICH, or for an all-reduce under span.mpi.open_mpi Open MPI, runs for n elements of w
// bytes (see mpi_allreduce_seconds).
Reduction reduction_of(int64_t n, int w, bool builtin_op, const Span& span, bool allreduce) {
  const int64_t bytes = n * w;
  const bool fits = n >= (int64_t{1} << floor_log2(span.ranks));  // a part for each rank of the power of two
  if (span.mpi.open_mpi && allreduce) {
    const bool ring = span.ranks < 4 ? bytes < 8 || (bytes >= 4096 && bytes < 8192) || (bytes >= 16384 && bytes < 262144)
                                     : span.ranks < 8 && bytes < 16;
    if (ring && n >= span.ranks) return Reduction::ring;  // a part for each rank, else recursive doubling
    const int64_t from = span.ranks < 4 ? 262144 : 8192;
    return !ring && bytes >= from && fits ? Reduction::rabenseifner : Reduction::recursive_doubling;
  }
  return builtin_op && bytes > 2048 && fits ? Reduction::rabenseifner : Reduction::recursive_doubling;
}

// Throws ValueError naming `op` unless the span has ranks, nodes and links.
void check_span(const Span& span, const char* op) {
  if (span.ranks < 1 || span.ranks_per_node < 1 || span.links_per_node < 1) {
    throw ValueError(cat(op, ": expected a span of ≥ 1 ranks, ranks per node and links, got ", span.ranks, ", ",
                         span.ranks_per_node, " and ", span.links_per_node));
  }
}

// MPI_Allreduce's (folds = 2) or MPI_Reduce's (folds = 1) formula, β scaled by `factor` for a large buffer;
// `op` names the caller in the span check.
double reduction_formula(int64_t n, int wire_bytes, bool builtin_op, const Span& unscaled, double reduction,
                         double factor, int folds, const char* op) {
  check_span(unscaled, op);
  if (unscaled.ranks <= 1 || n == 0) return 0;
  const double bytes = double(n) * wire_bytes;
  const Span span = scaled(unscaled, factor, bytes);
  const int s = span.ranks;
  const bool allreduce = folds == 2;  // MPI_Reduce folds once
  const Reduction algorithm = reduction_of(n, wire_bytes, builtin_op, span, allreduce);
  if (algorithm == Reduction::ring) {  // no fold: every rank holds a part
    const Link link = ring_link(span);
    return 2.0 * (s - 1) * (link.alpha + bytes / s * link.beta) + double(s - 1) / s * double(n) * reduction;
  }
  const double fold = fold_seconds(bytes, span, folds, double(n) * reduction);
  if (algorithm == Reduction::rabenseifner) {
    const int p = 1 << floor_log2(s);
    return fold + 2 * halving_seconds(bytes, span) + double(p - 1) / p * double(n) * reduction;
  }
  return fold + doubling_seconds(bytes, span, double(n) * reduction);
}

}  // namespace

double mpi_allreduce_seconds(int64_t n, int wire_bytes, bool builtin_op, const Span& span, double reduction) {
  check_span(span, "mpi_allreduce_seconds");
  const int k = span.ranks_per_node;
  if (span.mpi.by_node && !span.mpi.open_mpi && k > 1 && crosses_nodes(span)) {
    Span node = span, first_ranks = span;
    node.ranks = k;
    first_ranks.ranks = (span.ranks + k - 1) / k;
    first_ranks.ranks_per_node = 1;
    return mpi_reduce_seconds(n, wire_bytes, builtin_op, node, reduction) +
           mpi_allreduce_seconds(n, wire_bytes, builtin_op, first_ranks, reduction) +
           mpi_bcast_seconds(n, wire_bytes, node);
  }
  return reduction_formula(n, wire_bytes, builtin_op, span, reduction,
                           builtin_op ? span.mpi.allreduce : span.mpi.allreduce_half, 2, "mpi_allreduce_seconds");
}

double mpi_reduce_seconds(int64_t n, int wire_bytes, bool builtin_op, const Span& span, double reduction) {
  return reduction_formula(n, wire_bytes, builtin_op, span, reduction,
                           builtin_op ? span.mpi.reduce : span.mpi.reduce_half, 1, "mpi_reduce_seconds");
}

double mpi_bcast_seconds(int64_t n, int wire_bytes, const Span& unscaled) {
  check_span(unscaled, "mpi_bcast_seconds");
  if (unscaled.ranks <= 1 || n == 0) return 0;
  const Span span = scaled(unscaled, unscaled.mpi.bcast, double(n) * wire_bytes);
  const double bytes = double(n) * wire_bytes;
  if (bytes < 12288 || span.ranks < 8) return ceil_log2(span.ranks) * (ring_link(span).alpha + bytes * ring_link(span).beta);
  // A scatter (binomial), then an all-gather: recursive doubling on a power of two, a ring otherwise.
  const Link link = ring_link(span);
  const bool power_of_two = (span.ranks & (span.ranks - 1)) == 0;
  return (floor_log2(span.ranks) + (power_of_two ? floor_log2(span.ranks) : span.ranks - 1)) * link.alpha +
         2.0 * (span.ranks - 1) / span.ranks * bytes * link.beta;
}

double allreduce_seconds(const Cluster& cluster, const std::string& algorithm, const CommunicatorOptions& options,
                         const std::vector<int64_t>& tensor_elements) {
  check_communicator_options(options);
  int64_t n = 0;
  for (int64_t part : tensor_elements) {
    if (part < 0) throw ValueError(cat("allreduce_seconds: expected tensor sizes ≥ 0, got ", part));
    n += part;
  }
  cluster.check();
  const WireCosts& c = cluster.local(options.wire_dtype);
  const Span all = cluster.all();
  double t = 0;
  // The size check: one MPI_Allgather of an int64 per rank (recursive doubling); nothing more for no data.
  if (options.check_sizes) t += doubling_seconds(8, all, 0);
  if (n == 0) return t;
  // The float16 policy: the scan for the largest |g| and one 4-byte MPI_Allreduce(MAX).
  if (options.wire_dtype == Dtype::float16 && options.averaging == AveragingPolicy::automatic) {
    t += double(n) * c.max_abs + mpi_allreduce_seconds(1, 4, true, all, 0);
  }
  if (cluster.ranks == 1) return t + double(n) * (c.pack + c.unpack);
  return t + algorithm_seconds(cluster, algorithm, options, tensor_elements, n);
}

StepPrediction predict_step(const Cluster& cluster, const std::string& algorithm, const CommunicatorOptions& options,
                            const std::vector<LayerCost>& layers, int64_t bucket_bytes, bool overlap) {
  if (bucket_bytes <= 0) throw ValueError(cat("predict_step: expected bucket_bytes > 0, got ", bucket_bytes));
  CommunicatorOptions bucket_options = options;
  bucket_options.check_sizes = false;  // the multi-node optimizer's communicator skips the size check
  StepPrediction step;
  double ready = 0, finished = 0;
  int64_t filled = 0;
  // The bucket filled so far is all-reduced once its last gradient is final (copied into the bucket
  // buffer first: one float32 copy per element).
  const auto send = [&] {
    if (filled == 0) return;
    const double t = double(filled) * cluster.float32.pack +
                     allreduce_seconds(cluster, algorithm, bucket_options, {filled});
    step.allreduce_seconds += t;
    finished = (overlap ? std::max(ready, finished) : finished) + t;
    ++step.buckets;
    filled = 0;
  };
  for (const LayerCost& layer : layers) {
    if (layer.gradient_elements < 0 || layer.backward_seconds < 0) {
      throw ValueError(cat("predict_step: expected layers of ≥ 0 elements and seconds, got ", layer.gradient_elements,
                           " and ", layer.backward_seconds));
    }
    if (filled > 0 && (filled + layer.gradient_elements) * 4 > bucket_bytes) send();
    ready += layer.backward_seconds;
    filled += layer.gradient_elements;
  }
  step.backward_seconds = ready;
  send();
  step.exposed_seconds = overlap ? std::max(0.0, finished - step.backward_seconds) : step.allreduce_seconds;
  return step;
}

std::vector<Recommendation> recommend(const Cluster& cluster, const std::vector<LayerCost>& layers,
                                      const std::vector<int64_t>& bucket_sizes, const std::vector<Dtype>& wire_dtypes,
                                      const CommunicatorOptions& base, const std::vector<std::string>& algorithms) {
  std::vector<std::string> candidates = algorithms;
  if (candidates.empty()) {
    for (const std::string& name : modelled_algorithms()) {
      if (name != "naive") candidates.push_back(name);
    }
  }
  std::vector<Recommendation> out;
  for (const std::string& algorithm : candidates) {
    for (int64_t bucket : bucket_sizes) {
      for (Dtype wire : wire_dtypes) {
        CommunicatorOptions options = base;
        options.wire_dtype = wire;
        out.push_back({algorithm, bucket, wire, predict_step(cluster, algorithm, options, layers, bucket)});
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Recommendation& a, const Recommendation& b) {
    if (a.step.exposed_seconds != b.step.exposed_seconds) return a.step.exposed_seconds < b.step.exposed_seconds;
    return a.step.allreduce_seconds < b.step.allreduce_seconds;
  });
  return out;
}

std::vector<std::string> modelled_algorithms() {
  return {"naive", "flat", "ring", "hierarchical", "two_dimensional", "multi_color", "hybrid"};
}

}  // namespace kusari::distributed::cost

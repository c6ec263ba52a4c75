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

// The link one of `flows` concurrent flows of a node gets between nodes: β stretched when the flows
// outnumber the node's links.
Link shared_inter(const Span& span, int flows) {
  return {span.inter.alpha, span.inter.beta * std::max(1.0, double(flows) / std::max(1, span.links_per_node))};
}

// The link of a ring over the span in rank order: its slowest hop (one flow per node crosses).
Link ring_link(const Span& span) { return crosses_nodes(span) ? span.inter : span.intra; }

// The chunk of the ring engine in elements of w bytes (CommunicatorOptions::chunk_bytes, at least 64).
int64_t chunk_elements(const CommunicatorOptions& options, int w) {
  return std::max<int64_t>(1, std::max<int64_t>(64, options.chunk_bytes) / w);
}

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

// `colors` rings at once over the S ranks of `span` on the n elements split evenly among them: they run
// side by side, so the time is the slowest color's, its share of the bytes on a link shared by the node's
// `flows_per_color`·colors flows.
double colored_rings_seconds(int64_t n, int colors, int flows_per_color, const Span& span, int w, int64_t chunk,
                             double accumulate) {
  const Link link = crosses_nodes(span) ? shared_inter(span, flows_per_color * colors) : span.intra;
  double t = 0;
  for (int color = 0; color < colors; ++color) {
    const int64_t part = n * (color + 1) / colors - n * color / colors;
    t = std::max(t, ring_reduce_scatter_seconds(part, span.ranks, w, chunk, link, accumulate) +
                        ring_allgather_seconds(part, span.ranks, w, chunk, link));
  }
  return t;
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
  if (algorithm == "ring") return ring_seconds(n, cluster.ranks, w, chunk, ring_link(all), c.pack, c.accumulate, c.unpack);
  if (algorithm == "hierarchical") {
    if (k == 1) return ring_seconds(n, cluster.ranks, w, chunk, cluster.inter, c.pack, c.accumulate, c.unpack);
    double t = convert + mpi_reduce_seconds(n, w, builtin, one_node(cluster), c.add) +
               mpi_bcast_seconds(n, w, one_node(cluster));
    if (nodes > 1) {
      t += ring_reduce_scatter_seconds(n, nodes, w, chunk, cluster.inter, c.add) +
           ring_allgather_seconds(n, nodes, w, chunk, cluster.inter);
    }
    return t;
  }
  if (algorithm == "two_dimensional") {
    if (k == 1) return convert + ring_reduce_scatter_seconds(n, cluster.ranks, w, chunk, cluster.inter, c.add) +
                       ring_allgather_seconds(n, cluster.ranks, w, chunk, cluster.inter);
    return within_nodes_seconds(cluster, n, w, chunk, c, [&](int64_t slice) {
      return nodes > 1 ? colored_rings_seconds(slice, 1, k, leaders(cluster), w, chunk, c.add) : 0.0;
    });
  }
  if (algorithm == "multi_color") {
    const int colors = std::max(1, options.colors);
    if (k == 1) {
      return double(n) / cluster.ranks * c.pack + double(n) * c.unpack +
             colored_rings_seconds(n, colors, 1, all, w, chunk, c.accumulate);
    }
    return within_nodes_seconds(cluster, n, w, chunk, c, [&](int64_t slice) {
      return nodes > 1 ? colored_rings_seconds(slice, colors, k, leaders(cluster), w, chunk, c.add) : 0.0;
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

double ring_reduce_scatter_seconds(int64_t n, int ranks, int wire_bytes, int64_t chunk_elements, const Link& link,
                                   double accumulate) {
  if (ranks <= 1) return 0;
  const double share = double(ranks - 1) / ranks * double(n);
  return double(ranks - 1) * double(ring_messages_per_step(n, ranks, chunk_elements)) * link.alpha +
         share * wire_bytes * link.beta + share * accumulate;
}

double ring_allgather_seconds(int64_t n, int ranks, int wire_bytes, int64_t chunk_elements, const Link& link) {
  if (ranks <= 1) return 0;
  return double(ranks - 1) * double(ring_messages_per_step(n, ranks, chunk_elements)) * link.alpha +
         double(ranks - 1) / ranks * double(n) * wire_bytes * link.beta;
}

namespace {

// The span with both links' β multiplied by `factor` (an MpiFactors entry) for a collective on a buffer
// of `bytes` from the factors' size up; the span itself below it.
Span scaled(const Span& span, double factor, double bytes) {
  if (bytes < span.mpi.from_bytes) return span;
  Span out = span;
  out.intra.beta *= factor;
  out.inter.beta *= factor;
  return out;
}

// One half of Rabenseifner's algorithm (recursive halving or doubling over the largest power of two p):
// log2 p messages, the inter-node steps' share of the bytes on the node's shared links, the rest inside.
double halving_seconds(int64_t n, int w, const Span& span) {
  const int p = 1 << floor_log2(span.ranks);
  const int k = std::min(span.ranks_per_node, p);
  const int nodes = std::max(1, p / k);
  const double bytes = double(n) * w;
  const int inter_steps = ceil_log2(nodes), intra_steps = floor_log2(p) - inter_steps;
  const Link across = shared_inter(span, k);
  return inter_steps * across.alpha + intra_steps * span.intra.alpha +
         double(nodes - 1) / nodes * bytes * across.beta + double(k - 1) / k * bytes / nodes * span.intra.beta;
}

// ⌈log2 S⌉ exchanges of b bytes each, the first log2 k inside the node, the rest across it with the node's
// ranks sharing its links; each exchange followed by `per_step` seconds of local work.
double doubling_seconds(double bytes, const Span& span, double per_step) {
  const int steps = ceil_log2(span.ranks);
  const int intra_steps = std::min(steps, floor_log2(std::max(1, std::min(span.ranks_per_node, span.ranks))));
  const Link across = shared_inter(span, std::min(span.ranks_per_node, span.ranks));
  return intra_steps * (span.intra.alpha + bytes * span.intra.beta) +
         (steps - intra_steps) * (across.alpha + bytes * across.beta) + steps * per_step;
}

bool rabenseifner(int64_t n, int w, bool builtin_op, int ranks) {
  return builtin_op && n * w > 2048 && n >= (int64_t{1} << floor_log2(ranks));
}

}  // namespace

namespace {

// MPI_Allreduce's formula (see mpi_allreduce_seconds) on links already scaled by the MPI factor.
double allreduce_formula(int64_t n, int wire_bytes, bool builtin_op, const Span& span, double reduction) {
  if (rabenseifner(n, wire_bytes, builtin_op, span.ranks)) {
    return 2 * halving_seconds(n, wire_bytes, span) + double(span.ranks - 1) / span.ranks * double(n) * reduction;
  }
  return doubling_seconds(double(n) * wire_bytes, span, double(n) * reduction);
}

}  // namespace

double mpi_allreduce_seconds(int64_t n, int wire_bytes, bool builtin_op, const Span& span, double reduction) {
  if (span.ranks <= 1 || n == 0) return 0;
  const double bytes = double(n) * wire_bytes;
  return allreduce_formula(n, wire_bytes, builtin_op,
                           scaled(span, builtin_op ? span.mpi.allreduce : span.mpi.allreduce_half, bytes), reduction);
}

double mpi_reduce_seconds(int64_t n, int wire_bytes, bool builtin_op, const Span& span, double reduction) {
  if (span.ranks <= 1 || n == 0) return 0;
  const double bytes = double(n) * wire_bytes;
  return allreduce_formula(n, wire_bytes, builtin_op,
                           scaled(span, builtin_op ? span.mpi.reduce : span.mpi.reduce_half, bytes), reduction);
}

double mpi_bcast_seconds(int64_t n, int wire_bytes, const Span& unscaled) {
  if (unscaled.ranks <= 1 || n == 0) return 0;
  const Span span = scaled(unscaled, unscaled.mpi.bcast, double(n) * wire_bytes);
  const double bytes = double(n) * wire_bytes;
  if (bytes < 12288 || span.ranks < 8) return doubling_seconds(bytes, span, 0);
  const Link link = ring_link(span);
  return (floor_log2(span.ranks) + span.ranks - 1) * link.alpha +
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
  const WireCosts& c = cluster.local(options.wire_dtype);
  const Span all = cluster.all();
  cluster.nodes();  // validates the cluster's shape
  if (cluster.ranks == 1) return double(n) * (c.pack + c.unpack);
  double t = 0;
  // The size check: one MPI_Allgather of an int64 per rank (recursive doubling).
  if (options.check_sizes) t += doubling_seconds(8, all, 0);
  // The float16 policy: the scan for the largest |g| and one 4-byte MPI_Allreduce(MAX).
  if (options.wire_dtype == Dtype::float16 && options.averaging == AveragingPolicy::automatic) {
    t += double(n) * c.max_abs + mpi_allreduce_seconds(1, 4, true, all, 0);
  }
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

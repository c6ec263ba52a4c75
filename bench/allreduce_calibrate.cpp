// Calibrates the all-reduce cost model (kusari/distributed/cost_model.h) on this machine and checks it
// against bench/allreduce: measures α and β of an exchange between two ranks of one node (and of two
// nodes when there are several, e.g. pretend nodes of KUSARI_RANKS_PER_NODE ranks), every pair at once as
// the collectives send (between machines, one pair per network link of a node: --links-per-node, default
// one); the per-element cost of each local pass of every wire dtype, every rank at once;
// then predicts each bench/allreduce line (ResNet-50's gradients), times it as bench/allreduce does, and
// prints "calibration <setting>: predicted=X ms measured=Y ms error=E%".
//   mpiexec -n 2 build/bench/allreduce_calibrate [--rounds R] [--save FILE] [--links-per-node L]
//   KUSARI_RANKS_PER_NODE=2 mpiexec -n 4 build/bench/allreduce_calibrate
// --first-node-only measures inside the first node alone, the other nodes' ranks asleep (hosts sharing one
// machine's cores, where two ranks of a node on one core would time the scheduler).
// --save writes the measured cluster for bench/predict_seeds --recommend --cluster FILE.
// --replay FILE re-predicts an earlier run's lines (its printed output) with this build's model, without
// MPI: "replay <setting>: predicted=X ms measured=Y ms error=E%" (a model change shown on old launches);
// --mpi-by-node prices those taken on hosts before the first line named MPICH's composition by node,
// --open-mpi those of the Open MPI build before it named Open MPI's choices.

#include <mpi.h>

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <kusari/distributed/cost_fit.h>
#include <kusari/distributed/cost_model.h>
#include <kusari/distributed/detail/collectives.h>
#include <kusari/distributed/detail/wire_format.h>
#include <kusari/distributed/mpi_interop.h>
#include <kusari/kusari.h>

#include "allreduce_common.h"
#include "allreduce_settings.h"
#include "bench_util.h"

namespace {

using namespace kusari;
namespace dist = kusari::distributed;
namespace cost = kusari::distributed::cost;

// At most this many calls of a body are timed: where ranks outnumber the cores, the agreement after each
// call waits for the scheduler (milliseconds), and 100 ms of 8-byte exchanges would take minutes.
constexpr size_t kMaxSamples = 200;

// Whether every rank is `done`; an idle rank sleeps between polls, so that where ranks outnumber the
// cores it leaves its core to the ranks being timed instead of spinning in MPI's progress loop.
int all_done(int done, bool idle) {
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD, &request);
  if (!idle) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    return done;
  }
  for (int finished = 0;;) {
    MPI_Test(&request, &finished, MPI_STATUS_IGNORE);
    if (finished) return done;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// The slowest rank's median seconds of `body` over at least 5 calls and 100 ms (or kMaxSamples calls),
// every rank at once (the ranks agree after each call whether to go on, so that paired calls stay
// paired); an `idle` rank, whose body does nothing, leaves the count to the others.
template <class Body>
double median_seconds(Body body, bool idle = false) {
  std::vector<double> times;
  double spent = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int done = 0; !done;) {
    const auto start = std::chrono::steady_clock::now();
    body();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    spent += times.back();
    done = all_done(idle || (times.size() >= 5 && spent >= 0.1) || times.size() >= kMaxSamples, idle);
  }
  double t = ::bench::median(times);
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

// The link between this rank and `partner` (-1: this rank only waits), every pair at once: α and β from
// exchanges of 8 B ... 8 MiB that reuse their buffers, back to back, as the ring engine reuses its pooled
// chunk buffers; β_memory from exchanges of 256 KiB ... 4 MiB whose sends walk through 128 MB, as the ring's
// steps that start from or land in the owned slice do; β_streams from cost::kStreamsMessages such
// exchanges at once (as multi_color's rings keep their chunks in flight), per byte of all of them. The
// local passes (measure_local) and MPI's large collectives (measure_mpi_factors) pay for reading the
// gradients from memory themselves.
cost::Link measure_link(int partner) {
  constexpr int64_t kStream = int64_t{128} << 20;
  std::vector<char> out(static_cast<size_t>(kStream), 1), in(static_cast<size_t>(cost::kStreamsMessages) << 22, 0);
  // `flows` exchanges of `bytes` each in both directions at once, the sends from `offset` on (the
  // requests allocated once, outside the timed calls).
  std::vector<MPI_Request> requests(2 * static_cast<size_t>(cost::kStreamsMessages));
  const auto exchange = [&](int64_t bytes, int64_t offset, int flows) {
    if (partner < 0) return;
    for (int f = 0; f < flows; ++f) {
      MPI_Irecv(in.data() + f * bytes, static_cast<int>(bytes), MPI_BYTE, partner, f, MPI_COMM_WORLD, &requests[2 * f]);
      MPI_Isend(out.data() + offset + f * bytes, static_cast<int>(bytes), MPI_BYTE, partner, f, MPI_COMM_WORLD,
                &requests[2 * f + 1]);
    }
    MPI_Waitall(2 * flows, requests.data(), MPI_STATUSES_IGNORE);
  };
  // Exchanges of 256 KiB ... 4 MiB a flow; one timed body walks through all 128 MB, so every send reads
  // memory the caches do not hold. Timings per byte of all the flows.
  const auto streaming = [&](int flows) {
    std::vector<cost::Timing> timings;
    for (int64_t bytes = 256 << 10; bytes <= (4 << 20); bytes *= 2) {
      const int64_t count = kStream / (bytes * flows);
      const double t = median_seconds(
          [&] {
            for (int64_t i = 0; i < count; ++i) exchange(bytes, i * bytes * flows, flows);
          },
          partner < 0);
      timings.push_back({static_cast<double>(bytes * flows), t / static_cast<double>(count)});
    }
    return cost::fit_link(timings).beta;
  };
  // Each timed call makes min(64, max(1, 4 MiB / size)) exchanges back to back: a link shaped by a token
  // bucket (tc's tbf) refills its burst while the ranks agree between calls, and a lone exchange of up to
  // the burst's bytes would beat the wire, as no ring's back-to-back steps do.
  std::vector<cost::Timing> cached;
  for (int64_t bytes = 8; bytes <= (8 << 20); bytes *= 4) {
    const int64_t repeats = std::clamp<int64_t>((int64_t{4} << 20) / bytes, 1, 64);
    const double t = median_seconds(
        [&] {
          for (int64_t i = 0; i < repeats; ++i) exchange(bytes, 0, 1);
        },
        partner < 0);
    cached.push_back({static_cast<double>(bytes), t / static_cast<double>(repeats)});
  }
  cost::Link link = cost::fit_link(cached);
  link.beta_memory = std::max(link.beta, streaming(1));
  link.beta_streams = streaming(cost::kStreamsMessages);
  return link;
}

// Seconds per element of every local pass of `wire` on buffers larger than the caches (128 MB of float32,
// as ResNet-50's 102 MB of gradients), every rank at once.
cost::WireCosts measure_local(Dtype wire) {
  const int64_t n = int64_t{1} << 25;
  std::vector<float> values(static_cast<size_t>(n), 0.25f);
  std::vector<char> a(static_cast<size_t>(n) * 4), b(static_cast<size_t>(n) * 4);
  dist::wire::pack(values.data(), n, 1.0f, wire, b.data());
  const auto per_element = [&](auto pass) {
    std::vector<cost::Timing> timings;
    for (const int64_t m : {n / 4, n / 2, n}) timings.push_back({double(m), median_seconds([&] { pass(m); })});
    return cost::fit_per_element(timings);
  };
  cost::WireCosts costs;
  costs.pack = per_element([&](int64_t m) { dist::wire::pack(values.data(), m, 0.5f, wire, a.data()); });
  costs.accumulate = per_element([&](int64_t m) { dist::wire::accumulate(values.data(), m, 0.5f, wire, a.data()); });
  costs.add = per_element([&](int64_t m) { dist::wire::add(b.data(), wire, m, a.data()); });
  costs.unpack = per_element([&](int64_t m) { dist::wire::unpack(b.data(), wire, m, 0.5f, values.data()); });
  costs.max_abs = per_element([&](int64_t m) {
    volatile float sink = dist::wire::max_abs(values.data(), m);
    (void)sink;
  });
  return costs;
}

// The MPI factors (cost_model.h) of the collectives as kusari calls them (detail/collectives.h), on 64 MB
// of float32 (32 MB of float16 for the half-precision sum, both above from_bytes) over `comm`, the `span` the model sees it as:
// each factor makes the formula give the measured time (the formula is linear in it); span.mpi's choice of
// algorithms (its flags) is kept in what it returns. An `idle` rank calls nothing and takes the measuring
// ranks' factors.
cost::MpiFactors measure_mpi_factors(const cost::Cluster& cluster, cost::Span span, MPI_Comm comm, bool idle) {
  const int64_t n = int64_t{1} << 24;
  std::vector<float> data(static_cast<size_t>(n), 0.0f);
  const auto fit = [](double measured, auto formula) {
    const double at_one = formula(1.0), per_unit = formula(2.0) - at_one;
    return per_unit > 0 ? std::max(0.1, 1 + (measured - at_one) / per_unit) : 1.0;
  };
  const auto with = [&span](double cost::MpiFactors::*member, double factor) {
    cost::Span s = span;
    s.mpi.*member = factor;
    return s;
  };
  // An idle rank's node is not measured (--first-node-only): it only agrees on when the others stop.
  const auto seconds = [idle](auto collective) { return median_seconds([&] { if (!idle) collective(); }, idle); };
  cost::MpiFactors f = span.mpi;
  f.allreduce = fit(seconds([&] { dist::allreduce_elements(data.data(), n, Dtype::float32, dist::ReduceOp::sum, comm); }),
                    [&](double x) { return cost::mpi_allreduce_seconds(n, 4, true, with(&cost::MpiFactors::allreduce, x), cluster.float32.add); });
  f.allreduce_half = fit(seconds([&] { dist::allreduce_elements(data.data(), n, Dtype::float16, dist::ReduceOp::sum, comm); }),
                         [&](double x) { return cost::mpi_allreduce_seconds(n, 2, false, with(&cost::MpiFactors::allreduce_half, x), cluster.float16.add); });
  f.reduce = fit(seconds([&] { dist::reduce_elements(data.data(), n, Dtype::float32, dist::ReduceOp::sum, 0, comm); }),
                 [&](double x) { return cost::mpi_reduce_seconds(n, 4, true, with(&cost::MpiFactors::reduce, x), cluster.float32.add); });
  f.reduce_half = fit(seconds([&] { dist::reduce_elements(data.data(), n, Dtype::float16, dist::ReduceOp::sum, 0, comm); }),
                      [&](double x) { return cost::mpi_reduce_seconds(n, 2, false, with(&cost::MpiFactors::reduce_half, x), cluster.float16.add); });
  f.bcast = fit(seconds([&] { dist::bcast_bytes(data.data(), n * 4, 0, comm); }),
                [&](double x) { return cost::mpi_bcast_seconds(n, 4, with(&cost::MpiFactors::bcast, x)); });
  return f;
}

void run(int rounds, const std::string& save, int links_per_node, bool first_node_only) {
  dist::ensure_mpi_initialized();
  const dist::Communicator world = dist::create_communicator("ring");
  const dist::Topology& where = world.topology();
  if (!where.homogeneous) throw ValueError("allreduce_calibrate: expected nodes of one size, got nodes that differ");
  const int k = where.intra_size, rank = where.rank, size = where.size;
  cost::Cluster cluster;
  cluster.ranks = size;
  cluster.ranks_per_node = k;
  // Pretend nodes share one machine's memory: each of a node's k concurrent flows gets what it was
  // measured to get with the others running, i.e. k links. Nodes MPI found are machines whose flows to
  // other machines share their network links (one unless said): each link is measured with one flow.
  const int pretend_k = dist::ranks_per_node_from_env();
  cluster.links_per_node = links_per_node > 0 ? links_per_node : pretend_k > 0 ? k : 1;
  // Nodes are consecutive ranks; a rank's partner in the next (or previous) node has its intra rank.
  const int node = where.inter_rank;
  // With --first-node-only the other nodes' ranks sleep while the first node's are measured inside it
  // (nodes of one rank measure nothing inside; every rank then takes part in MPI's collectives).
  if (first_node_only && pretend_k > 0) {
    throw ValueError(cat("allreduce_calibrate: expected --first-node-only with nodes MPI found (hosts), got pretend nodes "
                         "of KUSARI_RANKS_PER_NODE=", pretend_k, ", whose flows are measured side by side as they share one machine"));
  }
  const bool idle_inside = first_node_only && k > 1 && node != 0;
  const int intra_partner =
      k > 1 && !idle_inside ? (where.intra_rank % 2 == 0 ? (where.intra_rank + 1 < k ? rank + 1 : -1) : rank - 1) : -1;
  const bool measures_inter = where.inter_size > 1 && where.intra_rank < cluster.links_per_node;
  const int inter_partner =
      measures_inter ? (node % 2 == 0 ? (node + 1 < where.inter_size ? rank + k : -1) : rank - k) : -1;
  cluster.intra = k > 1 ? measure_link(intra_partner) : cost::Link{};
  cluster.inter = where.inter_size > 1 ? measure_link(inter_partner) : cluster.intra;
  if (k == 1) cluster.intra = cluster.inter;
  cluster.float32 = measure_local(Dtype::float32);
  cluster.float16 = measure_local(Dtype::float16);
  cluster.bfloat16 = measure_local(Dtype::bfloat16);
  // MPI's collectives inside a node (on all ranks when every rank is its own node).
  MPI_Comm node_comm = MPI_COMM_WORLD;
  if (k > 1) MPI_Comm_split(MPI_COMM_WORLD, where.inter_rank, rank, &node_comm);
  // How this MPI runs its all-reduce, set before the factors are fitted to its formulas: Open MPI's
  // choices, or MPICH's composition by node on nodes it found itself (hosts), not on pretend ones (the
  // MPIs built from MPICH, which define MPICH_VERSION too, are taken to do the same).
#if defined(OPEN_MPI)
  cluster.mpi.open_mpi = true;
#elif defined(MPICH_VERSION)
  cluster.mpi.by_node = pretend_k == 0 && k > 1 && where.inter_size > 1;
#endif
  cost::Span node_span = cluster.all();
  if (k > 1) node_span.ranks = k;
  cluster.mpi = measure_mpi_factors(cluster, node_span, node_comm, idle_inside);
  if (k > 1) MPI_Comm_free(&node_comm);

  ::bench::GradientSet set(rank);
  std::vector<::bench::AllreduceSetting> settings = ::bench::allreduce_settings(set, cost::modelled_algorithms());
  ::bench::time_settings(settings, set, rounds);
  if (rank != 0) return;
  std::printf("# %d ranks in nodes of %d (%d network link%s each); median of %d rounds of ResNet-50's %lld gradient "
              "values%s%s\n", size, k, cluster.links_per_node, cluster.links_per_node == 1 ? "" : "s", rounds,
              static_cast<long long>(set.total), first_node_only && k > 1 ? "; inside a node measured on the first alone" : "",
              ::bench::mpi_choice_clause(cluster.mpi.by_node, cluster.mpi.open_mpi));
  const auto link_line = [](const char* name, const cost::Link& link) {
    const double memory = cost::memory_beta(link);
    std::printf("# link %s: alpha=%.2f us beta=%.4f ns/B (%.2f GB/s) beta_memory=%.4f ns/B (%.2f GB/s) "
                "beta_streams=%.4f ns/B (%.2f GB/s, %d messages at once)\n", name, link.alpha * 1e6, link.beta * 1e9,
                link.beta > 0 ? 1e-9 / link.beta : 0.0, memory * 1e9, memory > 0 ? 1e-9 / memory : 0.0,
                link.beta_streams * 1e9, link.beta_streams > 0 ? 1e-9 / link.beta_streams : 0.0, cost::kStreamsMessages);
  };
  link_line("intra", cluster.intra);
  if (where.inter_size > 1) link_line("inter", cluster.inter);
  for (const Dtype wire : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
    const cost::WireCosts& c = cluster.local(wire);
    std::printf("# local %s, ns/element: pack=%.3f accumulate=%.3f add=%.3f unpack=%.3f max_abs=%.3f\n",
                dtype_name(wire).c_str(), c.pack * 1e9, c.accumulate * 1e9, c.add * 1e9, c.unpack * 1e9, c.max_abs * 1e9);
  }
  std::printf("# MPI factors (x the links' beta): allreduce=%.2f allreduce_half=%.2f reduce=%.2f reduce_half=%.2f "
              "bcast=%.2f\n", cluster.mpi.allreduce, cluster.mpi.allreduce_half, cluster.mpi.reduce,
              cluster.mpi.reduce_half, cluster.mpi.bcast);
  const std::vector<int64_t> sizes = ::bench::resnet50_gradient_sizes();
  double worst = 0;
  for (const ::bench::AllreduceSetting& setting : settings) {
    const double predicted = cost::allreduce_seconds(cluster, setting.algorithm, setting.options, sizes) * 1e3;
    const double measured = ::bench::median(setting.times);
    const double error = (predicted - measured) / measured * 100;
    worst = std::max(worst, std::abs(error));
    std::printf("calibration %s: predicted=%.1f ms measured=%.1f ms error=%+.1f%%\n", setting.name.c_str(), predicted,
                measured, error);
  }
  std::printf("# largest |error|: %.1f%%\n", worst);
  if (!save.empty()) {
    cost::save_cluster(cluster, save);
    std::printf("# cluster written to %s\n", save.c_str());
  }
}

// The algorithm and options the model prices the setting `name` of allreduce_settings as: the MPI
// baselines as naive and flat without the size check, the others "<algorithm>_<wire dtype>".
std::pair<std::string, dist::CommunicatorOptions> priced_as(const std::string& name) {
  if (name == "mpi_per_tensor_float32") return {"naive", {.check_sizes = false}};
  if (name == "mpi_fused_float32") return {"flat", {.check_sizes = false}};
  const size_t cut = name.rfind('_');
  if (cut == std::string::npos) throw ValueError(cat("allreduce_calibrate --replay: no wire dtype in '", name, "'"));
  return {name.substr(0, cut), {.wire_dtype = dtype_from_name(name.substr(cut + 1))}};
}

// One launch read back from its output: the cluster it printed and its measured lines.
struct Launch {
  cost::Cluster cluster;
  bool has_inter = false;
  std::vector<std::pair<std::string, double>> measured;
};

// Re-predicts a launch's lines with this build's model; returns the largest |error| in percent.
double replay_launch(Launch launch) {
  if (!launch.has_inter) launch.cluster.inter = launch.cluster.intra;
  const std::vector<int64_t> sizes = ::bench::resnet50_gradient_sizes();
  double worst = 0;
  for (const auto& [name, ms] : launch.measured) {
    const auto [algorithm, options] = priced_as(name);
    const double predicted = cost::allreduce_seconds(launch.cluster, algorithm, options, sizes) * 1e3;
    const double error = (predicted - ms) / ms * 100;
    worst = std::max(worst, std::abs(error));
    std::printf("replay %s: predicted=%.1f ms measured=%.1f ms error=%+.1f%%\n", name.c_str(), predicted, ms, error);
  }
  std::printf("# largest |error|: %.1f%%\n", worst);
  return worst;
}

// Reads the launches an earlier run printed in `path` (several in one file each start at their "# N ranks"
// line) and re-predicts each one's lines. A launch from before --links-per-node measured every flow at
// once (k links per node); one from before β_memory has none (0: β), nor one from before β_streams; one
// from before bench::kMpiByNodeClause (or kOpenMpiClause) is priced with MPI composing by node where
// `by_node` says so (as Open MPI where `open_mpi` does).
void replay(const std::string& path, bool by_node, bool open_mpi) {
  std::ifstream in(path);
  if (!in) throw IOError(cat(path, ": cannot open the file"));
  std::vector<Launch> launches;
  for (std::string line; std::getline(in, line);) {
    const char* text = line.c_str();
    int ranks = 0, k = 0, links = 0;
    char which[16] = {}, name[96] = {};
    double a = 0, b = 0, m = 0, streams = 0, pack = 0, accumulate = 0, add = 0, unpack = 0, max_abs = 0;
    if (std::sscanf(text, "# %d ranks in nodes of %d (%d network link", &ranks, &k, &links) >= 2) {
      launches.emplace_back();
      launches.back().cluster.ranks = ranks;
      launches.back().cluster.ranks_per_node = k;
      launches.back().cluster.links_per_node = links > 0 ? links : k;
      launches.back().cluster.mpi.by_node = by_node || line.find(::bench::kMpiByNodeClause) != std::string::npos;
      launches.back().cluster.mpi.open_mpi = open_mpi || line.find(::bench::kOpenMpiClause) != std::string::npos;
      continue;
    }
    if (launches.empty()) continue;
    Launch& launch = launches.back();
    cost::MpiFactors& f = launch.cluster.mpi;
    if (std::sscanf(text, "# link %15s alpha=%lf us beta=%lf ns/B (%*f GB/s) beta_memory=%lf ns/B (%*f GB/s) "
                    "beta_streams=%lf", which, &a, &b, &m, &streams) >= 3) {
      const cost::Link link{a * 1e-6, b * 1e-9, m * 1e-9, streams * 1e-9};
      if (std::string(which) == "inter:") {
        launch.cluster.inter = link;
        launch.has_inter = true;
      } else {
        launch.cluster.intra = link;
      }
    } else if (std::sscanf(text, "# local %15[^,], ns/element: pack=%lf accumulate=%lf add=%lf unpack=%lf max_abs=%lf",
                           which, &pack, &accumulate, &add, &unpack, &max_abs) == 6) {
      const cost::WireCosts costs{pack * 1e-9, accumulate * 1e-9, add * 1e-9, unpack * 1e-9, max_abs * 1e-9};
      const Dtype wire = dtype_from_name(which);
      cost::Cluster& c = launch.cluster;
      (wire == Dtype::float32 ? c.float32 : wire == Dtype::float16 ? c.float16 : c.bfloat16) = costs;
    } else if (std::sscanf(text, "# MPI factors (x the links' beta): allreduce=%lf allreduce_half=%lf reduce=%lf "
                           "reduce_half=%lf bcast=%lf", &f.allreduce, &f.allreduce_half, &f.reduce, &f.reduce_half,
                           &f.bcast) == 5) {
    } else if (std::sscanf(text, "calibration %95[^:]: predicted=%*f ms measured=%lf ms", name, &m) == 2) {
      launch.measured.emplace_back(name, m);
    }
  }
  if (launches.empty() || launches.front().measured.empty()) {
    throw ValueError(cat(path, ": expected allreduce_calibrate's output, found no calibration line"));
  }
  for (const Launch& launch : launches) replay_launch(launch);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::string save;
  CLI::App app{"Calibrates the all-reduce cost model here and checks it against bench/allreduce, under mpiexec.",
               "allreduce_calibrate"};
  app.add_option("--rounds", rounds, "timed rounds per measurement")
      ->check(kusari::flags::integer_between(1, 1000))
      ->capture_default_str();
  app.add_option("--save", save, "write the measured cluster for predict_seeds --recommend --cluster FILE");
  int links_per_node = 0;
  app.add_option("--links-per-node", links_per_node,
                 "network links a node's flows to other nodes share (0: one, or k for KUSARI_RANKS_PER_NODE's "
                 "pretend nodes of k, which share one machine's memory)")
      ->check(kusari::flags::nonnegative_integer())
      ->capture_default_str();
  bool first_node_only = false;
  app.add_flag("--first-node-only", first_node_only,
               "measure the link and MPI's collectives inside a node on the first node alone, the others' ranks "
               "sleeping (for hosts that share one machine's cores, as scripts/hosts.sh's: a pair on one core "
               "would time the scheduler)");
  std::string replayed;
  CLI::Option* replaying = app.add_option("--replay", replayed, "re-predict the lines of an earlier run's output FILE with this build's model "
                                       "(no MPI run)");
  bool by_node = false;
  app.add_flag("--mpi-by-node", by_node,
               "with --replay: price MPI's all-reduce composed by node, as MPICH does on hosts (for launches printed "
               "before their first line said so)")
      ->needs(replaying);
  bool open_mpi = false;
  app.add_flag("--open-mpi", open_mpi,
               "with --replay: price MPI's all-reduce as Open MPI chooses its algorithms (for launches of the Open "
               "MPI build printed before their first line said so)")
      ->needs(replaying)
      ->excludes("--mpi-by-node");
  kusari::bench::parse_or_exit(app, argc, argv);
  if (!replayed.empty()) {
    try {
      replay(replayed, by_node, open_mpi);
    } catch (const kusari::Error& e) {
      std::fprintf(stderr, "allreduce_calibrate: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  dist::abort_on_exception([&] { run(rounds, save, links_per_node, first_node_only); });
  return 0;
}

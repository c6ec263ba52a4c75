// The papers' clusters through kusari's all-reduce cost model (kusari/distributed/cost_model.h): for each
// paper's setting, the predicted all-reduce time per iteration, iteration, epoch and total time and the
// scaling efficiency, beside the paper's reported figure, one line each:
//   predict <paper> <what>: predicted=X reported=Y error=E%
// (the reported iteration and epoch times are derived from the reported total), every input printed with
// its source first; then the gaps the papers report between all-reduce algorithms.
//   build/bench/predict_seeds
// --recommend ranks the algorithms, bucket sizes and wire dtypes for a cluster by predicted exposed time:
//   build/bench/predict_seeds --recommend --ranks P --ranks-per-node K --model resnet50|alexnet
//       [--cluster FILE (from allreduce_calibrate --save)] [--intra-alpha-us A --intra-gbps B --inter-alpha-us A
//        --inter-gbps B --links L] [--mpi-by-node | --open-mpi] [--step-ms T] [--top N]

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <kusari/distributed/cost_fit.h>
#include <kusari/distributed/cost_model.h>

#include "allreduce_common.h"
#include "bench_util.h"
#include "paper_clusters.h"

namespace {

using namespace kusari;
namespace cost = kusari::distributed::cost;
using ::bench::Input;
using ::bench::PaperSetting;

constexpr double kImageNetImages = 1281167;  // ILSVRC-2012 training images

// GPU-side local costs from its memory bandwidth: each pass reads and writes its bytes once (a float32
// value is 4 bytes, a wire value w).
cost::WireCosts gpu_costs(double bytes_per_second, int w) {
  const double b = 1 / bytes_per_second;
  return {(4.0 + w) * b, (4.0 + 2 * w) * b, 3.0 * w * b, (4.0 + w) * b, 4.0 * b};
}

// A cluster of `gpus` in nodes of `per_node` from its links (seconds, bytes per second) and GPU bandwidth.
cost::Cluster gpu_cluster(int gpus, int per_node, int links, double intra_alpha, double intra_bandwidth,
                          double inter_alpha, double inter_bandwidth, double memory_bandwidth) {
  cost::Cluster c;
  c.ranks = gpus;
  c.ranks_per_node = per_node;
  c.links_per_node = links;
  c.intra = {intra_alpha, 1 / intra_bandwidth};
  c.inter = {inter_alpha, 1 / inter_bandwidth};
  c.float32 = gpu_costs(memory_bandwidth, 4);
  c.float16 = gpu_costs(memory_bandwidth, 2);
  c.bfloat16 = gpu_costs(memory_bandwidth, 2);
  return c;
}

// Sources shared by several settings.
const char* kTfBenchmarks =
    "TensorFlow benchmarks (tensorflow.org/performance/benchmarks, May 2017), one P100 of a DGX-1, synthetic data";
const char* kP40Derived =
    "no public training benchmark of the P40 found: the P100's TensorFlow figure scaled by fp32 peak, 11.8 "
    "TFLOP/s (Dell EMC HPC lab, P40 specification table) over 10.6 TFLOP/s (NVIDIA P100 SXM2 datasheet)";
const char* kAssumedLatency = "assumed: per-message latency of NCCL or MPI over InfiniBand/RoCE, a few microseconds";

// A setting's shape; the rest is filled in by settings().
PaperSetting setting(const char* paper, const char* model, int gpus, int per_node, int batch, int epochs,
                     double images_per_second) {
  PaperSetting s;
  s.paper = paper;
  s.model = model;
  s.gpus = gpus;
  s.gpus_per_node = per_node;
  s.per_gpu_batch = batch;
  s.epochs = epochs;
  s.images_per_second = images_per_second;
  return s;
}

std::vector<PaperSetting> settings() {
  std::vector<PaperSetting> out;
  {
    PaperSetting s = setting("akiba2017", "resnet50", 1024, 8, 32, 90, 195);
    s.cluster = gpu_cluster(1024, 8, 2, 5e-6, 12e9, 5e-6, 6.8e9, 732e9);
    s.algorithm = "ring";  // ChainerMN's pure_nccl: one NCCL ring all-reduce of every gradient, float16
    s.wire = Dtype::float16;
    s.overlap = false;  // ChainerMN (2017) all-reduced after backward
    s.inputs = {{"P100 ResNet-50 img/s at batch 32", 195, kTfBenchmarks},
                {"GPUs per node", 8, "Akiba et al. 2017: MN-1, 128 nodes of 8 P100"},
                {"inter-node GB/s per link", 6.8, "InfiniBand FDR 4X, 56 Gb/s (Akiba et al. 2017)"},
                {"links per node", 2, "assumed: two FDR HCAs per MN-1 node"},
                {"intra-node GB/s", 12, "assumed: PCIe 3.0 x16 between the P100s of a node"},
                {"latency us", 5, kAssumedLatency},
                {"GPU memory GB/s", 732, "NVIDIA P100 datasheet (HBM2)"}};
    s.reported_total_seconds = 897.9;
    s.reported_efficiency = 0.70;
    s.efficiency_against = "";  // against 1 GPU
    out.push_back(s);
  }
  {
    PaperSetting s = setting("jia2018", "resnet50", 2048, 8, 32, 90, 195 * 11.8 / 10.6);
    s.cluster = gpu_cluster(2048, 8, 1, 5e-6, 12e9, 5e-6, 12.5e9, 346e9);
    s.algorithm = "hybrid";  // tensor fusion, hierarchical below the threshold, ring above
    s.wire = Dtype::float16;
    s.bucket_bytes = int64_t{32} << 20;
    s.overlap = true;
    s.inputs = {{"P40 ResNet-50 img/s at batch 32", s.images_per_second, kP40Derived},
                {"GPUs per node", 8, "assumed: 8 P40 per node"},
                {"inter-node GB/s per link", 12.5, "100 Gb RoCEv2 with GPUDirect RDMA (Jia et al. 2018)"},
                {"links per node", 1, "assumed: one NIC per node"},
                {"intra-node GB/s", 12, "assumed: PCIe 3.0 x16"},
                {"latency us", 5, kAssumedLatency},
                {"fusion bucket MiB", 32, "assumed: Jia et al. do not state θ"},
                {"GPU memory GB/s", 346, "NVIDIA P40 datasheet (GDDR5)"}};
    s.reported_total_seconds = 6.6 * 60;
    out.push_back(s);
  }
  {
    PaperSetting s = setting("jia2018", "alexnet", 1024, 8, 64, 95, 2987 * 11.8 / 10.6);
    s.cluster = gpu_cluster(1024, 8, 1, 5e-6, 12e9, 5e-6, 12.5e9, 346e9);
    s.algorithm = "hybrid";
    s.wire = Dtype::float16;
    s.bucket_bytes = int64_t{32} << 20;
    s.overlap = true;
    s.inputs = {{"P40 AlexNet img/s (P100 at batch 512, scaled)", s.images_per_second, kP40Derived},
                {"GPUs per node", 8, "assumed: 8 P40 per node"},
                {"inter-node GB/s per link", 12.5, "100 Gb RoCEv2 (Jia et al. 2018)"},
                {"links per node", 1, "assumed: one NIC per node"},
                {"latency us", 5, kAssumedLatency}};
    s.reported_total_seconds = 4 * 60;
    out.push_back(s);
  }
  {
    PaperSetting s = setting("kumar2017", "resnet50", 256, 4, 32, 90, 195);
    s.cluster = gpu_cluster(256, 4, 2, 5e-6, 40e9, 5e-6, 12.5e9, 732e9);
    s.algorithm = "multi_color";
    s.overlap = false;  // assumed: Torch's data parallelism all-reduced after backward
    s.inputs = {{"P100 ResNet-50 img/s at batch 32", 195, kTfBenchmarks},
                {"GPUs per node", 4, "Kumar et al. 2017: 64 POWER8 Minsky nodes of 4 P100"},
                {"batch per GPU", 32, "assumed: the batch is not stated (8192 in all)"},
                {"inter-node GB/s per link", 12.5, "assumed: InfiniBand EDR, 100 Gb/s"},
                {"links per node", 2, "assumed: two EDR ports per Minsky node"},
                {"intra-node GB/s", 40, "assumed: NVLink 1.0 between the P100s of a Minsky node"},
                {"latency us", 5, kAssumedLatency}};
    s.reported_total_seconds = 48 * 60;
    out.push_back(s);
  }
  {
    PaperSetting s = setting("goyal2017", "resnet50", 256, 8, 32, 90, 195);
    s.cluster = gpu_cluster(256, 8, 1, 5e-6, 40e9, 5e-6, 6.25e9, 732e9);
    s.algorithm = "hierarchical";  // Gloo: reduce within the server over NVLink, then across servers
    s.overlap = true;
    s.bucket_bytes = int64_t{25} << 20;
    s.inputs = {{"P100 ResNet-50 img/s at batch 32", 195, kTfBenchmarks},
                {"GPUs per node", 8, "Goyal et al. 2017: 32 Big Basin servers of 8 P100"},
                {"inter-node GB/s per link", 6.25, "50 Gb Ethernet (Goyal et al. 2017)"},
                {"links per node", 1, "assumed: one 50 Gb port per server"},
                {"intra-node GB/s", 40, "assumed: NVLink between the P100s of a Big Basin"},
                {"latency us", 5, kAssumedLatency}};
    s.reported_total_seconds = 3600;
    s.reported_efficiency = 0.90;
    s.efficiency_against = "1_node";
    out.push_back(s);
  }
  return out;
}

std::vector<::bench::LayerShape> layers_of(const std::string& model) {
  if (model == "resnet50") return ::bench::resnet50_layers();
  if (model == "alexnet") return ::bench::alexnet_layers();
  throw ValueError(cat("predict_seeds: expected the model resnet50 or alexnet, got '", model, "'"));
}

// One iteration of a setting: compute, then the all-reduce of the gradients with the overlap it has.
struct Iteration {
  double compute = 0;    // forward and backward on one GPU
  double allreduce = 0;  // every bucket's all-reduce
  double exposed = 0;    // what the all-reduce adds to the iteration
  double seconds() const { return compute + exposed; }
};

Iteration predict(const PaperSetting& s, const std::string& algorithm, int64_t bucket_bytes, Dtype wire, bool overlap) {
  Iteration it;
  it.compute = s.per_gpu_batch / s.images_per_second;
  distributed::CommunicatorOptions options;
  options.wire_dtype = wire;
  const auto layers = ::bench::backward_costs(layers_of(s.model), it.compute);
  const int64_t bucket = bucket_bytes > 0 ? bucket_bytes : int64_t{1} << 40;
  const cost::StepPrediction step = cost::predict_step(s.cluster, algorithm, options, layers, bucket, overlap);
  it.allreduce = step.allreduce_seconds;
  it.exposed = step.exposed_seconds;
  return it;
}

// "predicted=X reported=Y error=E%" or "predicted=X reported=-" (units in the names).
void line(const std::string& paper, const std::string& what, double predicted, double reported, const char* unit) {
  if (reported > 0) {
    std::printf("predict %s %s: predicted=%.3g%s reported=%.3g%s error=%+.1f%%\n", paper.c_str(), what.c_str(), predicted,
                unit, reported, unit, (predicted - reported) / reported * 100);
  } else {
    std::printf("predict %s %s: predicted=%.3g%s reported=-\n", paper.c_str(), what.c_str(), predicted, unit);
  }
}

void papers() {
  for (const PaperSetting& s : settings()) {
    const std::string name = s.paper + "_" + s.model;
    std::printf("# %s: %d GPUs in nodes of %d, batch %d per GPU (%d in all), %d epochs, %s all-reduce with a %s wire%s%s\n",
                name.c_str(), s.gpus, s.gpus_per_node, s.per_gpu_batch, s.per_gpu_batch * s.gpus, s.epochs,
                s.algorithm.c_str(), dtype_name(s.wire).c_str(), s.overlap ? ", overlapped with backward" : ", after backward",
                s.bucket_bytes > 0 ? cat(", buckets of ", s.bucket_bytes >> 20, " MiB").c_str() : ", one bucket");
    for (const Input& input : s.inputs) {
      std::printf("#   input %s = %g (%s)\n", input.name.c_str(), input.value, input.source.c_str());
    }
    const Iteration it = predict(s, s.algorithm, s.bucket_bytes, s.wire, s.overlap);
    const double iterations = std::ceil(kImageNetImages / (double(s.per_gpu_batch) * s.gpus));
    const double reported_iteration = s.reported_total_seconds / (iterations * s.epochs);
    line(name, "allreduce_per_iteration", it.allreduce * 1e3, 0, " ms");
    line(name, "iteration", it.seconds() * 1e3, reported_iteration * 1e3, " ms");
    line(name, "epoch", it.seconds() * iterations, reported_iteration * iterations, " s");
    line(name, "total", it.seconds() * iterations * s.epochs, s.reported_total_seconds, " s");
    // Against one GPU: compute over the iteration; against one node: that node's iteration over this one.
    double efficiency = it.compute / it.seconds();
    if (!s.efficiency_against.empty()) {
      PaperSetting node = s;
      node.gpus = node.cluster.ranks = s.gpus_per_node;
      efficiency = predict(node, s.algorithm, s.bucket_bytes, s.wire, s.overlap).seconds() / it.seconds();
    }
    line(name, "scaling_efficiency_vs_" + (s.efficiency_against.empty() ? std::string("1_gpu") : s.efficiency_against),
         efficiency * 100, s.reported_efficiency * 100, "%");
    const double error = std::abs(it.seconds() - reported_iteration) / reported_iteration;
    if (error > 0.25) {
      const double compute_share = it.compute / it.seconds();
      std::printf("#   missed by %.0f%%: likely cause %s (compute is %.0f%% of the predicted iteration)\n", error * 100,
                  compute_share > 0.5 ? "the GPU throughput input (the benchmark's framework, batch and precision "
                                        "differ from the paper's; data loading and evaluation are not modelled)"
                                      : "the link inputs (latency, bandwidth or links per node)",
                  compute_share * 100);
    }
  }
  // The gaps the papers report between all-reduce algorithms.
  for (const PaperSetting& base : settings()) {
    if (base.paper == "jia2018") {
      PaperSetting s = base;
      s.gpus = 1024;
      s.cluster.ranks = 1024;
      const Iteration optimized = predict(s, s.algorithm, s.bucket_bytes, s.wire, true);
      // "NCCL-based": a plain ring per tensor in float32, no fusion.
      const Iteration plain = predict(s, "ring", 1, Dtype::float32, true);
      const double reported = s.model == "resnet50" ? 11 : 3;
      line(s.paper + "_" + s.model, "speedup_over_plain_nccl_ring_at_1024",
           plain.seconds() / optimized.seconds(), reported, "x");
    }
    if (base.paper == "kumar2017") {
      const Iteration colored = predict(base, "multi_color", base.bucket_bytes, base.wire, base.overlap);
      const Iteration ring = predict(base, "ring", base.bucket_bytes, base.wire, base.overlap);
      line(base.paper + "_" + base.model, "epoch_time_cut_by_multi_color_vs_ring",
           (1 - colored.seconds() / ring.seconds()) * 100, 16.5, "%");
      std::printf("#   reported: 15-18%% (GoogLeNet and ResNet-50); their baseline's algorithm is assumed a single ring\n");
    }
  }
}

// --recommend's flags, with the defaults --help shows.
struct RecommendFlags {
  std::string cluster;  // a file from allreduce_calibrate --save, instead of the link flags
  int ranks = 0;
  int ranks_per_node = 1;
  std::string model = "resnet50";
  double intra_alpha_us = 1, intra_gbps = 10, inter_alpha_us = 5, inter_gbps = 12.5;
  int links = 1;
  bool mpi_by_node = false;  // MPI composes its all-reduce by node (cost::MpiFactors::by_node)
  bool open_mpi = false;     // MPI is Open MPI (cost::MpiFactors::open_mpi)
  double step_ms = 150;
  int top = 10;
};

// --recommend: the candidates for a cluster, best first.
int recommend(const RecommendFlags& flags) {
  cost::Cluster cluster;
  if (!flags.cluster.empty()) {
    cluster = cost::load_cluster(flags.cluster);
  } else {
    cluster.intra = {flags.intra_alpha_us * 1e-6, 1e-9 / flags.intra_gbps};
    cluster.inter = {flags.inter_alpha_us * 1e-6, 1e-9 / flags.inter_gbps};
    cluster.links_per_node = flags.links;
  }
  // The flags add to a file's (one saved before it had them says neither).
  cluster.mpi.by_node = cluster.mpi.by_node || flags.mpi_by_node;
  cluster.mpi.open_mpi = cluster.mpi.open_mpi || flags.open_mpi;
  cluster.ranks = flags.ranks;
  cluster.ranks_per_node = flags.ranks_per_node;
  cluster.check();
  const double step = flags.step_ms * 1e-3;
  const auto layers = ::bench::backward_costs(layers_of(flags.model), step);
  const std::vector<int64_t> buckets{int64_t{1} << 20, int64_t{4} << 20, int64_t{25} << 20, int64_t{100} << 20};
  const auto ranked = cost::recommend(cluster, layers, buckets, {Dtype::float32, Dtype::float16, Dtype::bfloat16});
  std::printf("# %s on %d ranks in nodes of %d (%d links each): intra %.2f us %.2f GB/s, inter %.2f us %.2f GB/s; "
              "forward+backward %.1f ms%s\n", flags.model.c_str(), cluster.ranks, cluster.ranks_per_node,
              cluster.links_per_node, cluster.intra.alpha * 1e6, 1e-9 / cluster.intra.beta, cluster.inter.alpha * 1e6,
              1e-9 / cluster.inter.beta, step * 1e3, ::bench::mpi_choice_clause(cluster.mpi.by_node, cluster.mpi.open_mpi));
  for (int i = 0; i < flags.top && i < static_cast<int>(ranked.size()); ++i) {
    const cost::Recommendation& r = ranked[static_cast<size_t>(i)];
    std::printf("recommend %d: algorithm=%s bucket=%lld MiB wire=%s exposed=%.2f ms allreduce=%.2f ms buckets=%d\n",
                i + 1, r.algorithm.c_str(), static_cast<long long>(r.bucket_bytes >> 20), dtype_name(r.wire_dtype).c_str(),
                r.step.exposed_seconds * 1e3, r.step.allreduce_seconds * 1e3, r.step.buckets);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace flags_ = kusari::flags;
  RecommendFlags flags;
  CLI::App app{"The papers' clusters through the all-reduce cost model; --recommend ranks the choices for yours.",
               "predict_seeds"};
  CLI::Option* recommending =
      app.add_flag("--recommend")->description("rank algorithms, buckets and wire dtypes for a cluster");
  CLI::Option* cluster = app.add_option("--cluster", flags.cluster, "the links measured by allreduce_calibrate --save");
  const auto add = [&](const char* name, auto& value, const char* what, const CLI::Validator& check) {
    return app.add_option(name, value, what)->check(check)->capture_default_str()->needs(recommending);
  };
  add("--ranks", flags.ranks, "ranks of the run (required)", flags_::positive_integer());
  add("--ranks-per-node", flags.ranks_per_node, "ranks per node", flags_::positive_integer());
  add("--model", flags.model, "the gradients' layers", flags_::one_of({"resnet50", "alexnet"}));
  add("--step-ms", flags.step_ms, "forward and backward of one step, ms", flags_::positive_number());
  add("--top", flags.top, "candidates printed", flags_::positive_integer());
  const std::vector<CLI::Option*> links{
      add("--intra-alpha-us", flags.intra_alpha_us, "latency inside a node, us", flags_::nonnegative_number()),
      add("--intra-gbps", flags.intra_gbps, "bandwidth inside a node, GB/s", flags_::positive_number()),
      add("--inter-alpha-us", flags.inter_alpha_us, "latency between nodes, us", flags_::nonnegative_number()),
      add("--inter-gbps", flags.inter_gbps, "bandwidth between nodes per link, GB/s", flags_::positive_number()),
      add("--links", flags.links, "network links per node", flags_::positive_integer())};
  for (CLI::Option* link : links) link->excludes(cluster);
  app.add_flag("--mpi-by-node", flags.mpi_by_node,
               "MPI composes its all-reduce by node: a reduce in each node, the all-reduce between the nodes' first "
               "ranks, a broadcast (MPICH on nodes of several ranks; also for a --cluster file saved before it said so)")
      ->needs(recommending);
  app.add_flag("--open-mpi", flags.open_mpi,
               "MPI is Open MPI: its all-reduce chooses its algorithm as Open MPI's tuned component does (also for a "
               "--cluster file saved before it said so)")
      ->needs(recommending)
      ->excludes("--mpi-by-node");
  cluster->needs(recommending);
  kusari::bench::parse_or_exit(app, argc, argv);
  try {
    if (!*recommending) {
      papers();
      return 0;
    }
    if (flags.ranks == 0) {
      std::fprintf(stderr, "predict_seeds --recommend: expected --ranks P, the ranks of the run\n");
      return 2;
    }
    return recommend(flags);
  } catch (const ValueError& e) {  // the cluster's shape (ranks per node not dividing the ranks)
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // the cluster file
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

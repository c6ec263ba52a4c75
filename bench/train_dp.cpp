// Data-parallel training throughput: ResNet-20 (1 input channel, 10 classes, 28x28 images) at batch 64
// per rank, MomentumSGD made multi-node with the default options, under `mpiexec -n P`. Rank 0 prints
// "resnet20_dp_b64: X ms/step, Y samples/s overlap=S/B exposed_ms=W" with Y counting every rank's
// samples, S of the step's B gradient buckets starting their all-reduce while backward still ran, and W
// ms per step of communication that backward did not hide (means over the timed steps; see
// distributed::last_overlap).
// Flags: --threads N (per rank, default 1), --warmup N (default 5), --steps N (default 20),
// --bucket-kb N, --double-buffering 0|1 and --overlap 0|1 (the MultiNodeOptions, defaults 25600, 0 and 1;
// ResNet-20's 1.1 MB of gradients fit one default bucket, which starts with backward's last gradient,
// so it counts as started in backward but hides next to nothing: exposed_ms tells).

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <kusari/kusari.h>

#include "bench_util.h"

using namespace kusari;

namespace {

constexpr int64_t kBatch = 64;

// The command line (the flags at the top of this file), read by every rank alike.
struct Flags {
  int threads = 1;
  int warmup = 5;
  int steps = 20;
  int bucket_kb = 25600;
  bool double_buffering = false;
  bool overlap = true;
};

Flags parse_flags(int argc, char** argv) {
  Flags f;
  CLI::App app{"Data-parallel ResNet-20 training steps under mpiexec; rank 0 prints the line."};
  app.add_option("--threads", f.threads, "threads per rank")->check(flags::positive_integer())->capture_default_str();
  app.add_option("--warmup", f.warmup, "untimed steps first")->check(flags::nonnegative_integer())
      ->capture_default_str();
  app.add_option("--steps", f.steps, "timed steps")->check(flags::positive_integer())->capture_default_str();
  app.add_option("--bucket-kb", f.bucket_kb, "gradient bucket size in KiB")->check(flags::positive_integer())
      ->capture_default_str();
  app.add_option("--double-buffering", f.double_buffering, "MultiNodeOptions::double_buffering")->capture_default_str();
  app.add_option("--overlap", f.overlap, "MultiNodeOptions::overlap")->capture_default_str();
  kusari::bench::parse_or_exit(app, argc, argv);
  return f;
}

// kBatch int32 labels in [0, 10), different on every rank.
Array random_labels(uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int32_t> draw(0, 9);
  std::vector<int32_t> labels(kBatch);
  for (int32_t& label : labels) label = draw(engine);
  return Array::from_vector(labels, {kBatch});
}

}  // namespace

int main(int argc, char** argv) {
  distributed::abort_on_exception([&] {
    const Flags flags = parse_flags(argc, argv);
    set_num_threads(flags.threads);
    const int warmup = flags.warmup, steps = flags.steps;
    const distributed::Communicator comm = distributed::create_communicator();
    const auto rank = static_cast<uint64_t>(comm.rank());
    auto model = std::make_shared<L::models::ResNet>(20, 1, 10);
    const distributed::MultiNodeOptions options{.bucket_bytes = int64_t{flags.bucket_kb} << 10,
                                                .double_buffering = flags.double_buffering,
                                                .overlap = flags.overlap};
    auto optimizer = distributed::create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.01, 0.9),
                                                              comm, options);
    optimizer->setup(model);
    const Variable x(Array::normal({kBatch, 1, 28, 28}, 0, 1, 100 + rank), false);
    const Variable t(random_labels(200 + rank), false);
    int taken = 0;
    distributed::OverlapReport timed;  // sums over the timed steps
    const auto step = [&] {
      optimizer->update([&] { return F::softmax_cross_entropy(model->forward(x), t); });
      if (++taken <= warmup) return;
      const distributed::OverlapReport last = distributed::last_overlap(*optimizer);
      timed.buckets += last.buckets;
      timed.started_in_backward += last.started_in_backward;
      timed.exposed_seconds += last.exposed_seconds;
    };
    const auto overlap = [&] {
      const double n = std::max(1, taken - warmup);
      return cat(" overlap=", std::lround(timed.started_in_backward / n), "/", std::lround(timed.buckets / n),
                 " exposed_ms=", std::lround(1000 * timed.exposed_seconds / n * 100) / 100.0);
    };
    // Every rank runs the same number of steps (each one ends in collectives); rank 0 times them.
    if (comm.rank() == 0) {
      bench::time_steps("resnet20_dp_b64", kBatch * comm.size(), step, warmup, steps, 0.0, overlap);
    } else {
      for (int i = 0; i < warmup + steps; ++i) step();
    }
  });
}

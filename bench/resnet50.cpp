// ResNet-50 on (16, 3, 224, 224) with 1000 classes: one MomentumSGD training step per iteration, and the
// process's peak resident memory (run it as its own process so the peak is this workload's).

#include "train_bench.h"

using namespace kusari;

int main(int argc, char** argv) {
  const bench::Options options = bench::setup(argc, argv, {.warmup = 1, .min_steps = 2, .seconds = 0.0});
  const int64_t batch = 16;
  auto model = std::make_shared<L::models::ResNet50>(1000);
  bench::train_benchmark("resnet50_b16", model, Array::normal({batch, 3, 224, 224}, 0, 1, 1),
                         bench::random_labels(batch, 1000, 2), options, bench::peak_rss_suffix);
}

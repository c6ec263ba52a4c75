// ResNet-50 on (B, 3, 224, 224) with 1000 classes (B = 16 on the CPU, 256 on a GPU, or --batch): one
// MomentumSGD training step per iteration, and the process's peak resident memory, or on a GPU the
// peak device memory (run it as its own process so the peak is this workload's).

#include "train_bench.h"

using namespace kusari;

int main(int argc, char** argv) {
  const bench::Options options = bench::setup(argc, argv, {.warmup = 1, .min_steps = 2, .seconds = 0.0});
  const bool on_gpu = Device::parse(options.device).type == DeviceType::cuda;
  const int64_t batch = options.batch > 0 ? options.batch : on_gpu ? 256 : 16;
  auto model = std::make_shared<L::models::ResNet50>(1000);
  bench::train_benchmark("resnet50_b" + std::to_string(batch), model, Array::normal({batch, 3, 224, 224}, 0, 1, 1),
                         bench::random_labels(batch, 1000, 2), options,
                         on_gpu ? bench::Suffix(bench::peak_device_suffix) : bench::Suffix(bench::peak_rss_suffix));
}

// What the CUDA caching allocator holds for a training step: the device-memory requests of ResNet-50
// (B, 3, 224, 224) or ResNet-20 (B, 1, 28, 28) steps, recorded on loopback:0 (which serves the arrays a
// GPU's step asks for, computed on the CPU) from the model's creation on, replayed through the cache on
// one stream, once with a device allocation for each large block and once with the cache's expandable
// segments. Prints the steps' timing line on loopback, then for each way
// "name: requested_peak_mb=N held_peak_mb=N held_over_requested=R device_calls=N".

#include <cstdio>

#include <kusari/kernels/cuda/detail/allocation_replay.h>

#include "train_bench.h"

using namespace kusari;

int main(int argc, char** argv) {
  std::string model_name = "resnet50";
  const bench::MoreFlags more = [&](CLI::App& app) {
    app.add_option("--model", model_name, "the network whose steps are recorded")
        ->check(CLI::IsMember({"resnet50", "resnet20"}))
        ->capture_default_str();
  };
  bench::Options options = bench::setup(argc, argv, {.warmup = 1, .min_steps = 2, .seconds = 0.0}, more);
  options.device = "loopback:0";
  const bool resnet50 = model_name == "resnet50";
  const int64_t batch = options.batch > 0 ? options.batch : resnet50 ? 32 : 128;
  const std::string name = model_name + "_b" + std::to_string(batch);

  Allocator& loopback = allocator_for(DeviceType::loopback);
  kernels::cuda::AllocationRecorder recorder(loopback);
  register_allocator(DeviceType::loopback, &recorder);
  // The loopback device's own allocator back however the steps end (the recorder goes before it).
  const std::unique_ptr<Allocator, void (*)(Allocator*)> restore(
      &loopback, [](Allocator* a) { register_allocator(DeviceType::loopback, a); });
  {
    std::shared_ptr<links::Link> model;
    if (resnet50) {
      model = std::make_shared<L::models::ResNet50>(1000);
    } else {
      model = std::make_shared<L::models::ResNet>(20, 1, 10);
    }
    const Array x = resnet50 ? Array::normal({batch, 3, 224, 224}, 0, 1, 1) : Array::normal({batch, 1, 28, 28}, 0, 1, 1);
    bench::train_benchmark(name, model, x, bench::random_labels(batch, resnet50 ? 1000 : 10, 2), options);
  }

  std::string full_name = name + (options.dtype == "float32" ? "" : "_" + options.dtype);
  if (options.channels_last) full_name += "_channels_last";
  for (const bool expandable : {false, true}) {
    const kernels::cuda::ReplayResult replay = kernels::cuda::replay_through_cache(recorder.events(), expandable);
    if (!replay.disjoint) {
      std::fprintf(stderr, "device_cache: the cache gave overlapping blocks to live requests\n");
      return 1;
    }
    std::printf("%s_%s: requested_peak_mb=%zu held_peak_mb=%zu held_over_requested=%.3f device_calls=%lld\n",
                full_name.c_str(), expandable ? "expandable" : "segments", replay.peak_requested >> 20,
                replay.peak_held >> 20,
                static_cast<double>(replay.peak_held) / static_cast<double>(replay.peak_requested),
                static_cast<long long>(replay.device_calls));
  }
}

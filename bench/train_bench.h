#pragma once
// The kusari side of the training benchmarks: one step is forward, softmax cross-entropy, backward and
// a MomentumSGD update (lr 0.01, momentum 0.9) through kusari::optimizers, on fixed random inputs.

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <kusari/core/allocator.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/runtime.h>
#include <kusari/kusari.h>

#include "bench_util.h"

namespace kusari::bench {

// Parses the command line over `defaults`, sets kusari's thread count from it and flushes subnormal
// floats to zero (as the libtorch twins do): a network that has learned its fixed batch leaves momentum
// buffers stuck on the smallest subnormal values, and their ~100-cycle arithmetic is not what these
// programs measure. An error later (no GPU for --device cuda, memory) ends the program with its message
// and status 1, not an abort.
inline Options setup(int argc, char** argv, const Options& defaults, const MoreFlags& more = {}) {
  distributed::install_abort_on_uncaught_exception();
  Options options = defaults;
  try {
    options.cudnn_benchmark = cuda::cudnn_benchmark();  // KUSARI_CUDNN_BENCHMARK, the flag's default
    options = parse_options(argc, argv, options, more);
    dtype_from_name(options.dtype);
    Device::parse(options.device);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    std::exit(2);
  }
  cuda::set_cudnn_benchmark(options.cudnn_benchmark);
  set_num_threads(options.threads);
  set_flush_denormal(true);
  return options;
}

// n int32 labels drawn uniformly from [0, classes), reproducible from seed.
inline Array random_labels(int64_t n, int64_t classes, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int32_t> draw(0, static_cast<int32_t>(classes - 1));
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int32_t& label : labels) label = draw(engine);
  return Array::from_vector(labels, {n});
}

// Times training steps of `model` on inputs x (batch first) with `labels` and prints the bench line.
// With --dtype float16 or bfloat16 the parameters and inputs take that dtype (after one forward that
// gives lazily shaped parameters their shape), the optimizer updates float32 master weights, and the
// name gets the dtype appended. With --device the model and inputs move there (the name gets the
// device type appended, and a CUDA step ends with a synchronize, so that it is timed whole); with
// --channels-last the inputs are in channels-last order.
inline double train_benchmark(const std::string& name, const std::shared_ptr<links::Link>& model, const Array& x,
                              const Array& labels, const Options& options, const Suffix& suffix = {}) {
  const Dtype dtype = dtype_from_name(options.dtype);
  const Device device = Device::parse(options.device);
  const DeviceScope on_device(device);
  model->to_device(device);
  const Array images = options.channels_last ? in_order(x.to(device), MemoryOrder::channels_last) : x.to(device);
  optimizers::MomentumSGD optimizer(0.01, 0.9);
  if (dtype != Dtype::float32) {
    {
      auto guard = no_backprop_mode();
      model->forward(Variable(images, false));
    }
    for (auto& [path, param] : model->namedparams()) param.set_data(param.data().astype(dtype));
    optimizer.use_fp32_update();
  }
  optimizer.setup(model);
  const MemoryOrder order = options.channels_last ? MemoryOrder::channels_last : MemoryOrder::row_major;
  const Variable input(in_order(images.astype(dtype), order), false), target(labels.to(device), false);
  const auto step = [&] {
    optimizer.update([&] { return functions::softmax_cross_entropy(model->forward(input), target); });
    if (device.type == DeviceType::cuda) cuda::synchronize(device.index);
  };
  std::string full_name = dtype == Dtype::float32 ? name : name + "_" + options.dtype;
  if (device.type != DeviceType::cpu) full_name += device.type == DeviceType::cuda ? "_cuda" : "_loopback";
  if (options.channels_last) full_name += "_channels_last";
  // A GPU's line says how cuDNN's algorithms were chosen (its PyTorch twin says the same of its own).
  const Suffix line_end = device.type != DeviceType::cuda ? suffix : Suffix([suffix, &options] {
    return (suffix ? suffix() : std::string()) + (options.cudnn_benchmark ? " cudnn=benchmark" : " cudnn=heuristics");
  });
  // The warm-up first; then a GPU's peak memory counters start over from what the cache holds, as the
  // PyTorch twin's do, so that the line's peak is the timed steps' (after the first steps' searches).
  for (int i = 0; i < options.warmup; ++i) step();
  if (device.type == DeviceType::cuda) cuda::reset_peak_memory_stats();
  if (!options.profile) return time_steps(full_name, x.shape()[0], step, 0, options.min_steps, options.seconds, line_end);
  // The timed steps inside the profiler's window (timed with the profiler on).
  profiler::start();
  const double ms = time_steps(full_name + "_profiled", x.shape()[0], step, 0, options.min_steps, options.seconds,
                               line_end);
  profiler::stop();
  std::printf("%s", profiler::report().c_str());
  return ms;
}

// The " peak_device_mb=N peak_live_mb=N" suffix: the most memory the CUDA allocator held at once, and the
// most its live blocks took, since the last cuda::reset_peak_memory_stats() (train_bench: the warm-up's
// end), in MiB.
inline std::string peak_device_suffix() {
  const AllocatorStats stats = allocator_for(DeviceType::cuda).stats();
  return " peak_device_mb=" + std::to_string(stats.peak_bytes_held >> 20) +
         " peak_live_mb=" + std::to_string(stats.peak_bytes_in_use >> 20);
}

}  // namespace kusari::bench

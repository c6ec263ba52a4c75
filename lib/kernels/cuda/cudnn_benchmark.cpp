// How convolutions choose cuDNN algorithms (kusari/kernels/cuda/runtime.h): the setting, in every build
// (a build without CUDA keeps and reads it back, so a program sets it alike in both), started from
// KUSARI_CUDNN_BENCHMARK.

#include <atomic>

#include <kusari/core/detail/environment_switch.h>
#include <kusari/kernels/cuda/runtime.h>

namespace kusari::cuda {
namespace {

// The setting, read from the environment on first use (KUSARI_CUDNN_BENCHMARK: 1 times the candidates, 0
// or unset takes cuDNN's heuristics; a bad value throws there, and again at the next use).
std::atomic<bool>& benchmark_flag() {
  static std::atomic<bool> flag{kusari::detail::environment_switch("KUSARI_CUDNN_BENCHMARK", false)};
  return flag;
}

}  // namespace

void set_cudnn_benchmark(bool enabled) { benchmark_flag().store(enabled); }

bool cudnn_benchmark() { return benchmark_flag().load(); }

}  // namespace kusari::cuda

// How convolutions choose cuDNN algorithms (kusari/kernels/cuda/runtime.h): the setting, in every build
// (a build without CUDA keeps and reads it back, so a program sets it alike in both), started from
// KUSARI_CUDNN_BENCHMARK.

#include <atomic>
#include <cstdlib>
#include <string>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/runtime.h>

namespace kusari::cuda {
namespace {

// KUSARI_CUDNN_BENCHMARK: 1 times the candidates, 0 or unset takes cuDNN's heuristics.
bool benchmark_from_environment() {
  const char* value = std::getenv("KUSARI_CUDNN_BENCHMARK");
  if (!value || std::string(value).empty() || std::string(value) == "0") return false;
  if (std::string(value) == "1") return true;
  throw ValueError(cat("KUSARI_CUDNN_BENCHMARK: expected 0 or 1, got '", value, "'"));
}

// The setting, read from the environment on first use (a bad value throws there, and again at the next use).
std::atomic<bool>& benchmark_flag() {
  static std::atomic<bool> flag{benchmark_from_environment()};
  return flag;
}

}  // namespace

void set_cudnn_benchmark(bool enabled) { benchmark_flag().store(enabled); }

bool cudnn_benchmark() { return benchmark_flag().load(); }

}  // namespace kusari::cuda

#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: which
// whole-batch batch normalizations run through cuDNN's fused kernels (batch_norm.cpp), and how.

#include <cstdint>
#include <optional>

#include <kusari/core/array.h>

namespace kusari::kernels::cuda {

// What cuDNN fuses into one batch normalization: the normalization alone, with the ReLU after it, or
// with a residual added before the ReLU.
enum class FusedOps { batch_norm, batch_norm_relu, batch_norm_add_relu };

// How cuDNN runs one batch normalization: x described as it is (channels-last 4-D, NHWC) or as
// (N, C, rest, 1) of its row-major data; in cuDNN's persistent NHWC kernels or its plain spatial ones;
// and the operations fused.
struct BatchNormFusion {
  bool channels_last = false;
  bool persistent = false;
  FusedOps ops = FusedOps::batch_norm;
};

// The largest input cuDNN is given (its kernels index elements in 32 bits) and the largest batch (its
// training-mode kernels decline or fail beyond it).
constexpr int64_t kMostDnnElements = int64_t{1} << 31;
constexpr int64_t kMostDnnBatch = 880801;

// How cuDNN runs the batch normalization of x (N, C, ...) with a residual (when `residual`) and a ReLU
// (when `relu`), or none when the channel passes do: float16 and bfloat16 channels-last 4-D or
// row-major, float32 channels-last 4-D only (float64 and row-major float32 keep the passes); at least
// 2 elements per channel, fewer than kMostDnnElements, at most kMostDnnBatch samples; persistent for
// channels-last; the ReLU (and a residual before it) fused for channels-last inputs with a multiple of
// 4 channels, none otherwise (nor a residual without a ReLU).
std::optional<BatchNormFusion> batch_norm_fusion(const Array& x, bool residual, bool relu);

// How many of cuDNN's batch normalization calls this process declined to the channel passes
// (batch_norm.cpp, CUDA builds; none where cuDNN ran every fusion chosen).
int64_t dnn_batch_norm_declines();

}  // namespace kusari::kernels::cuda

#pragma once
// Internal to the CUDA backend: a convolution pass through cuDNN's legacy calls (cudnnConvolution*
// with one of its algorithm enums), where no engine configuration of its graph gave a plan.

#include <cstddef>
#include <cstdint>

#include <kusari/kernels/cuda/detail/convolution_engines.h>

namespace kusari::kernels::cuda {

// A legacy algorithm (one of cuDNN's three enums, as an int) and the workspace it takes.
struct LegacyPlan {
  int algorithm = 0;
  size_t workspace = 0;
};

// The first algorithm of cuDNN's legacy heuristics that runs these operands within `limit` bytes of
// workspace, or when `timed` the fastest of its timed search; DeviceError naming the pass where none.
LegacyPlan legacy_plan(cudnnHandle_t handle, ConvolutionPass pass, const ConvolutionOperands& o, bool timed,
                       size_t limit);

// Runs a pass with a legacy plan and its `workspace`.
void run_legacy(cudnnHandle_t handle, ConvolutionPass pass, const ConvolutionOperands& o, const LegacyPlan& plan,
                void* workspace);

// How many plans this process took from the legacy calls (convolution.cpp; none where every pass had
// an engine plan).
int64_t legacy_convolution_plans();

}  // namespace kusari::kernels::cuda

// cuDNN's handle, statuses and legacy convolution calls on the host, linked into libkusari by the host
// emulation (meson option cuda-emulation) in place of libcudnn: the descriptors of 4-D tensors, filters
// (NCHW or NHWC) and convolutions (groups, math type), and two algorithms per pass: 0 with no workspace,
// 1 summing into a workspace of one compute-type value per result element. float32 data with any math
// type but CUDNN_FMA_MATH is read as TF32, as a GPU's tensor cores read it. Each call checks its
// descriptors against one another and its operands against the emulated device's allocations, and queues
// the pass on the handle's stream; cudnnFind* runs each algorithm at the call (after the stream's work).

#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <tuple>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/emulated_cudnn.h>
#include <kusari/kernels/cuda/detail/emulated_memory.h>
#include <kusari/kernels/cuda/detail/emulated_streams.h>

namespace emulation = kusari::kernels::cuda::emulation;
using emulation::DnnNumerics;
using emulation::DnnPass;
using emulation::DnnTensor;

namespace {

thread_local std::string last_refusal;

// The emulation's legacy algorithms.
constexpr int kAlgorithms = 2;

// A pass's operands as its descriptors give them, checked against one another.
struct LegacyPass {
  DnnPass pass;
  DnnTensor x, w, y;
  emulation::DnnGeometry geometry;
  DnnNumerics numerics = DnnNumerics::exact;

  // The workspace `algorithm` takes.
  size_t workspace(int algorithm) const {
    return algorithm == 0 ? 0 : emulation::partials_bytes(pass, x, w, y, geometry);
  }
};

// The pass of these descriptors, or the status refusing them (BAD_PARAM, with the reason).
cudnnStatus_t describe(DnnPass pass, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t y,
                       cudnnConvolutionDescriptor_t conv, LegacyPass& out) {
  if (x == nullptr || w == nullptr || y == nullptr || conv == nullptr) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a null descriptor");
  }
  out = {pass, x->tensor, w->tensor, y->tensor, conv->geometry};
  const std::string mismatch = emulation::convolution_mismatch(out.x, out.w, out.y, out.geometry);
  if (!mismatch.empty()) return emulation::refuse(CUDNN_STATUS_BAD_PARAM, mismatch);
  if (out.x.extents[1] != out.w.extents[1] * conv->groups) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "x's channels are not the group count times the filter's");
  }
  if (out.x.type == CUDNN_DATA_FLOAT && conv->math != CUDNN_FMA_MATH) out.numerics = DnnNumerics::tf32_inputs;
  return CUDNN_STATUS_SUCCESS;
}

// Whether each operand's data lies in the emulated device's memory as its descriptor says, the result
// apart from the inputs and the workspace.
cudnnStatus_t check_operands(const LegacyPass& p, const void* x, const void* w, const void* y, const void* workspace,
                             size_t workspace_bytes) {
  for (const auto& [t, data, name] : {std::tuple{&p.x, x, "x"}, std::tuple{&p.w, w, "w"}, std::tuple{&p.y, y, "y"}}) {
    if (!emulation::device_span(data, t->span_bytes())) {
      return emulation::refuse(CUDNN_STATUS_BAD_PARAM, kusari::cat("expected ", name, "'s ", t->span_bytes(),
                                                                   " bytes in one allocation of the emulated device"));
    }
  }
  const std::string aliased = emulation::aliasing(p.pass, p.x, x, p.w, w, p.y, y, workspace, workspace_bytes);
  return aliased.empty() ? CUDNN_STATUS_SUCCESS : emulation::refuse(CUDNN_STATUS_BAD_PARAM, aliased);
}

// Runs (now) `algorithm` of the pass on these operands.
void compute(const LegacyPass& p, int algorithm, const void* x, const void* w, const void* y, double alpha,
             double beta, void* workspace) {
  emulation::convolve(p.pass, p.x, x, p.w, w, p.y, y, p.geometry, alpha, beta, p.numerics,
                      algorithm == 0 ? nullptr : workspace);
}

// The heuristics' ranking: algorithm 1 first, then 0.
template <class Perf, class Algo>
cudnnStatus_t rank(const LegacyPass& p, cudnnMathType_t math, int requested, int* returned, Perf* results) {
  *returned = std::min(requested, kAlgorithms);
  for (int i = 0; i < *returned; ++i) {
    const int algorithm = kAlgorithms - 1 - i;
    results[i] = Perf{static_cast<Algo>(algorithm), CUDNN_STATUS_SUCCESS, -1.0f, p.workspace(algorithm),
                      CUDNN_DETERMINISTIC, math, {}};
  }
  return CUDNN_STATUS_SUCCESS;
}

// The timed search: each algorithm run at the call on the given buffers (the result's written), fastest
// first; one wanting more workspace than given is listed as failed, last.
template <class Perf, class Algo>
cudnnStatus_t find(cudnnHandle_t handle, const LegacyPass& p, cudnnMathType_t math, const void* x, const void* w,
                   const void* y, int requested, int* returned, Perf* results, void* workspace, size_t bytes) {
  if (const cudnnStatus_t status = check_operands(p, x, w, y, workspace, bytes); status != CUDNN_STATUS_SUCCESS) {
    return status;
  }
  emulation::finish_stream(handle->stream);
  std::vector<Perf> all;
  for (int algorithm = 0; algorithm < kAlgorithms; ++algorithm) {
    const size_t need = p.workspace(algorithm);
    Perf perf{static_cast<Algo>(algorithm), CUDNN_STATUS_ALLOC_FAILED, -1.0f, need, CUDNN_DETERMINISTIC, math, {}};
    if (need <= bytes && (need == 0 || emulation::device_span(workspace, need))) {
      const auto start = std::chrono::steady_clock::now();
      compute(p, algorithm, x, w, y, 1.0, 0.0, workspace);
      perf.status = CUDNN_STATUS_SUCCESS;
      perf.time = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    all.push_back(perf);
  }
  std::stable_sort(all.begin(), all.end(), [](const Perf& a, const Perf& b) {
    const bool a_ran = a.status == CUDNN_STATUS_SUCCESS, b_ran = b.status == CUDNN_STATUS_SUCCESS;
    if (a_ran != b_ran) return a_ran;
    return a.time < b.time;
  });
  *returned = std::min(requested, static_cast<int>(all.size()));
  std::copy_n(all.begin(), *returned, results);
  return CUDNN_STATUS_SUCCESS;
}

// Queues `algorithm` of the pass on the handle's stream, after checking its operands and workspace.
cudnnStatus_t queue(cudnnHandle_t handle, const LegacyPass& p, int algorithm, const void* x, const void* w,
                    const void* y, const void* alpha, const void* beta, void* workspace, size_t bytes) {
  if (algorithm < 0 || algorithm >= kAlgorithms) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "an algorithm the emulation does not have");
  }
  if (const cudnnStatus_t status = check_operands(p, x, w, y, workspace, bytes); status != CUDNN_STATUS_SUCCESS) {
    return status;
  }
  const size_t need = p.workspace(algorithm);
  if (need > bytes || (need > 0 && !emulation::device_span(workspace, need))) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a workspace smaller than the algorithm takes");
  }
  const double a = emulation::scale_value(alpha, p.x.type), b = emulation::scale_value(beta, p.x.type);
  emulation::enqueue(handle->stream, [=] { compute(p, algorithm, x, w, y, a, b, workspace); });
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

namespace kusari::kernels::cuda::emulation {

cudnnStatus_t refuse(cudnnStatus_t status, const std::string& why) {
  last_refusal = cat("the emulated cuDNN: ", why);
  return status;
}

}  // namespace kusari::kernels::cuda::emulation

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  *handle = new cudnnContext{};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER: return "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_ALLOC_FAILED: return "CUDNN_STATUS_ALLOC_FAILED";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_INTERNAL_ERROR";
  }
}

void cudnnGetLastErrorString(char* message, size_t most) {
  if (most == 0) return;
  const size_t n = std::min(most - 1, last_refusal.size());
  std::copy_n(last_refusal.data(), n, message);
  message[n] = '\0';
  last_refusal.clear();
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) { return emulation::made(d); }

cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { return emulation::destroyed(d); }

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t type, int n, int c, int h,
                                           int w, int n_stride, int c_stride, int h_stride, int w_stride) {
  if (n < 1 || c < 1 || h < 1 || w < 1 || n_stride < 0 || c_stride < 0 || h_stride < 0 || w_stride < 0) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "an extent below 1 or a negative stride");
  }
  d->tensor = {type, {n, c, h, w}, {n_stride, c_stride, h_stride, w_stride}};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) { return emulation::made(d); }

cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { return emulation::destroyed(d); }

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type, cudnnTensorFormat_t format,
                                         int k, int c, int h, int w) {
  if (k < 1 || c < 1 || h < 1 || w < 1) return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "an extent below 1");
  const int64_t hw = int64_t{h} * w;
  if (format == CUDNN_TENSOR_NCHW) {
    d->tensor = {type, {k, c, h, w}, {c * hw, hw, w, 1}};
  } else if (format == CUDNN_TENSOR_NHWC) {
    d->tensor = {type, {k, c, h, w}, {c * hw, 1, int64_t{w} * c, c}};
  } else {
    return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "a filter format the emulation does not take");
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) { return emulation::made(d); }

cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) { return emulation::destroyed(d); }

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w, int u, int v,
                                              int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute) {
  if (mode != CUDNN_CROSS_CORRELATION) {
    return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "the emulation takes cross-correlations only");
  }
  d->geometry = {{pad_h, pad_w}, {pad_h, pad_w}, {u, v}, {dilation_h, dilation_w}, compute};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  if (groups < 1) return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a group count below 1");
  d->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
  d->math = math;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t x,
                                                     const cudnnFilterDescriptor_t w,
                                                     const cudnnConvolutionDescriptor_t conv,
                                                     const cudnnTensorDescriptor_t y, const int requested,
                                                     int* returned, cudnnConvolutionFwdAlgoPerf_t* results) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::forward, x, w, y, conv, p); s != CUDNN_STATUS_SUCCESS) return s;
  return rank<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(p, conv->math, requested, returned, results);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t, const cudnnFilterDescriptor_t w,
                                                          const cudnnTensorDescriptor_t dy,
                                                          const cudnnConvolutionDescriptor_t conv,
                                                          const cudnnTensorDescriptor_t dx, const int requested,
                                                          int* returned, cudnnConvolutionBwdDataAlgoPerf_t* results) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::backward_data, dx, w, dy, conv, p); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return rank<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(p, conv->math, requested, returned,
                                                                               results);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t x,
                                                            const cudnnTensorDescriptor_t dy,
                                                            const cudnnConvolutionDescriptor_t conv,
                                                            const cudnnFilterDescriptor_t dw, const int requested,
                                                            int* returned,
                                                            cudnnConvolutionBwdFilterAlgoPerf_t* results) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::backward_filter, x, dw, dy, conv, p); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return rank<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(p, conv->math, requested,
                                                                                   returned, results);
}

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t x_desc,
                                                     const void* x, const cudnnFilterDescriptor_t w_desc,
                                                     const void* w, const cudnnConvolutionDescriptor_t conv,
                                                     const cudnnTensorDescriptor_t y_desc, void* y, const int requested,
                                                     int* returned, cudnnConvolutionFwdAlgoPerf_t* results,
                                                     void* workspace, size_t bytes) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::forward, x_desc, w_desc, y_desc, conv, p); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return find<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(handle, p, conv->math, x, w, y, requested,
                                                                        returned, results, workspace, bytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t handle, const cudnnFilterDescriptor_t w_desc,
                                                          const void* w, const cudnnTensorDescriptor_t dy_desc,
                                                          const void* dy, const cudnnConvolutionDescriptor_t conv,
                                                          const cudnnTensorDescriptor_t dx_desc, void* dx,
                                                          const int requested, int* returned,
                                                          cudnnConvolutionBwdDataAlgoPerf_t* results, void* workspace,
                                                          size_t bytes) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::backward_data, dx_desc, w_desc, dy_desc, conv, p);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return find<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
      handle, p, conv->math, dx, w, dy, requested, returned, results, workspace, bytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t x_desc,
                                                            const void* x, const cudnnTensorDescriptor_t dy_desc,
                                                            const void* dy, const cudnnConvolutionDescriptor_t conv,
                                                            const cudnnFilterDescriptor_t dw_desc, void* dw,
                                                            const int requested, int* returned,
                                                            cudnnConvolutionBwdFilterAlgoPerf_t* results,
                                                            void* workspace, size_t bytes) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::backward_filter, x_desc, dw_desc, dy_desc, conv, p);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return find<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
      handle, p, conv->math, x, dw, dy, requested, returned, results, workspace, bytes);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t x_desc,
                                      const void* x, const cudnnFilterDescriptor_t w_desc, const void* w,
                                      const cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algorithm,
                                      void* workspace, size_t bytes, const void* beta,
                                      const cudnnTensorDescriptor_t y_desc, void* y) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::forward, x_desc, w_desc, y_desc, conv, p); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return queue(handle, p, static_cast<int>(algorithm), x, w, y, alpha, beta, workspace, bytes);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                           const cudnnFilterDescriptor_t w_desc, const void* w,
                                           const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                           const cudnnConvolutionDescriptor_t conv,
                                           cudnnConvolutionBwdDataAlgo_t algorithm, void* workspace, size_t bytes,
                                           const void* beta, const cudnnTensorDescriptor_t dx_desc, void* dx) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::backward_data, dx_desc, w_desc, dy_desc, conv, p);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return queue(handle, p, static_cast<int>(algorithm), dx, w, dy, alpha, beta, workspace, bytes);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t x_desc, const void* x,
                                             const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                             const cudnnConvolutionDescriptor_t conv,
                                             cudnnConvolutionBwdFilterAlgo_t algorithm, void* workspace, size_t bytes,
                                             const void* beta, const cudnnFilterDescriptor_t dw_desc, void* dw) {
  LegacyPass p;
  if (const cudnnStatus_t s = describe(DnnPass::backward_filter, x_desc, dw_desc, dy_desc, conv, p);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  return queue(handle, p, static_cast<int>(algorithm), x, dw, dy, alpha, beta, workspace, bytes);
}

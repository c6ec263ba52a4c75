#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): what its cuDNN computes, on the host,
// and what its files share: the convolution passes (emulation/cudnn_convolution.cpp) behind the backend
// API's graphs and engines (cudnn_backend.cpp) and the legacy calls (cudnn_legacy.cpp), the fused batch
// normalization (cudnn_batch_norm.cpp) behind its calls (cudnn_batch_norm_calls.cpp), and the legacy
// descriptors. Tensors are read where their descriptors say they are (extents, strides, element type), so
// a descriptor that does not describe its array gives wrong values or a refusal on the host, as it would
// on a GPU; every operand must lie in one allocation of the emulated device (detail/emulated_memory.h).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kusari::kernels::cuda::emulation {

// A 4-D tensor as a cuDNN descriptor gives it: element type, extents and strides in elements, in the order
// N, C, H, W (a filter's K, C, R, S).
struct DnnTensor {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<int64_t> extents, strides;

  // The bytes from its first element to past its last (0 for an empty tensor).
  size_t span_bytes() const;
};

// A cross-correlation's geometry over the two spatial axes and the type it accumulates in.
struct DnnGeometry {
  int64_t pre_padding[2] = {0, 0}, post_padding[2] = {0, 0}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
};

// The three passes: y from x and w, x's gradient from y's and w, w's gradient from x and y's.
enum class DnnPass { forward, backward_data, backward_filter };

// How an engine computes each sum: exactly in the compute type, with float32 inputs rounded to TF32 (a
// tensor-core engine on float32 data), or with each partial sum rounded to the element type (an engine
// whose numerical notes say reduced-precision reduction).
enum class DnnNumerics { exact, tf32_inputs, sums_in_element_type };

// The bytes of each element of `type` (0 for a type the emulation does not take).
size_t element_bytes(cudnnDataType_t type);

// Element `offset` of data of `type` (float32, float64, float16 or bfloat16), widened to A.
template <class A>
A load_element(const void* data, cudnnDataType_t type, int64_t offset) {
  switch (type) {
    case CUDNN_DATA_DOUBLE: return static_cast<A>(static_cast<const double*>(data)[offset]);
    case CUDNN_DATA_HALF: return static_cast<A>(__half2float(static_cast<const __half*>(data)[offset]));
    case CUDNN_DATA_BFLOAT16:
      return static_cast<A>(__bfloat162float(static_cast<const __nv_bfloat16*>(data)[offset]));
    default: return static_cast<A>(static_cast<const float*>(data)[offset]);
  }
}

// Stores `value` rounded to `type` as element `offset`.
template <class A>
void store_element(void* data, cudnnDataType_t type, int64_t offset, A value) {
  switch (type) {
    case CUDNN_DATA_DOUBLE: static_cast<double*>(data)[offset] = static_cast<double>(value); break;
    case CUDNN_DATA_HALF: static_cast<__half*>(data)[offset] = __float2half_rn(static_cast<float>(value)); break;
    case CUDNN_DATA_BFLOAT16:
      static_cast<__nv_bfloat16*>(data)[offset] = __float2bfloat16_rn(static_cast<float>(value));
      break;
    default: static_cast<float*>(data)[offset] = static_cast<float>(value); break;
  }
}

// A scale (alpha, beta) as cuDNN's calls take it: a double for double data, a float otherwise.
inline double scale_value(const void* scale, cudnnDataType_t data) {
  return data == CUDNN_DATA_DOUBLE ? *static_cast<const double*>(scale) : *static_cast<const float*>(scale);
}

// The operand a pass writes: y (forward), x (its gradient) or w (its gradient).
const DnnTensor& result_of(DnnPass pass, const DnnTensor& x, const DnnTensor& w, const DnnTensor& y);

// The bytes of one compute-type partial sum per element of the pass's result (an engine's workspace).
size_t partials_bytes(DnnPass pass, const DnnTensor& x, const DnnTensor& w, const DnnTensor& y,
                      const DnnGeometry& geometry);

// Why x (N, C, H, W), w (K, C / groups, R, S) and y (N, K, P, Q) do not make a convolution of `geometry`
// (cuDNN's output extents, one element type, a compute type that type takes, 4-D tensors), or "" where
// they do; the group count is derived as x's channels over w's.
std::string convolution_mismatch(const DnnTensor& x, const DnnTensor& w, const DnnTensor& y,
                                 const DnnGeometry& geometry);

// Runs `pass` on the data at x_data, w_data and y_data: the pass's result = alpha · its sums + beta · what
// was there (left unread where beta is 0). Each sum adds its terms in one fixed order in `geometry`'s
// compute type as `numerics` says, into `partials` (one compute-type value per result element, an engine's
// workspace) when given, then rounds to the element type.
void convolve(DnnPass pass, const DnnTensor& x, const void* x_data, const DnnTensor& w, const void* w_data,
              const DnnTensor& y, const void* y_data, const DnnGeometry& geometry, double alpha, double beta,
              DnnNumerics numerics, void* partials);

// Why a pass's operands are not what cuDNN runs it on: the result overlapping an input or the workspace
// (cuDNN's convolutions do not compute in place), or "".
std::string aliasing(DnnPass pass, const DnnTensor& x, const void* x_data, const DnnTensor& w, const void* w_data,
                     const DnnTensor& y, const void* y_data, const void* workspace, size_t workspace_bytes);

// A new legacy descriptor at *d, as cudnnCreate*Descriptor makes one.
template <class Struct>
cudnnStatus_t made(Struct** d) {
  *d = new Struct{};
  return CUDNN_STATUS_SUCCESS;
}

// Destroys a legacy descriptor, as cudnnDestroy*Descriptor does.
template <class Struct>
cudnnStatus_t destroyed(Struct* d) {
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

// Sets the message cudnnGetLastErrorString returns and returns `status` (the emulation's refusals).
cudnnStatus_t refuse(cudnnStatus_t status, const std::string& why);

// What a fused batch normalization of cuDNN's (cudnnBatchNormalization*Ex) is given.
struct DnnBatchNorm {
  cudnnBatchNormOps_t ops = CUDNN_BATCHNORM_OPS_BN;
  DnnTensor x;            // also y's, z's and the gradients' (the calls refuse other descriptors)
  double epsilon = 0;
};

// Why cuDNN's fused batch normalization in `mode` does not take these operands (its modes' layouts, the
// fused operations' persistent NHWC kernels with channels a multiple of 4 and a ReLU), or "".
std::string batch_norm_mismatch(cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const DnnTensor& x,
                                bool has_z, bool has_relu);

// The bytes of reserve space the forward leaves for the backward: the statistics, which the backward
// checks against those it uses.
size_t batch_norm_reserve_bytes(const DnnTensor& x);

// The forward: y = alpha · relu?(gamma · x̂ + beta (+ z, with the residual's operation)) + beta_y · y, x̂
// normalized by the batch's mean and biased variance (accumulated in double); saved mean and inverse
// standard deviation (float32, where given); running averages updated by `factor` (variance unbiased,
// where given); the reserve filled.
void batch_norm_forward(const DnnBatchNorm& bn, double alpha, double beta_y, const void* x, const void* z, void* y,
                        const float* gamma, const float* beta, double factor, float* running_mean,
                        float* running_variance, float* saved_mean, float* saved_inv_std, void* reserve);

// The backward with the saved statistics (recomputed from x where not given): gradients of x (and of z with
// the residual's operation) blended by alpha_data, beta_data, of gamma and beta by alpha_param,
// beta_param; with a ReLU, dy counts only where the forward's output y is positive. A channel whose
// reserve does not hold the statistics used (a reserve not from this forward) gets NaN gradients, as a
// GPU's kernels read garbage there.
void batch_norm_backward(const DnnBatchNorm& bn, double alpha_data, double beta_data, double alpha_param,
                         double beta_param, const void* x, const void* y, const void* dy, void* dz, void* dx,
                         const float* gamma, float* dgamma, float* dbeta, const float* saved_mean,
                         const float* saved_inv_std, const void* reserve);

}  // namespace kusari::kernels::cuda::emulation

// cuDNN's opaque handle and legacy descriptors, as the emulation's calls define them.
struct cudnnContext {
  cudaStream_t stream = nullptr;  // where the handle's work is queued
};
struct cudnnTensorStruct {
  kusari::kernels::cuda::emulation::DnnTensor tensor;
};
struct cudnnFilterStruct {
  kusari::kernels::cuda::emulation::DnnTensor tensor;  // strides from the filter's format
};
struct cudnnConvolutionStruct {
  kusari::kernels::cuda::emulation::DnnGeometry geometry;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
struct cudnnActivationStruct {
  bool set = false;  // whether cudnnSetActivationDescriptor has made it a ReLU (the one activation taken)
};

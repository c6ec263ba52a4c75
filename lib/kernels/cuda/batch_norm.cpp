// CUDA training-mode batch normalization of one whole batch: through cuDNN's fused batch normalization
// (cudnnBatchNormalizationForwardTrainingEx and BackwardEx, accumulating in float32, the statistics dtype
// of float16, bfloat16 and float32) where batch_norm_fusion chooses it, else through the two channel
// passes of batch_norm_passes.h, as also for any configuration cuDNN declines. The backward uses cuDNN's
// when its forward did (after a fused ReLU it reads the forward's output, which the statistics ask the
// caller to keep, as ReLU's backward does elsewhere), and the passes otherwise.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/batch_norm_fusion.h>
#include <kusari/kernels/cuda/detail/batch_norm_statistics.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/dnn.h>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/batch_norm_passes.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

constexpr const char* kOp = "batch_normalization";

// cuDNN's mode and operations for a fusion.
cudnnBatchNormMode_t dnn_mode(const BatchNormFusion& f) {
  return f.persistent ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT : CUDNN_BATCHNORM_SPATIAL;
}
cudnnBatchNormOps_t dnn_ops(const BatchNormFusion& f) {
  switch (f.ops) {
    case FusedOps::batch_norm_relu:
      return CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    case FusedOps::batch_norm_add_relu:
      return CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    default:
      return CUDNN_BATCHNORM_OPS_BN;
  }
}

// What cuDNN's forward keeps for its backward: the fusion, float32 (C,) arrays of the saved mean and
// inverse standard deviation and of beta as the forward used it, its reserve space and eps.
struct DnnBatchNormState final : KernelState {
  BatchNormFusion fusion;
  Array saved_mean, saved_inv_std, beta, reserve;
  size_t reserve_bytes = 0;
  double eps = 0;
};

// a as the 4-D array cuDNN is given: dense channels-last (with the strides of a packed NHWC array, also
// on axes of extent 1, which address nothing), else (N, C, rest, 1) of its row-major data; a view that
// starts off a 16-byte boundary is copied first (cuDNN's NHWC kernels load several elements at once).
Array as_described(const Array& a, const BatchNormFusion& f) {
  const MemoryOrder order = f.channels_last ? MemoryOrder::channels_last : MemoryOrder::row_major;
  Array dense = in_order(a, order);
  if (reinterpret_cast<uintptr_t>(dense.raw_data()) % 16 != 0) {
    Array aligned = empty_in_order(dense.shape(), order, dense.dtype(), dense.device());
    aligned.assign(dense);
    dense = aligned;
  }
  if (f.channels_last) return dense.as_strided(dense.shape(), channels_last_strides(dense.shape()), dense.offset());
  return dense.reshape({dense.shape()[0], dense.shape()[1], dense.size() / (dense.shape()[0] * dense.shape()[1]), 1});
}

// An empty array shaped and ordered like the described x.
Array empty_like_described(const Array& described, const BatchNormFusion& f) {
  return empty_in_order(described.shape(), f.channels_last ? MemoryOrder::channels_last : MemoryOrder::row_major,
                        described.dtype(), described.device());
}

// (C,) operands as contiguous float32 on their device, converted together (one launch where any is not).
std::vector<Array> float32_channels(const std::vector<Array>& operands) {
  std::vector<Array> out = ops::astype_together(operands, std::vector<Dtype>(operands.size(), Dtype::float32));
  for (Array& a : out) a = a.contiguous();
  return out;
}

// The descriptor of cuDNN's ReLU (NaN passed through, as the channel passes' ReLU keeps it); destroyed with it.
struct ReluDescriptor {
  cudnnActivationDescriptor_t d = nullptr;
  ReluDescriptor() {
    check_dnn(cudnnCreateActivationDescriptor(&d), "cudnnCreateActivationDescriptor");
    const cudnnStatus_t status = cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0);
    if (status != CUDNN_STATUS_SUCCESS) {
      cudnnDestroyActivationDescriptor(d);
      check_dnn(status, "cudnnSetActivationDescriptor");
    }
  }
  ~ReluDescriptor() { cudnnDestroyActivationDescriptor(d); }
  ReluDescriptor(const ReluDescriptor&) = delete;
  ReluDescriptor& operator=(const ReluDescriptor&) = delete;
};

// The descriptor of the (C,) scale, bias, mean and variance operands cuDNN derives from x's.
struct ChannelDescriptor {
  cudnnTensorDescriptor_t d = nullptr;
  ChannelDescriptor(const TensorDescriptor& x, cudnnBatchNormMode_t mode) {
    check_dnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    const cudnnStatus_t status = cudnnDeriveBNTensorDescriptor(d, x.d, mode);
    if (status != CUDNN_STATUS_SUCCESS) {
      cudnnDestroyTensorDescriptor(d);
      check_dnn(status, "cudnnDeriveBNTensorDescriptor");
    }
  }
  ~ChannelDescriptor() { cudnnDestroyTensorDescriptor(d); }
  ChannelDescriptor(const ChannelDescriptor&) = delete;
  ChannelDescriptor& operator=(const ChannelDescriptor&) = delete;
};

// The calls cuDNN declined in this process (dnn_batch_norm_declines).
std::atomic<int64_t> decline_count{0};

// Whether cuDNN declined the configuration (the passes then run) rather than failed; throws otherwise.
// A decline is counted and the first one said on stderr: the passes are the slow path, never to go unseen.
bool declined(cudnnStatus_t status, const char* what) {
  const int category = CUDNN_STATUS_CATEGORY(status);
  if (category != CUDNN_STATUS_NOT_SUPPORTED && category != CUDNN_STATUS_BAD_PARAM) {
    check_dnn(status, what);
    return false;
  }
  static std::once_flag said;
  std::call_once(said, [&] {
    std::fprintf(stderr, "kusari: batch_normalization: %s declined (%s); using the channel passes\n", what,
                 cudnnGetErrorString(status));
  });
  ++decline_count;
  return true;
}

// A device scratch buffer of `bytes` bytes (at least one).
Array scratch(size_t bytes, const Device& device) {
  return Array::empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, Dtype::uint8, device);
}

// The statistics of the contract from cuDNN's saved float32 mean and inverse standard deviation, gamma32
// and the state's beta (one launch: statistics_from_saved).
BatchNormStatistics statistics_from(const Array& x, const Array& gamma32, bool residual,
                                    std::shared_ptr<DnnBatchNormState> state) {
  BatchNormStatistics s;
  s.count = x.size() / x.shape()[1];
  statistics_from_saved(state->saved_mean, state->saved_inv_std, gamma32, state->beta, state->eps, s);
  s.residual = residual;
  s.backward_reads_output = state->fusion.ops != FusedOps::batch_norm;
  s.state = std::move(state);
  return s;
}

// Runs cuDNN's forward of `input` (plus z when defined) into y and the state's saved statistics and
// reserve space; false when cuDNN declined the configuration (nothing written).
bool dnn_forward(const Array& input, const Array& z, const Array& y, const Array& gamma32, DnnBatchNormState& state) {
  const BatchNormFusion& f = state.fusion;
  const cudnnBatchNormMode_t mode = dnn_mode(f);
  const cudnnBatchNormOps_t ops = dnn_ops(f);
  const cudnnDataType_t type = dnn_type(input.dtype(), kOp);
  const TensorDescriptor x_desc(input, type, kOp), y_desc(y, type, kOp);
  const ChannelDescriptor channel_desc(x_desc, mode);
  const ReluDescriptor relu_desc;
  const cudnnActivationDescriptor_t activation = f.ops == FusedOps::batch_norm ? nullptr : relu_desc.d;
  const cudnnTensorDescriptor_t z_desc = z.defined() ? x_desc.d : nullptr;
  const Device device = input.device();
  const DnnLock dnn(device.index);
  size_t workspace_bytes = 0;
  if (declined(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(dnn.handle(), mode, ops, x_desc.d, z_desc,
                                                                        y_desc.d, channel_desc.d, activation,
                                                                        &workspace_bytes),
               "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize") ||
      declined(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(dnn.handle(), mode, ops, activation, x_desc.d,
                                                                    &state.reserve_bytes),
               "cudnnGetBatchNormalizationTrainingExReserveSpaceSize")) {
    return false;
  }
  const Array workspace = scratch(workspace_bytes, device);
  state.reserve = scratch(state.reserve_bytes, device);
  const float one = 1, zero = 0;
  // No running averages here (the link keeps its own from the statistics): both pointers null.
  return !declined(cudnnBatchNormalizationForwardTrainingEx(
                       dnn.handle(), mode, ops, &one, &zero, x_desc.d, input.raw_data(), z_desc,
                       z.defined() ? z.raw_data() : nullptr, y_desc.d, y.raw_data(), channel_desc.d,
                       gamma32.raw_data(), state.beta.raw_data(), 0.0, nullptr, nullptr, state.eps,
                       state.saved_mean.raw_data(), state.saved_inv_std.raw_data(), activation, workspace.raw_data(),
                       workspace_bytes, state.reserve.raw_data(), state.reserve_bytes),
                   "cudnnBatchNormalizationForwardTrainingEx");
}

BatchNormForwardResult forward(const Array& x, const Array& gamma, const Array& beta, const Array& residual,
                               double eps, bool relu) {
  const std::optional<BatchNormFusion> fusion = batch_norm_fusion(x, residual.defined(), relu);
  if (!fusion) return ops::detail::batch_norm_forward_kernel(x, gamma, beta, residual, eps, relu);
  const BatchNormFusion& f = *fusion;
  const Device device = x.device();
  require_device(device, kOp);
  DeviceGuard guard(device.index);
  const Array input = as_described(x, f);
  const Array z = residual.defined() ? as_described(residual, f) : Array();
  const Array y = empty_like_described(input, f);
  auto state = std::make_shared<DnnBatchNormState>();
  state->fusion = f;
  state->eps = eps;
  const std::vector<Array> gamma_beta = float32_channels({gamma, beta});
  state->beta = gamma_beta[1];
  const int64_t channels = x.shape()[1];
  state->saved_mean = Array::empty({channels}, Dtype::float32, device);
  state->saved_inv_std = Array::empty({channels}, Dtype::float32, device);
  const Array& gamma32 = gamma_beta[0];
  if (!dnn_forward(input, z, y, gamma32, *state)) {
    return ops::detail::batch_norm_forward_kernel(x, gamma, beta, residual, eps, relu);
  }
  return {f.channels_last ? y : y.reshape(x.shape()), statistics_from(x, gamma32, residual.defined(), state)};
}

// The operands of cuDNN's backward, described: x, the forward's output (with a ReLU), gy, and where gx,
// the residual's gradient (with a residual and a ReLU) and gamma's and beta's gradients (float32 (C,)) go.
struct BackwardOperands {
  Array x, y, gy, gx, gz, gamma32, ggamma, gbeta;
};

// Runs cuDNN's backward into o.gx, o.gz, o.ggamma and o.gbeta; false when cuDNN declined (nothing written).
bool dnn_backward(const BackwardOperands& o, const DnnBatchNormState& state) {
  const BatchNormFusion& f = state.fusion;
  const cudnnBatchNormMode_t mode = dnn_mode(f);
  const cudnnBatchNormOps_t ops = dnn_ops(f);
  const bool relu = o.y.defined();
  const char* op = "batch_normalization_backward";
  const cudnnDataType_t type = dnn_type(o.x.dtype(), op);
  const TensorDescriptor x_desc(o.x, type, op), gy_desc(o.gy, type, op), gx_desc(o.gx, type, op);
  const ChannelDescriptor channel_desc(x_desc, mode);
  const ReluDescriptor relu_desc;
  const cudnnActivationDescriptor_t activation = relu ? relu_desc.d : nullptr;
  const cudnnTensorDescriptor_t y_desc = relu ? x_desc.d : nullptr;
  const cudnnTensorDescriptor_t gz_desc = o.gz.defined() ? x_desc.d : nullptr;
  const Device device = o.x.device();
  const DnnLock dnn(device.index);
  size_t workspace_bytes = 0;
  if (declined(cudnnGetBatchNormalizationBackwardExWorkspaceSize(dnn.handle(), mode, ops, x_desc.d, y_desc,
                                                                 gy_desc.d, gz_desc, gx_desc.d, channel_desc.d,
                                                                 activation, &workspace_bytes),
               "cudnnGetBatchNormalizationBackwardExWorkspaceSize")) {
    return false;
  }
  const Array workspace = scratch(workspace_bytes, device);
  const float one = 1, zero = 0;
  return !declined(cudnnBatchNormalizationBackwardEx(
                       dnn.handle(), mode, ops, &one, &zero, &one, &zero, x_desc.d, o.x.raw_data(), y_desc,
                       relu ? o.y.raw_data() : nullptr, gy_desc.d, o.gy.raw_data(), gz_desc,
                       o.gz.defined() ? o.gz.raw_data() : nullptr, gx_desc.d, o.gx.raw_data(), channel_desc.d,
                       o.gamma32.raw_data(), state.beta.raw_data(), o.ggamma.raw_data(), o.gbeta.raw_data(), state.eps,
                       state.saved_mean.raw_data(), state.saved_inv_std.raw_data(), activation, workspace.raw_data(),
                       workspace_bytes, state.reserve.raw_data(), state.reserve_bytes),
                   "cudnnBatchNormalizationBackwardEx");
}

BatchNormGradients backward(const Array& x, const Array& gamma, const Array& gy, const Array& y,
                            const BatchNormStatistics& statistics, bool relu, bool need_gx) {
  const auto* state = dynamic_cast<const DnnBatchNormState*>(statistics.state.get());
  // cuDNN's backward of a fused ReLU reads the forward's output (the routine checked it is given).
  const bool usable = state != nullptr && relu == (state->fusion.ops != FusedOps::batch_norm) && (!relu || y.defined());
  if (!usable) return ops::detail::batch_norm_backward_kernel(x, gamma, gy, y, statistics, relu, need_gx);
  const BatchNormFusion& f = state->fusion;
  const Device device = x.device();
  require_device(device, "batch_normalization_backward");
  DeviceGuard guard(device.index);
  BackwardOperands o;
  o.x = as_described(x, f);
  o.gy = as_described(gy, f);
  o.gx = empty_like_described(o.x, f);
  if (relu) o.y = as_described(y, f);
  if (f.ops == FusedOps::batch_norm_add_relu) {
    o.gz = empty_like_described(o.x, f);  // the residual's gradient: the caller computes its own
  }
  const int64_t channels = x.shape()[1];
  o.gamma32 = float32_channels({gamma})[0];
  o.ggamma = Array::empty({channels}, Dtype::float32, device);
  o.gbeta = Array::empty({channels}, Dtype::float32, device);
  if (!dnn_backward(o, *state)) {
    return ops::detail::batch_norm_backward_kernel(x, gamma, gy, y, statistics, relu, need_gx);
  }
  BatchNormGradients g;
  if (need_gx) g.gx = f.channels_last ? o.gx : o.gx.reshape(x.shape());
  g.ggamma = o.ggamma;  // cuDNN's float32, as the contract allows
  g.gbeta = o.gbeta;
  return g;
}

}  // namespace

int64_t dnn_batch_norm_declines() { return decline_count.load(); }

void register_batch_norm_kernels() {
  install_kernel<kernel_ops::BatchNormForward>(DeviceType::cuda, "cuda", forward);
  install_kernel<kernel_ops::BatchNormBackward>(DeviceType::cuda, "cuda", backward);
}

}  // namespace kusari::kernels::cuda

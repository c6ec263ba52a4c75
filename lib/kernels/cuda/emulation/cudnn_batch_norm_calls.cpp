// cuDNN's fused batch-normalization calls (cudnnBatchNormalization*Ex, their sizes, the derived channel
// descriptor, ReLU's activation descriptor) on the host, for the host emulation (meson option
// cuda-emulation). Each call checks that its descriptors describe one layout (x's, which y, z and the
// gradients share), that the configuration is one cuDNN's kernels take (NOT_SUPPORTED otherwise, as cuDNN
// declines), that the channel operands are (1, C, 1, 1) float32 and that every operand, workspace and
// reserve lies in the emulated device's memory at the size asked for; then it queues the computation on
// the handle's stream. The persistent mode takes data at 16-byte boundaries only
// (CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER), z and dz only with the residual's operation. The workspace
// is left filled with 0xff bytes, as scratch memory is left.

#include <cudnn.h>

#include <cstring>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/emulated_cudnn.h>
#include <kusari/kernels/cuda/detail/emulated_memory.h>
#include <kusari/kernels/cuda/detail/emulated_streams.h>

namespace emulation = kusari::kernels::cuda::emulation;
using emulation::DnnTensor;

namespace {

// The workspace the emulation's calls take: two float32 values per channel.
size_t workspace_bytes(const DnnTensor& x) { return 2 * sizeof(float) * static_cast<size_t>(x.extents[1]); }

// Whether two descriptors describe the same layout and type.
bool same_layout(const DnnTensor& a, const DnnTensor& b) {
  return a.type == b.type && a.extents == b.extents && a.strides == b.strides;
}

// The configuration of a call, or the status refusing it: every tensor descriptor given must be x's layout,
// the channel descriptor (1, C, 1, 1) float32, the activation a ReLU where the operations fuse one.
cudnnStatus_t configure(cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, cudnnTensorDescriptor_t x,
                        std::initializer_list<cudnnTensorDescriptor_t> alike, cudnnTensorDescriptor_t z,
                        cudnnTensorDescriptor_t channels, cudnnActivationDescriptor_t activation,
                        emulation::DnnBatchNorm& out) {
  if (x == nullptr) return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "no x descriptor");
  for (const cudnnTensorDescriptor_t d : alike) {
    if (d == nullptr || !same_layout(d->tensor, x->tensor)) {
      return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a tensor descriptor unlike x's");
    }
  }
  if (z != nullptr && !same_layout(z->tensor, x->tensor)) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "z's descriptor unlike x's");
  }
  if (z != nullptr && ops != CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "z given to operations without the residual's addition");
  }
  const bool relu = activation != nullptr && activation->set;
  const std::string mismatch = emulation::batch_norm_mismatch(mode, ops, x->tensor, z != nullptr, relu);
  if (!mismatch.empty()) return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, mismatch);
  if (channels != nullptr) {
    const DnnTensor& c = channels->tensor;
    if (c.type != CUDNN_DATA_FLOAT || c.extents != std::vector<int64_t>{1, x->tensor.extents[1], 1, 1}) {
      return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a channel descriptor other than (1, C, 1, 1) float32");
    }
  }
  out.ops = ops;
  out.x = x->tensor;
  return CUDNN_STATUS_SUCCESS;
}

// An operand's data, its bytes and its name.
struct Span {
  const void* data;
  size_t bytes;
  const char* name;
};

// Whether every span lies in the emulated device's memory (null data: an optional operand not given).
cudnnStatus_t check_memory(std::initializer_list<Span> spans) {
  for (const Span& s : spans) {
    if (s.data != nullptr && !emulation::device_span(s.data, s.bytes)) {
      return emulation::refuse(CUDNN_STATUS_BAD_PARAM, kusari::cat("expected ", s.name, "'s ", s.bytes,
                                                                   " bytes in one allocation of the emulated device"));
    }
  }
  return CUDNN_STATUS_SUCCESS;
}

// A backward's configuration (configure): y's descriptor too where the operations fuse a ReLU.
cudnnStatus_t configure_backward(cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, cudnnTensorDescriptor_t x,
                                 cudnnTensorDescriptor_t y, cudnnTensorDescriptor_t dy, cudnnTensorDescriptor_t dx,
                                 cudnnTensorDescriptor_t dz, cudnnTensorDescriptor_t channels,
                                 cudnnActivationDescriptor_t activation, emulation::DnnBatchNorm& out) {
  if (ops == CUDNN_BATCHNORM_OPS_BN) return configure(mode, ops, x, {dy, dx}, dz, channels, activation, out);
  if (y == nullptr) return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a fused ReLU's backward needs y");
  return configure(mode, ops, x, {y, dy, dx}, dz, channels, activation, out);
}

// Whether the persistent mode's data (each at least 16-byte aligned: its kernels load several elements at
// once) is so.
cudnnStatus_t check_alignment(cudnnBatchNormMode_t mode, std::initializer_list<const void*> data) {
  if (mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT) return CUDNN_STATUS_SUCCESS;
  for (const void* p : data) {
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) {
      return emulation::refuse(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER,
                               "the persistent mode's data starting off a 16-byte boundary");
    }
  }
  return CUDNN_STATUS_SUCCESS;
}

// A scale as the calls take it (a float, for the types the emulation's batch normalization takes).
double scale_of(const void* scale) { return emulation::scale_value(scale, CUDNN_DATA_FLOAT); }

// Whether a call's workspace and reserve are given, of their sizes, in the emulated device's memory.
cudnnStatus_t check_scratch(const emulation::DnnBatchNorm& bn, const void* workspace, size_t workspace_size,
                            const void* reserve, size_t reserve_size) {
  if (workspace == nullptr || reserve == nullptr) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "no workspace or reserve");
  }
  if (workspace_size < workspace_bytes(bn.x) || reserve_size < emulation::batch_norm_reserve_bytes(bn.x)) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a workspace or reserve smaller than its size");
  }
  return check_memory({{workspace, workspace_bytes(bn.x), "the workspace"},
                       {reserve, emulation::batch_norm_reserve_bytes(bn.x), "the reserve"}});
}

}  // namespace

cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* d) { return emulation::made(d); }

cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d) { return emulation::destroyed(d); }

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t nan, double) {
  if (mode != CUDNN_ACTIVATION_RELU || nan != CUDNN_PROPAGATE_NAN) {
    return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "the emulation takes a ReLU propagating NaN only");
  }
  d->set = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derived, const cudnnTensorDescriptor_t x,
                                            cudnnBatchNormMode_t mode) {
  if (x->tensor.extents.size() != 4 || mode == CUDNN_BATCHNORM_PER_ACTIVATION) {
    return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "the emulation derives spatial 4-D descriptors only");
  }
  const int64_t c = x->tensor.extents[1];
  const cudnnDataType_t type = x->tensor.type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  derived->tensor = {type, {1, c, 1, 1}, {c, 1, 1, 1}};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t z, const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t channels,
    const cudnnActivationDescriptor_t activation, size_t* bytes) {
  emulation::DnnBatchNorm bn;
  if (const cudnnStatus_t s = configure(mode, ops, x, {y}, z, channels, activation, bn); s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  *bytes = workspace_bytes(bn.x);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t dy, const cudnnTensorDescriptor_t dz,
    const cudnnTensorDescriptor_t dx, const cudnnTensorDescriptor_t channels,
    const cudnnActivationDescriptor_t activation, size_t* bytes) {
  emulation::DnnBatchNorm bn;
  if (const cudnnStatus_t s = configure_backward(mode, ops, x, y, dy, dx, dz, channels, activation, bn);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  *bytes = workspace_bytes(bn.x);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cudnnHandle_t, cudnnBatchNormMode_t mode,
                                                                   cudnnBatchNormOps_t ops,
                                                                   const cudnnActivationDescriptor_t activation,
                                                                   const cudnnTensorDescriptor_t x, size_t* bytes) {
  emulation::DnnBatchNorm bn;
  // z is not described here: the residual's operation is checked for it at the calls themselves.
  const cudnnBatchNormOps_t checked =
      ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION ? CUDNN_BATCHNORM_OPS_BN_ACTIVATION : ops;
  if (const cudnnStatus_t s = configure(mode, checked, x, {}, nullptr, nullptr, activation, bn);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  *bytes = emulation::batch_norm_reserve_bytes(bn.x);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t z_desc, const void* z,
    const cudnnTensorDescriptor_t y_desc, void* y, const cudnnTensorDescriptor_t channels, const void* gamma,
    const void* bias, double factor, void* running_mean, void* running_variance, double epsilon, void* saved_mean,
    void* saved_inv_std, const cudnnActivationDescriptor_t activation, void* workspace, size_t workspace_size,
    void* reserve, size_t reserve_size) {
  emulation::DnnBatchNorm bn;
  if (const cudnnStatus_t s = configure(mode, ops, x_desc, {y_desc}, z_desc, channels, activation, bn);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  if ((z_desc == nullptr) != (z == nullptr)) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "z without its descriptor");
  }
  if (channels == nullptr || gamma == nullptr || bias == nullptr) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "no scale, bias or their descriptor");
  }
  if (const cudnnStatus_t s = check_scratch(bn, workspace, workspace_size, reserve, reserve_size);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  bn.epsilon = epsilon;
  const size_t data = bn.x.span_bytes(), per_channel = sizeof(float) * static_cast<size_t>(bn.x.extents[1]);
  if (const cudnnStatus_t s = check_memory(
          {{x, data, "x"}, {z, data, "z"}, {y, data, "y"}, {gamma, per_channel, "the scale"},
           {bias, per_channel, "the bias"}, {running_mean, per_channel, "the running mean"},
           {running_variance, per_channel, "the running variance"}, {saved_mean, per_channel, "the saved mean"},
           {saved_inv_std, per_channel, "the saved inverse deviation"}});
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  if (const cudnnStatus_t s = check_alignment(mode, {x, z, y}); s != CUDNN_STATUS_SUCCESS) return s;
  const double a = scale_of(alpha), b = scale_of(beta);
  emulation::enqueue(handle->stream, [=] {
    emulation::batch_norm_forward(bn, a, b, x, z, y, static_cast<const float*>(gamma), static_cast<const float*>(bias),
                                  factor, static_cast<float*>(running_mean), static_cast<float*>(running_variance),
                                  static_cast<float*>(saved_mean), static_cast<float*>(saved_inv_std), reserve);
    std::memset(workspace, 0xff, workspace_bytes(bn.x));
  });
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha_data,
    const void* beta_data, const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc,
    const void* x, const cudnnTensorDescriptor_t y_desc, const void* y, const cudnnTensorDescriptor_t dy_desc,
    const void* dy, const cudnnTensorDescriptor_t dz_desc, void* dz, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t channels, const void* gamma, const void*, void* dgamma, void* dbeta, double epsilon,
    const void* saved_mean, const void* saved_inv_std, const cudnnActivationDescriptor_t activation, void* workspace,
    size_t workspace_size, void* reserve, size_t reserve_size) {
  emulation::DnnBatchNorm bn;
  if (ops != CUDNN_BATCHNORM_OPS_BN && y == nullptr) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "a fused ReLU's backward needs y");
  }
  if (const cudnnStatus_t s = configure_backward(mode, ops, x_desc, y_desc, dy_desc, dx_desc, dz_desc, channels,
                                                 activation, bn);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  if ((dz_desc == nullptr) != (dz == nullptr)) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "dz without its descriptor");
  }
  if (channels == nullptr || gamma == nullptr || dgamma == nullptr || dbeta == nullptr) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "no scale, its gradients or their descriptor");
  }
  if ((saved_mean == nullptr) != (saved_inv_std == nullptr)) {
    return emulation::refuse(CUDNN_STATUS_BAD_PARAM, "one of the saved mean and inverse deviation without the other");
  }
  bn.epsilon = epsilon;
  if (const cudnnStatus_t s = check_scratch(bn, workspace, workspace_size, reserve, reserve_size);
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  const size_t data = bn.x.span_bytes(), per_channel = sizeof(float) * static_cast<size_t>(bn.x.extents[1]);
  if (const cudnnStatus_t s = check_memory(
          {{x, data, "x"}, {y, data, "y"}, {dy, data, "dy"}, {dz, data, "dz"}, {dx, data, "dx"},
           {gamma, per_channel, "the scale"}, {dgamma, per_channel, "the scale's gradient"},
           {dbeta, per_channel, "the bias's gradient"}, {saved_mean, per_channel, "the saved mean"},
           {saved_inv_std, per_channel, "the saved inverse deviation"}});
      s != CUDNN_STATUS_SUCCESS) {
    return s;
  }
  if (const cudnnStatus_t s = check_alignment(mode, {x, y, dy, dz, dx}); s != CUDNN_STATUS_SUCCESS) return s;
  const double ad = scale_of(alpha_data), bd = scale_of(beta_data), ap = scale_of(alpha_param),
               bp = scale_of(beta_param);
  emulation::enqueue(handle->stream, [=] {
    emulation::batch_norm_backward(bn, ad, bd, ap, bp, x, y, dy, dz, dx, static_cast<const float*>(gamma),
                                   static_cast<float*>(dgamma), static_cast<float*>(dbeta),
                                   static_cast<const float*>(saved_mean), static_cast<const float*>(saved_inv_std),
                                   reserve);
    std::memset(workspace, 0xff, workspace_bytes(bn.x));
  });
  return CUDNN_STATUS_SUCCESS;
}

// cuDNN's fused batch normalization on the host, for the emulation's cuDNN (detail/emulated_cudnn.h): the
// statistics summed in double, each element's map in float32 from the float32 statistics, as the saved
// statistics the forward returns hold them.

#include <kusari/kernels/cuda/detail/emulated_cudnn.h>

#include <cmath>
#include <functional>
#include <limits>

#include <kusari/core/error.h>

namespace kusari::kernels::cuda::emulation {
namespace {

// Element `offset` of data of `type` as float.
float load(const void* data, cudnnDataType_t type, int64_t offset) { return load_element<float>(data, type, offset); }

// Calls visit(offset) for every element of channel `c` of t, in the order n, h, w.
void each_in_channel(const DnnTensor& t, int64_t c, const std::function<void(int64_t)>& visit) {
  for (int64_t n = 0; n < t.extents[0]; ++n)
    for (int64_t h = 0; h < t.extents[2]; ++h)
      for (int64_t w = 0; w < t.extents[3]; ++w)
        visit(n * t.strides[0] + c * t.strides[1] + h * t.strides[2] + w * t.strides[3]);
}

// The elements each channel's statistics cover.
int64_t per_channel(const DnnTensor& t) { return t.extents[0] * t.extents[2] * t.extents[3]; }

// alpha · value + beta · what `data` holds at `offset` (left unread where beta is 0).
float blend(double alpha, double beta, float value, const void* data, cudnnDataType_t type, int64_t offset) {
  const double old = beta == 0 ? 0.0 : beta * load(data, type, offset);
  return static_cast<float>(alpha * value + old);
}

// Channel c's mean and biased variance over x, summed in double.
void channel_statistics(const DnnBatchNorm& bn, const void* x, int64_t c, double& mean, double& variance) {
  const DnnTensor& t = bn.x;
  const auto m = static_cast<double>(per_channel(t));
  double sum = 0, squares = 0;
  each_in_channel(t, c, [&](int64_t at) { sum += load(x, t.type, at); });
  mean = sum / m;
  each_in_channel(t, c, [&](int64_t at) {
    const double d = load(x, t.type, at) - mean;
    squares += d * d;
  });
  variance = squares / m;
}

// The ReLU cuDNN's fused operations apply (NaN kept).
float relu(float v) { return v > 0 || std::isnan(v) ? v : 0.0f; }

}  // namespace

std::string batch_norm_mismatch(cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const DnnTensor& x, bool has_z,
                                bool has_relu) {
  if (x.extents.size() != 4) return "the emulation takes 4-D tensors only";
  if (mode != CUDNN_BATCHNORM_SPATIAL && mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT) {
    return "the emulation takes the spatial modes only";
  }
  if (x.type != CUDNN_DATA_FLOAT && x.type != CUDNN_DATA_HALF && x.type != CUDNN_DATA_BFLOAT16) {
    return "the emulation's fused batch normalization takes float32, float16 and bfloat16";
  }
  if (per_channel(x) < 2) return cat("a channel of ", per_channel(x), " elements has no variance");
  const int64_t c = x.extents[1], h = x.extents[2], w = x.extents[3];
  const bool packed_nhwc = x.strides[0] == h * w * c && x.strides[1] == 1 && x.strides[2] == w * c && x.strides[3] == c;
  if (mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT && !packed_nhwc) return "the persistent mode takes packed NHWC only";
  if (ops == CUDNN_BATCHNORM_OPS_BN) return "";
  if (mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT) return "fused operations take the persistent mode only";
  if (c % 4 != 0) return cat("fused operations take channels in multiples of 4, got ", c);
  if (!has_relu) return "fused operations need a ReLU activation";
  if (ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && !has_z) return "the residual's operation needs z";
  return "";
}

size_t batch_norm_reserve_bytes(const DnnTensor& x) { return 2 * sizeof(float) * static_cast<size_t>(x.extents[1]); }

void batch_norm_forward(const DnnBatchNorm& bn, double alpha, double beta_y, const void* x, const void* z, void* y,
                        const float* gamma, const float* beta, double factor, float* running_mean,
                        float* running_variance, float* saved_mean, float* saved_inv_std, void* reserve) {
  const DnnTensor& t = bn.x;
  const int64_t m = per_channel(t), channels = t.extents[1];
  auto* kept = static_cast<float*>(reserve);
  for (int64_t c = 0; c < channels; ++c) {
    double mean = 0, variance = 0;
    channel_statistics(bn, x, c, mean, variance);
    const auto mean32 = static_cast<float>(mean);
    const auto inv_std32 = static_cast<float>(1.0 / std::sqrt(variance + bn.epsilon));
    kept[c] = mean32;
    kept[channels + c] = inv_std32;
    if (saved_mean != nullptr) saved_mean[c] = mean32;
    if (saved_inv_std != nullptr) saved_inv_std[c] = inv_std32;
    if (running_mean != nullptr) {
      running_mean[c] = static_cast<float>((1 - factor) * running_mean[c] + factor * mean);
    }
    if (running_variance != nullptr) {
      const double unbiased = variance * static_cast<double>(m) / static_cast<double>(m - 1);
      running_variance[c] = static_cast<float>((1 - factor) * running_variance[c] + factor * unbiased);
    }
    each_in_channel(t, c, [&](int64_t at) {
      float v = gamma[c] * ((load(x, t.type, at) - mean32) * inv_std32) + beta[c];
      if (bn.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) v += load(z, t.type, at);
      if (bn.ops != CUDNN_BATCHNORM_OPS_BN) v = relu(v);
      store_element(y, t.type, at, blend(alpha, beta_y, v, y, t.type, at));
    });
  }
}

void batch_norm_backward(const DnnBatchNorm& bn, double alpha_data, double beta_data, double alpha_param,
                         double beta_param, const void* x, const void* y, const void* dy, void* dz, void* dx,
                         const float* gamma, float* dgamma, float* dbeta, const float* saved_mean,
                         const float* saved_inv_std, const void* reserve) {
  const DnnTensor& t = bn.x;
  const int64_t m = per_channel(t), channels = t.extents[1];
  const auto* kept = static_cast<const float*>(reserve);
  const bool relu_fused = bn.ops != CUDNN_BATCHNORM_OPS_BN;
  for (int64_t c = 0; c < channels; ++c) {
    float mean = 0, inv_std = 0;
    if (saved_mean != nullptr) {
      mean = saved_mean[c];
      inv_std = saved_inv_std[c];
    } else {
      double mean64 = 0, variance = 0;
      channel_statistics(bn, x, c, mean64, variance);
      mean = static_cast<float>(mean64);
      inv_std = static_cast<float>(1.0 / std::sqrt(variance + bn.epsilon));
    }
    // A reserve that is not its forward's reads as garbage.
    if (kept[c] != mean || kept[channels + c] != inv_std) inv_std = std::numeric_limits<float>::quiet_NaN();
    // dy where the forward's ReLU passed its input on (everywhere without one).
    const auto passed = [&](int64_t at) {
      return relu_fused && !(load(y, t.type, at) > 0) ? 0.0f : load(dy, t.type, at);
    };
    double sum_dy = 0, sum_dy_xhat = 0;
    each_in_channel(t, c, [&](int64_t at) {
      const float g = passed(at);
      sum_dy += g;
      sum_dy_xhat += static_cast<double>(g) * ((load(x, t.type, at) - mean) * inv_std);
    });
    const auto mean_dy = static_cast<float>(sum_dy / static_cast<double>(m));
    const auto mean_dy_xhat = static_cast<float>(sum_dy_xhat / static_cast<double>(m));
    each_in_channel(t, c, [&](int64_t at) {
      const float g = passed(at);
      const float xhat = (load(x, t.type, at) - mean) * inv_std;
      const float gx = gamma[c] * inv_std * (g - mean_dy - xhat * mean_dy_xhat);
      store_element(dx, t.type, at, blend(alpha_data, beta_data, gx, dx, t.type, at));
      if (bn.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) {
        store_element(dz, t.type, at, blend(alpha_data, beta_data, g, dz, t.type, at));
      }
    });
    dgamma[c] = static_cast<float>(alpha_param * sum_dy_xhat + (beta_param == 0 ? 0.0 : beta_param * dgamma[c]));
    dbeta[c] = static_cast<float>(alpha_param * sum_dy + (beta_param == 0 ? 0.0 : beta_param * dbeta[c]));
  }
}

}  // namespace kusari::kernels::cuda::emulation

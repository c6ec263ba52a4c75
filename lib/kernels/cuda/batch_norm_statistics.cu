// A cuDNN batch normalization's statistics in the contract's terms (detail/batch_norm_statistics.h).

#include <kusari/kernels/cuda/detail/batch_norm_statistics.h>

#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/detail/elementwise_functions.h>

namespace kusari::kernels::cuda {
namespace {

// Channel c's statistics and affine map from the saved mean and inverse standard deviation.
__global__ void statistics_from_saved_elements(const float* saved_mean, const float* saved_inv_std, const float* gamma,
                                               const float* beta, double eps, int64_t channels, double* mean,
                                               double* inv_std, double* var, double* scale, double* shift) {
  KUSARI_FOR_EACH_ELEMENT(c, channels) {
    const double m = saved_mean[c], s = saved_inv_std[c];
    mean[c] = m;
    inv_std[c] = s;
    var[c] = elementwise::Maximum<double>{}(1.0 / (s * s) - eps, 0.0);
    const double a = static_cast<double>(gamma[c]) * s;
    scale[c] = a;
    shift[c] = __dsub_rn(static_cast<double>(beta[c]), __dmul_rn(m, a));  // unfused, as on the host
  }
}

}  // namespace

void statistics_from_saved(const Array& saved_mean, const Array& saved_inv_std, const Array& gamma32,
                           const Array& beta32, double eps, BatchNormStatistics& s) {
  const Device device = saved_mean.device();
  const int64_t channels = saved_mean.size();
  for (Array* a : {&s.mean, &s.inv_std, &s.var, &s.scale, &s.shift}) {
    *a = Array::empty({channels}, Dtype::float64, device);
  }
  if (channels == 0) return;
  DeviceGuard guard(device.index);
  launch_kernel(&statistics_from_saved_elements, blocks_for(channels), kThreads, current_stream(device.index),
      static_cast<const float*>(saved_mean.raw_data()), static_cast<const float*>(saved_inv_std.raw_data()),
      static_cast<const float*>(gamma32.raw_data()), static_cast<const float*>(beta32.raw_data()), eps, channels,
      static_cast<double*>(s.mean.raw_data()), static_cast<double*>(s.inv_std.raw_data()),
      static_cast<double*>(s.var.raw_data()), static_cast<double*>(s.scale.raw_data()),
      static_cast<double*>(s.shift.raw_data()));
  check(cudaGetLastError(), "batch normalization statistics");
}

}  // namespace kusari::kernels::cuda

// Batch normalization's per-channel arithmetic, one launch each: a cuDNN batch normalization's statistics
// in the contract's terms (detail/batch_norm_statistics.h), the BatchNormStatisticsOfSums and
// BatchNormBackwardCoefficients kernels of the channel passes and the BatchNormRunningAverages kernel (the
// CPU's arithmetic, batch_norm_functions.h).

#include <kusari/kernels/cuda/detail/batch_norm_statistics.h>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/device_elements.cuh>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/batch_norm_functions.h>
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
    const batch_norm::AffineMap map =
        batch_norm::affine_map(m, s, static_cast<double>(gamma[c]), static_cast<double>(beta[c]));
    scale[c] = map.scale;
    shift[c] = map.shift;
  }
}

// Each element's (a group's channel's) statistics from its sums; P: gamma's and beta's element type.
template <class P>
__global__ void statistics_of_sums_elements(const double* sums, const double* square_sums, const P* gamma,
                                            const P* beta, double count, double eps, int64_t elements,
                                            int64_t channels, double* mean, double* var, double* inv_std,
                                            double* scale, double* shift) {
  KUSARI_FOR_EACH_ELEMENT(i, elements) {
    const int64_t c = i % channels;
    const batch_norm::ChannelStatistics s = batch_norm::statistics_of_sums(
        sums[i], square_sums[i], count, eps, static_cast<double>(load(gamma[c])), static_cast<double>(load(beta[c])));
    mean[i] = s.mean;
    var[i] = s.var;
    inv_std[i] = s.inv_std;
    scale[i] = s.scale;
    shift[i] = s.shift;
  }
}

// Each element's gamma gradient and, where a is not null, its data gradient's map; the totals, where not
// null, stand for the element's Σgy and gamma gradient in the map.
template <class P>
__global__ void backward_coefficients_elements(const double* gy_sums, const double* gy_x_sums, const double* mean,
                                               const double* inv_std, const P* gamma, const double* gbeta_total,
                                               const double* ggamma_total, double count, int64_t elements,
                                               int64_t channels, double* ggamma, double* a, double* b, double* d) {
  KUSARI_FOR_EACH_ELEMENT(i, elements) {
    const double own = batch_norm::gamma_gradient(gy_sums[i], gy_x_sums[i], mean[i], inv_std[i]);
    ggamma[i] = own;
    if (a == nullptr) continue;
    const batch_norm::DataGradientMap m = batch_norm::data_gradient_map(
        gbeta_total ? gbeta_total[i] : gy_sums[i], ggamma_total ? ggamma_total[i] : own, mean[i], inv_std[i],
        static_cast<double>(load(gamma[i % channels])), count);
    a[i] = m.a;
    b[i] = m.b;
    d[i] = m.d;
  }
}

// Channel c's running mean and variance folded with the batch's (T: the averages' type, S: the statistics').
template <class T, class S>
__global__ void running_averages_elements(const S* mean, const S* var, T decay, T mean_share, T var_share,
                                          int64_t channels, T* average_mean, T* average_var) {
  KUSARI_FOR_EACH_ELEMENT(c, channels) {
    average_mean[c] = batch_norm::running_average(average_mean[c], mean[c], decay, mean_share);
    average_var[c] = batch_norm::running_average(average_var[c], var[c], decay, var_share);
  }
}

// A float64 operand's data (null where undefined).
const double* operand_data(const Array& a) {
  return a.defined() ? static_cast<const double*>(a.raw_data()) : nullptr;
}
// A float64 result's data (null where undefined).
double* result_data(const Array& a) { return a.defined() ? static_cast<double*>(a.raw_data()) : nullptr; }

// Gamma and beta contiguous, in their dtype where they share one, else both float64.
std::pair<Array, Array> parameters_alike(const Array& gamma, const Array& beta) {
  if (gamma.dtype() == beta.dtype()) return {gamma.contiguous(), beta.contiguous()};
  return {gamma.astype(Dtype::float64).contiguous(), beta.astype(Dtype::float64).contiguous()};
}

void statistics_of_sums_kernel(const Array& sums, const Array& square_sums, double eps, const Array& gamma,
                               const Array& beta, const BatchNormStatistics& s) {
  const char* op = "batch_norm_statistics_of_sums";
  const int index = device_of<4>({&sums, &square_sums, &gamma, &beta}, op);
  if (sums.size() == 0) return;
  const auto [g, b] = parameters_alike(gamma, beta);
  DeviceGuard guard(index);
  visit_floating_dtype(g.dtype(), op, [&]<class P>() {
    launch_kernel(&statistics_of_sums_elements<P>, blocks_for(sums.size()), kThreads, current_stream(index),
                  operand_data(sums), operand_data(square_sums), static_cast<const P*>(g.raw_data()),
                  static_cast<const P*>(b.raw_data()), static_cast<double>(s.count), eps, sums.size(), g.size(),
                  result_data(s.mean), result_data(s.var), result_data(s.inv_std), result_data(s.scale),
                  result_data(s.shift));
  });
  check(cudaGetLastError(), op);
}

void backward_coefficients_kernel(const Array& gy_sums, const Array& gy_x_sums, const BatchNormStatistics& s,
                                  const Array& gamma, const Array& gbeta_total, const Array& ggamma_total,
                                  const Array& ggamma, const Array& a, const Array& b, const Array& d) {
  const char* op = "batch_norm_backward_coefficients";
  const int index = device_of<6>({&gy_sums, &gy_x_sums, &s.mean, &s.inv_std, &gamma, &ggamma}, op);
  if (gy_sums.size() == 0) return;
  const Array g = gamma.contiguous();
  DeviceGuard guard(index);
  visit_floating_dtype(g.dtype(), op, [&]<class P>() {
    launch_kernel(&backward_coefficients_elements<P>, blocks_for(gy_sums.size()), kThreads, current_stream(index),
                  operand_data(gy_sums), operand_data(gy_x_sums), operand_data(s.mean), operand_data(s.inv_std),
                  static_cast<const P*>(g.raw_data()), operand_data(gbeta_total), operand_data(ggamma_total),
                  static_cast<double>(s.count), gy_sums.size(), g.size(), result_data(ggamma), result_data(a),
                  result_data(b), result_data(d));
  });
  check(cudaGetLastError(), op);
}

void running_averages_kernel(const Array& mean, const Array& var, double decay, double mean_share,
                             double var_share, const Array& average_mean, const Array& average_var) {
  const char* op = "batch_norm_running_averages";
  const int index = device_of<4>({&mean, &var, &average_mean, &average_var}, op);
  if (mean.size() == 0) return;
  DeviceGuard guard(index);
  batch_norm::visit_running_average_dtypes(average_mean.dtype(), mean.dtype(), [&]<class T, class S>() {
    launch_kernel(&running_averages_elements<T, S>, blocks_for(mean.size()), kThreads, current_stream(index),
                  static_cast<const S*>(mean.raw_data()), static_cast<const S*>(var.raw_data()),
                  static_cast<T>(decay), static_cast<T>(mean_share), static_cast<T>(var_share), mean.size(),
                  static_cast<T*>(average_mean.raw_data()), static_cast<T*>(average_var.raw_data()));
  });
  check(cudaGetLastError(), op);
}

}  // namespace

void register_batch_norm_statistics_kernels() {
  install_kernel<kernel_ops::BatchNormStatisticsOfSums>(DeviceType::cuda, "cuda", statistics_of_sums_kernel);
  install_kernel<kernel_ops::BatchNormBackwardCoefficients>(DeviceType::cuda, "cuda", backward_coefficients_kernel);
  install_kernel<kernel_ops::BatchNormRunningAverages>(DeviceType::cuda, "cuda", running_averages_kernel);
}

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

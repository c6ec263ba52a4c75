#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: batch normalization's
// per-channel arithmetic on float64 sums (the BatchNormStatisticsOfSums and BatchNormBackwardCoefficients
// contracts) and its running averages (BatchNormRunningAverages), so that the CPU's loop and the CUDA
// kernel compute one thing to the bit. Every product that
// feeds an addition is rounded apart: nvcc fuses a·b + c into one multiply-add by default, and so may a
// host compiler given FMA instructions.

#include <cmath>

#include <kusari/core/dtype.h>
#include <kusari/core/error.h>

#include <kusari/kernels/detail/elementwise_functions.h>

namespace kusari::kernels::batch_norm {

// a·b rounded to T (float or double) on its own, never fused into the addition it feeds.
template <class T>
KUSARI_HOST_DEVICE inline T apart_product(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == sizeof(float)) {
    return __fmul_rn(a, b);
  } else {
    return __dmul_rn(a, b);
  }
#else
  const volatile T product = a * b;  // stored, so no compiler contracts it
  return product;
#endif
}

// One channel's normalization as an affine map, y = scale·x + shift before the activation.
struct AffineMap {
  double scale, shift;
};

// The map of a channel with mean and inv_std, scaled by gamma and shifted by beta.
KUSARI_HOST_DEVICE inline AffineMap affine_map(double mean, double inv_std, double gamma, double beta) {
  const double scale = gamma * inv_std;
  return {scale, beta - apart_product(mean, scale)};
}

// One channel's statistics and affine map (see BatchNormStatisticsOfSums).
struct ChannelStatistics {
  double mean, var, inv_std, scale, shift;
};

// The statistics of `count` elements with sum Σx and square sum Σx², with the channel's gamma and beta.
KUSARI_HOST_DEVICE inline ChannelStatistics statistics_of_sums(double sum, double square_sum, double count, double eps,
                                                             double gamma, double beta) {
  ChannelStatistics s;
  s.mean = sum / count;
  s.var = elementwise::Maximum<double>{}(square_sum / count - apart_product(s.mean, s.mean), 0.0);
  s.inv_std = 1.0 / std::sqrt(s.var + eps);
  const AffineMap map = affine_map(s.mean, s.inv_std, gamma, beta);
  s.scale = map.scale;
  s.shift = map.shift;
  return s;
}

// gamma's gradient from one channel's Σgy and Σgy·x, and its forward's mean and inv_std.
KUSARI_HOST_DEVICE inline double gamma_gradient(double gy_sum, double gy_x_sum, double mean, double inv_std) {
  return inv_std * (gy_x_sum - apart_product(mean, gy_sum));
}

// One channel's map of the data gradient, gx = a·gy + b·x + d.
struct DataGradientMap {
  double a, b, d;
};

// The data gradient's map from the batch's (or the whole split batch's) Σgy and gamma gradient of `count`
// elements a channel, with the forward's mean and inv_std and the channel's gamma.
KUSARI_HOST_DEVICE inline DataGradientMap data_gradient_map(double gbeta, double ggamma, double mean, double inv_std,
                                                            double gamma, double count) {
  DataGradientMap m;
  m.a = gamma * inv_std;
  m.b = -(m.a * ggamma * inv_std / count);
  m.d = -(m.a * gbeta / count) - apart_product(m.b, mean);
  return m;
}

// A running average's next value, decay·average + share·batch, in T (float or double) with the batch's
// statistic first rounded to T (see BatchNormRunningAverages).
template <class T, class S>
KUSARI_HOST_DEVICE inline T running_average(T average, S batch, T decay, T share) {
  return apart_product(decay, average) + apart_product(share, static_cast<T>(batch));
}

// visitor.operator()<T, S>() for the averages' and the statistics' dtypes, each float32 (float) or float64
// (double), as BatchNormRunningAverages takes them.
template <class Visitor>
void visit_running_average_dtypes(Dtype averages, Dtype statistics, Visitor&& visitor) {
  const auto single_or_double = [](Dtype dtype, auto&& next) {
    if (dtype == Dtype::float32) return next.template operator()<float>();
    if (dtype != Dtype::float64) {
      throw DtypeError(cat("batch_norm_running_averages: expected float32 or float64, got ", dtype));
    }
    return next.template operator()<double>();
  };
  single_or_double(averages, [&]<class T>() {
    single_or_double(statistics, [&]<class S>() { visitor.template operator()<T, S>(); });
  });
}

}  // namespace kusari::kernels::batch_norm

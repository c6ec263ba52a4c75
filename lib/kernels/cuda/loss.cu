// CUDA softmax cross-entropy straight from integer labels, as the CPU computes it: one warp per row
// writes the row's log softmax and the sample's loss (in double), the gradient one thread per element.
// The labels are checked on the host first (a copy of N integers), so a label outside [0, C) fails
// with the CPU's IndexError before any kernel runs.

#include <cmath>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/ops/loss.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

constexpr const char* kOp = "softmax_cross_entropy";

// The labels as int64 on the host and the number of samples not ignored; throws IndexError at the
// first other label outside [0, classes).
int64_t count_targets(const Array& t, int64_t classes, int64_t ignore_label) {
  if (t.dtype() != Dtype::int32 && t.dtype() != Dtype::int64) {
    throw DtypeError(cat(kOp, ": expected labels of dtype int32 or int64, got ", t.dtype()));
  }
  const std::vector<int64_t> labels = t.to_vector<int64_t>();
  int64_t counted = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const int64_t label = labels[i];
    if (label == ignore_label) continue;
    if (label < 0 || label >= classes) {
      throw IndexError(cat(kOp, ": label ", label, " of sample ", i, " is outside [0, ", classes, ") for C = ", classes,
                           " classes"));
    }
    ++counted;
  }
  return counted;
}

// Where one sample's scores, label, log softmax and loss are.
struct RowLayout {
  int64_t samples, classes;
  const char* x;
  int64_t x_row, x_column;
  const char* labels;
  bool wide_labels;
  int64_t label_stride;
  char* log_p;     // contiguous (N, C)
  double* losses;  // (N,), contiguous
  double peak, uniform;
  int64_t ignore_label;
};

// Of two partial maxima, the one the CPU's scan keeps: a NaN, else the larger.
__device__ inline float larger(float a, float b) { return a != a ? a : (b != b ? b : (b > a ? b : a)); }
__device__ inline double larger(double a, double b) { return a != a ? a : (b != b ? b : (b > a ? b : a)); }

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;

template <class T>
__global__ void forward_rows(RowLayout layout) {
  using C = compute_type_t<T>;
  const int lane = threadIdx.x % kWarp;
  const int64_t i = blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / kWarp;
  if (i >= layout.samples) return;
  const T* x = reinterpret_cast<const T*>(layout.x) + i * layout.x_row;
  C top = -INFINITY;
  for (int64_t c = lane; c < layout.classes; c += kWarp) top = larger(top, load(x[c * layout.x_column]));
  for (int offset = kWarp / 2; offset > 0; offset /= 2) top = larger(top, __shfl_xor_sync(0xffffffffu, top, offset));
  double total = 0;
  for (int64_t c = lane; c < layout.classes; c += kWarp)
    total += static_cast<double>(exp(C(load(x[c * layout.x_column]) - top)));
  for (int offset = kWarp / 2; offset > 0; offset /= 2) total += __shfl_xor_sync(0xffffffffu, total, offset);
  const C shift = static_cast<C>(top + static_cast<C>(log(total)));
  T* log_p = reinterpret_cast<T*>(layout.log_p) + i * layout.classes;
  double log_sum = 0;
  for (int64_t c = lane; c < layout.classes; c += kWarp) {
    const C value = C(load(x[c * layout.x_column]) - shift);
    log_p[c] = store<T>(value);
    log_sum += static_cast<double>(value);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) log_sum += __shfl_xor_sync(0xffffffffu, log_sum, offset);
  if (lane != 0) return;
  const int64_t label = layout.wide_labels ? reinterpret_cast<const int64_t*>(layout.labels)[i * layout.label_stride]
                                           : reinterpret_cast<const int32_t*>(layout.labels)[i * layout.label_stride];
  double loss = 0;
  if (label != layout.ignore_label) {
    if (layout.peak != 0) loss -= layout.peak * static_cast<double>(C(load(x[label * layout.x_column]) - shift));
    if (layout.uniform != 0) loss -= layout.uniform * log_sum;
  }
  layout.losses[i] = loss;
}

template <class T>
__global__ void store_losses(const double* losses, int64_t samples, T* out, int64_t stride) {
  KUSARI_FOR_EACH_ELEMENT(i, samples) { out[i * stride] = store<T>(losses[i]); }
}

void softmax_cross_entropy_kernel(const Array& x, const Array& t, const CrossEntropyTargets& targets,
                                  const Array& log_p, const Array& loss) {
  const int index = device_of<4>({&x, &t, &log_p, &loss}, kOp);
  const int64_t samples = x.shape()[0], classes = x.shape()[1];
  const int64_t counted = count_targets(t, classes, targets.ignore_label);
  const Array per_sample = Array::empty({samples}, Dtype::float64, x.device());
  if (samples > 0) {
    DeviceGuard guard(index);
    RowLayout layout{samples,
                     classes,
                     static_cast<const char*>(x.raw_data()),
                     x.strides()[0],
                     x.strides()[1],
                     static_cast<const char*>(t.raw_data()),
                     t.dtype() == Dtype::int64,
                     t.strides()[0],
                     static_cast<char*>(log_p.raw_data()),
                     static_cast<double*>(per_sample.raw_data()),
                     1 - targets.label_smoothing,
                     targets.label_smoothing / static_cast<double>(classes),
                     targets.ignore_label};
    const auto blocks = static_cast<unsigned>((samples + kRowsPerBlock - 1) / kRowsPerBlock);
    visit_floating_dtype(x.dtype(), kOp, [&]<class T>() {
      forward_rows<T><<<blocks, kRowsPerBlock * kWarp, 0, current_stream(index)>>>(layout);
    });
    check(cudaGetLastError(), kOp);
  }
  if (targets.mean) {
    const Array mean = ops::sum(per_sample) / static_cast<double>(std::max<int64_t>(counted, 1));
    loss.assign(mean.astype(loss.dtype()));
    return;
  }
  if (samples == 0) return;
  DeviceGuard guard(index);
  visit_floating_dtype(loss.dtype(), kOp, [&]<class T>() {
    store_losses<T><<<blocks_for(samples), kThreads, 0, current_stream(index)>>>(
        static_cast<const double*>(per_sample.raw_data()), samples, static_cast<T*>(loss.raw_data()),
        loss.strides()[0]);
  });
  check(cudaGetLastError(), kOp);
}

// Where the gradient's operands are.
struct GradLayout {
  int64_t samples, classes;
  const char* log_p;
  int64_t in_row, in_column;
  const char* gy;
  int64_t gy_stride;  // 0 for the mean's one value
  char* gx;
  int64_t out_row, out_column;
  const char* labels;
  bool wide_labels;
  int64_t label_stride;
  double scale, peak, uniform;
  int64_t ignore_label;
};

template <class T>
__global__ void gradient_elements(GradLayout layout) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(e, layout.samples * layout.classes) {
    const int64_t i = e / layout.classes, c = e % layout.classes;
    const int64_t label = layout.wide_labels ? reinterpret_cast<const int64_t*>(layout.labels)[i * layout.label_stride]
                                             : reinterpret_cast<const int32_t*>(layout.labels)[i * layout.label_stride];
    T& g = reinterpret_cast<T*>(layout.gx)[i * layout.out_row + c * layout.out_column];
    if (label == layout.ignore_label) {
      g = store<T>(C(0));
      continue;
    }
    const C factor = static_cast<C>(load(reinterpret_cast<const T*>(layout.gy)[i * layout.gy_stride]) * layout.scale);
    const C peak = static_cast<C>(layout.peak), uniform = static_cast<C>(layout.uniform);
    const C target = c == label ? C(peak + uniform) : uniform;
    const C p = load(reinterpret_cast<const T*>(layout.log_p)[i * layout.in_row + c * layout.in_column]);
    g = store<T>(C((exp(p) - target) * factor));
  }
}

void softmax_cross_entropy_grad_kernel(const Array& log_p, const Array& t, const Array& gy,
                                       const CrossEntropyTargets& targets, const Array& gx) {
  const int index = device_of<4>({&log_p, &t, &gy, &gx}, kOp);
  const int64_t samples = log_p.shape()[0], classes = log_p.shape()[1];
  const int64_t counted = count_targets(t, classes, targets.ignore_label);
  if (samples * classes == 0) return;
  DeviceGuard guard(index);
  const GradLayout layout{samples,
                          classes,
                          static_cast<const char*>(log_p.raw_data()),
                          log_p.strides()[0],
                          log_p.strides()[1],
                          static_cast<const char*>(gy.raw_data()),
                          targets.mean ? 0 : gy.strides()[0],
                          static_cast<char*>(gx.raw_data()),
                          gx.strides()[0],
                          gx.strides()[1],
                          static_cast<const char*>(t.raw_data()),
                          t.dtype() == Dtype::int64,
                          t.strides()[0],
                          targets.mean ? 1.0 / static_cast<double>(std::max<int64_t>(counted, 1)) : 1.0,
                          1 - targets.label_smoothing,
                          targets.label_smoothing / static_cast<double>(classes),
                          targets.ignore_label};
  visit_floating_dtype(log_p.dtype(), kOp, [&]<class T>() {
    gradient_elements<T><<<blocks_for(samples * classes), kThreads, 0, current_stream(index)>>>(layout);
  });
  check(cudaGetLastError(), kOp);
}

}  // namespace

void register_loss_kernels() {
  install_kernel<kernel_ops::SoftmaxCrossEntropy>(DeviceType::cuda, "cuda", softmax_cross_entropy_kernel);
  install_kernel<kernel_ops::SoftmaxCrossEntropyGrad>(DeviceType::cuda, "cuda", softmax_cross_entropy_grad_kernel);
}

}  // namespace kusari::kernels::cuda

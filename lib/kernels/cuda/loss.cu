// CUDA softmax cross-entropy straight from integer labels, as the CPU computes it: one warp per row
// writes the row's log softmax and the sample's loss (in double), the gradient one thread per element.
// Nothing waits for the device: the labels are checked there (a label outside [0, C) makes that
// sample's loss and gradient NaN and is raised as the CPU's IndexError at the host's next
// synchronization with the device, detail/device_faults.h), and the mean's count of labels not
// ignored stays on the device.

#include <cmath>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/device_faults.cuh>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/ops/loss.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

constexpr const char* kOp = "softmax_cross_entropy";

// Throws DtypeError unless the labels are int32 or int64.
void check_label_dtype(const Array& t) {
  if (t.dtype() != Dtype::int32 && t.dtype() != Dtype::int64) {
    throw DtypeError(cat(kOp, ": expected labels of dtype int32 or int64, got ", t.dtype()));
  }
}

// What the mean divides by: the number of labels not ignored, at least 1, as a float64 0-d array
// computed on the labels' device.
Array mean_divisor(const Array& t, int64_t ignore_label) {
  const Array kept = ops::sum(ops::not_equal(t, ops::scalar_like(static_cast<double>(ignore_label), t)));
  const Array counted = kept.astype(Dtype::float64);
  return ops::maximum(counted, ops::scalar_like(1.0, counted));
}

// Sample i's label.
__device__ inline int64_t label_of(const char* labels, bool wide, int64_t stride, int64_t i) {
  return wide ? reinterpret_cast<const int64_t*>(labels)[i * stride]
              : reinterpret_cast<const int32_t*>(labels)[i * stride];
}

// Whether a label is neither ignored nor in [0, classes): then the sample's results are NaN and the
// fault is recorded for the host.
__device__ inline bool faulty_label(int64_t label, int64_t ignore_label, int64_t classes, int64_t sample,
                                    DeviceFault* fault) {
  if (label == ignore_label || (label >= 0 && label < classes)) return false;
  record_fault(fault, FaultKind::softmax_cross_entropy_label, sample, label, classes);
  return true;
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
  DeviceFault* fault;
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
  const int64_t label = label_of(layout.labels, layout.wide_labels, layout.label_stride, i);
  if (faulty_label(label, layout.ignore_label, layout.classes, i, layout.fault)) {
    layout.losses[i] = NAN;
    return;
  }
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
  check_label_dtype(t);
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
                     targets.ignore_label,
                     device_fault_record(index)};
    const auto blocks = static_cast<unsigned>((samples + kRowsPerBlock - 1) / kRowsPerBlock);
    visit_floating_dtype(x.dtype(), kOp, [&]<class T>() {
      launch_kernel(&forward_rows<T>, blocks, kRowsPerBlock * kWarp, current_stream(index), layout);
    });
    check(cudaGetLastError(), kOp);
  }
  if (targets.mean) {
    const Array mean = ops::div(ops::sum(per_sample), mean_divisor(t, targets.ignore_label));
    loss.assign(mean.astype(loss.dtype()));
    return;
  }
  if (samples == 0) return;
  DeviceGuard guard(index);
  visit_floating_dtype(loss.dtype(), kOp, [&]<class T>() {
    launch_kernel(&store_losses<T>, blocks_for(samples), kThreads, current_stream(index),
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
  const double* scale;  // the mean's 1 / count on the device, or null for 1
  double peak, uniform;
  int64_t ignore_label;
  DeviceFault* fault;
};

template <class T>
__global__ void gradient_elements(GradLayout layout) {
  using C = compute_type_t<T>;
  KUSARI_FOR_EACH_ELEMENT(e, layout.samples * layout.classes) {
    const int64_t i = e / layout.classes, c = e % layout.classes;
    const int64_t label = label_of(layout.labels, layout.wide_labels, layout.label_stride, i);
    T& g = reinterpret_cast<T*>(layout.gx)[i * layout.out_row + c * layout.out_column];
    if (faulty_label(label, layout.ignore_label, layout.classes, i, layout.fault)) {
      g = store<T>(C(NAN));
      continue;
    }
    if (label == layout.ignore_label) {
      g = store<T>(C(0));
      continue;
    }
    const double scale = layout.scale ? *layout.scale : 1.0;
    const C factor = static_cast<C>(load(reinterpret_cast<const T*>(layout.gy)[i * layout.gy_stride]) * scale);
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
  check_label_dtype(t);
  if (samples * classes == 0) return;
  const Array scale = targets.mean ? ops::reciprocal(mean_divisor(t, targets.ignore_label)) : Array();
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
                          scale.defined() ? static_cast<const double*>(scale.raw_data()) : nullptr,
                          1 - targets.label_smoothing,
                          targets.label_smoothing / static_cast<double>(classes),
                          targets.ignore_label,
                          device_fault_record(index)};
  visit_floating_dtype(log_p.dtype(), kOp, [&]<class T>() {
    launch_kernel(&gradient_elements<T>, blocks_for(samples * classes), kThreads, current_stream(index), layout);
  });
  check(cudaGetLastError(), kOp);
}

}  // namespace

void register_loss_kernels() {
  install_kernel<kernel_ops::SoftmaxCrossEntropy>(DeviceType::cuda, "cuda", softmax_cross_entropy_kernel);
  install_kernel<kernel_ops::SoftmaxCrossEntropyGrad>(DeviceType::cuda, "cuda", softmax_cross_entropy_grad_kernel);
}

}  // namespace kusari::kernels::cuda

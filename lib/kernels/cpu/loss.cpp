// CPU softmax cross-entropy straight from integer labels: one pass over each row writes its log softmax
// and the sample's loss, and the gradient kernel one pass per row, so the labels never become a dense
// target array and nothing goes back to the caller in between.

#include <cmath>
#include <limits>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/loss.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

constexpr const char* kOp = "softmax_cross_entropy";

// Integer labels read in place, whichever of int32 and int64 they are stored as.
class Labels {
 public:
  explicit Labels(const Array& t) : data_(t.raw_data()), wide_(t.dtype() == Dtype::int64), stride_(t.strides()[0]) {
    if (t.dtype() != Dtype::int32 && t.dtype() != Dtype::int64) {
      throw DtypeError(cat(kOp, ": expected labels of dtype int32 or int64, got ", t.dtype()));
    }
  }
  // The label of sample i.
  int64_t operator[](int64_t i) const {
    return wide_ ? static_cast<const int64_t*>(data_)[i * stride_] : static_cast<const int32_t*>(data_)[i * stride_];
  }

 private:
  const void* data_;
  bool wide_;
  int64_t stride_;
};

// The number of samples whose label is not ignore_label; throws IndexError at the first other label
// outside [0, classes).
int64_t count_targets(const Labels& labels, int64_t samples, int64_t classes, int64_t ignore_label) {
  int64_t counted = 0;
  for (int64_t i = 0; i < samples; ++i) {
    const int64_t label = labels[i];
    if (label == ignore_label) continue;
    if (label < 0 || label >= classes) {
      throw IndexError(cat(kOp, ": label ", label, " of sample ", i, " is outside [0, ", classes, ") for C = ",
                           classes, " classes"));
    }
    ++counted;
  }
  return counted;
}

// Rows of one sample per parallel chunk, so that a chunk holds about kGrain elements.
int64_t rows_per_chunk(int64_t classes) { return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, classes)); }

// Writes the log softmax of one row (classes elements `stride` apart) to the contiguous log_p and returns
// the sample's cross entropy against the target of `label` (0 when it is ignore_label).
template <class T>
double row_forward(const T* x, int64_t stride, int64_t classes, int64_t label, const CrossEntropyTargets& targets,
                   T* log_p) {
  using C = compute_type_t<T>;
  C top = -std::numeric_limits<C>::infinity();
  for (int64_t c = 0; c < classes; ++c) {
    const C v = load(x[c * stride]);
    if (v > top || v != v) top = v;
  }
  double total = 0;
  for (int64_t c = 0; c < classes; ++c) total += static_cast<double>(std::exp(C(load(x[c * stride]) - top)));
  const C offset = static_cast<C>(top + static_cast<C>(std::log(total)));
  double log_sum = 0;
  for (int64_t c = 0; c < classes; ++c) {
    const C value = C(load(x[c * stride]) - offset);
    log_p[c] = store<T>(value);
    log_sum += static_cast<double>(value);
  }
  if (label == targets.ignore_label) return 0;
  const double peak = 1 - targets.label_smoothing, uniform = targets.label_smoothing / static_cast<double>(classes);
  double loss = 0;
  if (peak != 0) loss -= peak * static_cast<double>(C(load(x[label * stride]) - offset));
  if (uniform != 0) loss -= uniform * log_sum;
  return loss;
}

void softmax_cross_entropy_kernel(const Array& x, const Array& t, const CrossEntropyTargets& targets,
                                  const Array& log_p, const Array& loss) {
  const int64_t samples = x.shape()[0], classes = x.shape()[1];
  const Labels labels(t);
  const int64_t counted = count_targets(labels, samples, classes, targets.ignore_label);
  visit_floating_dtype(x.dtype(), kOp, [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    T* out = static_cast<T*>(log_p.raw_data());
    const int64_t row_stride = x.strides()[0], column_stride = x.strides()[1];
    auto row_loss = [&](int64_t i) {
      return row_forward(in + i * row_stride, column_stride, classes, labels[i], targets, out + i * classes);
    };
    T* losses = static_cast<T*>(loss.raw_data());
    if (!targets.mean) {
      const int64_t loss_stride = loss.strides()[0];
      parallel_for(samples, rows_per_chunk(classes), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) losses[i * loss_stride] = store<T>(row_loss(i));
      });
      return;
    }
    SmallVector<double, 16> per_sample(static_cast<size_t>(samples));
    parallel_for(samples, rows_per_chunk(classes), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) per_sample[static_cast<size_t>(i)] = row_loss(i);
    });
    double total = 0;
    for (double value : per_sample) total += value;
    losses[0] = store<T>(total / static_cast<double>(std::max<int64_t>(counted, 1)));
  });
}

void softmax_cross_entropy_grad_kernel(const Array& log_p, const Array& t, const Array& gy,
                                       const CrossEntropyTargets& targets, const Array& gx) {
  const int64_t samples = log_p.shape()[0], classes = log_p.shape()[1];
  const Labels labels(t);
  const int64_t counted = count_targets(labels, samples, classes, targets.ignore_label);
  visit_floating_dtype(log_p.dtype(), kOp, [&]<class T>() {
    using C = compute_type_t<T>;
    const T* in = static_cast<const T*>(log_p.raw_data());
    const T* grad = static_cast<const T*>(gy.raw_data());
    T* out = static_cast<T*>(gx.raw_data());
    const int64_t in_row = log_p.strides()[0], in_column = log_p.strides()[1];
    const int64_t out_row = gx.strides()[0], out_column = gx.strides()[1];
    const int64_t grad_stride = targets.mean ? 0 : gy.strides()[0];
    const double scale = targets.mean ? 1.0 / static_cast<double>(std::max<int64_t>(counted, 1)) : 1.0;
    const C peak = static_cast<C>(1 - targets.label_smoothing);
    const C uniform = static_cast<C>(targets.label_smoothing / static_cast<double>(classes));
    parallel_for(samples, rows_per_chunk(classes), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t label = labels[i];
        const T* p = in + i * in_row;
        T* g = out + i * out_row;
        if (label == targets.ignore_label) {
          for (int64_t c = 0; c < classes; ++c) g[c * out_column] = store<T>(C(0));
          continue;
        }
        const C factor = static_cast<C>(load(grad[i * grad_stride]) * scale);
        for (int64_t c = 0; c < classes; ++c) {
          const C target = c == label ? C(peak + uniform) : uniform;
          g[c * out_column] = store<T>(C((std::exp(load(p[c * in_column])) - target) * factor));
        }
      }
    });
  });
}

}  // namespace

void register_loss_kernels() {
  install_kernel<kernel_ops::SoftmaxCrossEntropy>(DeviceType::cpu, "cpu", softmax_cross_entropy_kernel);
  install_kernel<kernel_ops::SoftmaxCrossEntropyGrad>(DeviceType::cpu, "cpu", softmax_cross_entropy_grad_kernel);
}

}  // namespace kusari::kernels::cpu

// CPU top-k hits: each sample's row of scores is read once (in blocks, stopping early once k classes
// outrank the label), counting the classes that outrank it: a higher score, or an equal score at a
// lower index (ties go to the first class, as argmax does); no sort.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// Classes compared between two checks of the running count (the count is branch-free inside a block).
constexpr int64_t kBlock = 128;

// Whether fewer than k of the `classes` scores at x (`stride` apart) outrank the label's (false for a
// label outside [0, classes) or a NaN score).
// 1 when class c (score v) outranks the label (score target): higher, or tied at a lower index.
template <class C>
int64_t outranks(C v, int64_t c, C target, int64_t label) {
  return (v > target) | ((v == target) & (c < label));
}

template <class T>
bool row_hit(const T* x, int64_t stride, int64_t classes, int64_t label, int64_t k) {
  using C = compute_type_t<T>;
  if (label < 0 || label >= classes) return false;
  const C target = load(x[label * stride]);
  if (target != target) return false;
  int64_t higher = 0;
  for (int64_t begin = 0; begin < classes && higher < k; begin += kBlock) {
    const int64_t end = std::min(classes, begin + kBlock);
    int64_t count = 0;
    if (stride == 1) {
#pragma omp simd reduction(+ : count)
      for (int64_t c = begin; c < end; ++c) count += outranks(load(x[c]), c, target, label);
    } else {
      for (int64_t c = begin; c < end; ++c) count += outranks(load(x[c * stride]), c, target, label);
    }
    higher += count;
  }
  return higher < k;
}

void top_k_hits_kernel(const Array& x, const Array& t, int64_t k, const Array& hits) {
  const int64_t samples = x.shape()[0], classes = x.shape()[1];
  const int64_t* labels = t.data<int64_t>();
  bool* out = hits.data<bool>();
  const int64_t out_stride = hits.ndim() > 0 ? hits.strides()[0] : 0;
  visit_floating_dtype(x.dtype(), "top_k_hits kernel", [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    const int64_t row_stride = x.strides()[0], column_stride = x.strides()[1];
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, classes));
    parallel_for(samples, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        out[i * out_stride] = row_hit(in + i * row_stride, column_stride, classes, labels[i], k);
      }
    });
  });
}

}  // namespace

void register_top_k_kernels() {
  install_kernel<kernel_ops::TopKHits>(DeviceType::cpu, "cpu", top_k_hits_kernel);
}

}  // namespace kusari::kernels::cpu

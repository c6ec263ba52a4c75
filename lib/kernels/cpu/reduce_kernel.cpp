// CPU reductions. Every element of x is at offset kept_offset[m] + reduced_offset[r], so one pair of
// offset tables serves any layout; the loop order follows whichever side has the unit stride.

#include <cmath>
#include <limits>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cpu/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// Offsets (in elements) of every index combination of the given axes, row-major over those axes.
using Offsets = SmallVector<int64_t, 64>;

Offsets offsets_of(const Array& x, const std::vector<int64_t>& axes) {
  Offsets offsets{0};
  for (int64_t axis : axes) {
    const int64_t extent = x.shape()[axis];
    const int64_t stride = x.strides()[static_cast<size_t>(axis)];
    Offsets next;
    next.reserve(offsets.size() * static_cast<size_t>(extent));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < extent; ++i) next.push_back(base + i * stride);
    }
    offsets = std::move(next);
  }
  return offsets;
}

// The accumulator type: double for floating values, int64 for integers (sums of uint8 do not wrap).
template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<compute_type_t<T>>, double, int64_t>;

template <class T>
void reduce_typed(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out) {
  using A = Accumulator<T>;
  std::vector<int64_t> kept;
  for (int64_t axis = 0; axis < x.ndim(); ++axis) {
    if (std::find(axes.begin(), axes.end(), axis) == axes.end()) kept.push_back(axis);
  }
  const Offsets kept_offset = offsets_of(x, kept);
  const Offsets reduced_offset = offsets_of(x, axes);
  const T* in = static_cast<const T*>(x.raw_data());
  const int64_t m_count = static_cast<int64_t>(kept_offset.size());
  const int64_t r_count = static_cast<int64_t>(reduced_offset.size());
  const Array result = out.is_contiguous() ? out : Array::empty(out.shape(), out.dtype());

  if (op == ReduceOp::argmax || op == ReduceOp::argmin) {
    int64_t* dst = static_cast<int64_t*>(result.raw_data());
    const bool want_max = op == ReduceOp::argmax;
    parallel_for(m_count, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, r_count)), [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) {
        int64_t best = 0;
        A best_value = load(in[kept_offset[static_cast<size_t>(m)]]);
        for (int64_t r = 1; r < r_count && best_value == best_value; ++r) {
          const A v = load(in[kept_offset[static_cast<size_t>(m)] + reduced_offset[static_cast<size_t>(r)]]);
          if (v != v || (want_max ? v > best_value : v < best_value)) {
            best_value = v;
            best = r;
          }
        }
        dst[m] = best;
      }
    });
  } else {
    // Floating max/min start from -inf/+inf so that a slice of infinities reduces to an infinity.
    using Limits = std::numeric_limits<A>;
    const A init = op == ReduceOp::sum ? A(0)
                   : op == ReduceOp::max ? (Limits::has_infinity ? -Limits::infinity() : Limits::lowest())
                                         : (Limits::has_infinity ? Limits::infinity() : Limits::max());
    auto combine = [op](A acc, A v) -> A {
      if (op == ReduceOp::sum) return acc + v;
      if (v != v || acc != acc) return acc != acc ? acc : v;
      return op == ReduceOp::max ? (v > acc ? v : acc) : (v < acc ? v : acc);
    };
    visit_dtype(out.dtype(), [&]<class D>() {
    D* dst = static_cast<D*>(result.raw_data());
    const bool reduced_inner = !axes.empty() && (kept.empty() || x.strides()[static_cast<size_t>(axes.back())] <=
                                                                     x.strides()[static_cast<size_t>(kept.back())]);
    if (reduced_inner) {
      parallel_for(m_count, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, r_count)), [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) {
          const T* base = in + kept_offset[static_cast<size_t>(m)];
          A acc = init;
          for (int64_t r = 0; r < r_count; ++r) acc = combine(acc, load(base[reduced_offset[static_cast<size_t>(r)]]));
          dst[m] = store<D>(acc);
        }
      });
    } else {
      parallel_for(m_count, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, r_count)), [&](int64_t b, int64_t e) {
        std::vector<A> acc(static_cast<size_t>(e - b), init);
        for (int64_t r = 0; r < r_count; ++r) {
          const T* base = in + reduced_offset[static_cast<size_t>(r)];
          for (int64_t m = b; m < e; ++m) {
            acc[static_cast<size_t>(m - b)] = combine(acc[static_cast<size_t>(m - b)],
                                                      load(base[kept_offset[static_cast<size_t>(m)]]));
          }
        }
        for (int64_t m = b; m < e; ++m) dst[m] = store<D>(acc[static_cast<size_t>(m - b)]);
      });
    }
    });
  }
  if (!out.is_contiguous()) out.assign(result);
}

void reduce_kernel(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out) {
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw DtypeError("reduce kernel: bool arrays are reduced after a cast to an integer dtype");
    } else {
      reduce_typed<T>(op, x, axes, out);
    }
  });
}

const bool registered = [] {
  register_kernel<kernel_ops::Reduce>(DeviceType::cpu, reduce_kernel);
  return true;
}();

}  // namespace
}  // namespace kusari::kernels::cpu

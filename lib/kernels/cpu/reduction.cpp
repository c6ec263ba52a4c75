// CPU reductions (ops/reduction.h): over axes, and the top-k test of each row. For the former, every
// element of x is at offset kept_offset[m] + reduced_offset[r], so one pair of offset tables serves any
// layout; the loop order follows whichever side has the unit stride.

#include <cmath>
#include <limits>
#include <span>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/detail/reduction_functions.h>
#include <kusari/kernels/ops/reduction.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// Offsets (in elements) of every index combination of some axes, row-major over those axes.
using Offsets = SmallVector<int64_t, 64>;

// A run of index combinations: `extent` positions `stride` elements apart.
struct Run {
  int64_t extent;
  int64_t stride;
};

// The axes as runs, each merged into the one before where that one steps over it exactly (a block of
// contiguous axes is one run) and axes of extent 1 dropped: row-major order over the runs is row-major
// order over the axes.
std::vector<Run> runs_of(const Array& x, const std::vector<int64_t>& axes) {
  std::vector<Run> runs;
  for (int64_t axis : axes) {
    const Run next{x.shape()[axis], x.strides()[static_cast<size_t>(axis)]};
    if (next.extent == 1) continue;
    if (!runs.empty() && runs.back().stride == next.stride * next.extent) {
      runs.back() = {runs.back().extent * next.extent, next.stride};
    } else {
      runs.push_back(next);
    }
  }
  return runs;
}

// The offsets of every index combination of the runs.
Offsets offsets_of(std::span<const Run> runs) {
  Offsets offsets{0};
  for (const Run& run : runs) {
    Offsets next;
    next.reserve(offsets.size() * static_cast<size_t>(run.extent));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < run.extent; ++i) next.push_back(base + i * run.stride);
    }
    offsets = std::move(next);
  }
  return offsets;
}

// Sums, max or min of a contiguous x, small enough for one thread, over consecutive axes (x read as
// (outer, reduced, inner)) into a contiguous out, without offset tables; false when x does not fit that.
template <class T, class D>
bool reduce_flat(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out) {
  using A = Accumulator<T>;
  const bool consecutive = !axes.empty() && axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  if (!consecutive || x.size() > kGrain || !x.is_contiguous() || !out.is_contiguous()) return false;
  const Shape& shape = x.shape();
  int64_t outer = 1, reduced = 1, inner = 1;
  for (int64_t axis = 0; axis < shape.ndim(); ++axis) {
    (axis < axes.front() ? outer : axis > axes.back() ? inner : reduced) *= shape[axis];
  }
  const T* in = static_cast<const T*>(x.raw_data());
  D* dst = static_cast<D*>(out.raw_data());
  constexpr int64_t kChunk = 64;
  A acc[kChunk];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
      const int64_t width = std::min(kChunk, inner - i0);
      std::fill(acc, acc + width, reduce_init<A>(op));
      for (int64_t r = 0; r < reduced; ++r) {
        const T* row = in + (o * reduced + r) * inner + i0;
        for (int64_t i = 0; i < width; ++i) acc[i] = reduce_combine<A>(op, acc[i], load(row[i]));
      }
      for (int64_t i = 0; i < width; ++i) dst[o * inner + i0 + i] = store<D>(acc[i]);
    }
  }
  return true;
}

template <class T>
void reduce_typed(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out) {
  using A = Accumulator<T>;
  if (op != ReduceOp::argmax && op != ReduceOp::argmin &&
      visit_dtype(out.dtype(), [&]<class D>() { return reduce_flat<T, D>(op, x, axes, out); })) {
    return;
  }
  std::vector<int64_t> kept;
  for (int64_t axis = 0; axis < x.ndim(); ++axis) {
    if (std::find(axes.begin(), axes.end(), axis) == axes.end()) kept.push_back(axis);
  }
  const Offsets kept_offset = offsets_of(runs_of(x, kept));
  const std::vector<Run> reduced_runs = runs_of(x, axes);
  const T* in = static_cast<const T*>(x.raw_data());
  const int64_t m_count = static_cast<int64_t>(kept_offset.size());
  int64_t r_count = 1;
  for (const Run& run : reduced_runs) r_count *= run.extent;
  const Array result = out.is_contiguous() ? out : Array::empty(out.shape(), out.dtype(), Device::cpu());

  if (op == ReduceOp::argmax || op == ReduceOp::argmin) {
    const Offsets reduced_offset = offsets_of(reduced_runs);
    int64_t* dst = static_cast<int64_t*>(result.raw_data());
    const bool want_max = op == ReduceOp::argmax;
    parallel_for(m_count, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, r_count)), [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) {
        int64_t best = 0;
        A best_value = load(in[kept_offset[static_cast<size_t>(m)]]);
        for (int64_t r = 1; r < r_count && best_value == best_value; ++r) {
          const A v = load(in[kept_offset[static_cast<size_t>(m)] + reduced_offset[static_cast<size_t>(r)]]);
          if (arg_better(want_max, v, r, best_value, best)) {
            best_value = v;
            best = r;
          }
        }
        dst[m] = best;
      }
    });
  } else {
    const A init = reduce_init<A>(op);
    auto combine = [op](A acc, A v) { return reduce_combine(op, acc, v); };
    visit_dtype(out.dtype(), [&]<class D>() {
    D* dst = static_cast<D*>(result.raw_data());
    const bool reduced_inner = !axes.empty() && (kept.empty() || x.strides()[static_cast<size_t>(axes.back())] <=
                                                                     x.strides()[static_cast<size_t>(kept.back())]);
    if (reduced_inner) {
      // The innermost run is walked by its stride, the others through a table (of one entry when the
      // reduced axes are contiguous), in the same order as one table over all of them.
      const Run inner = reduced_runs.empty() ? Run{1, 0} : reduced_runs.back();
      const Offsets outer_offset =
          offsets_of(std::span<const Run>(reduced_runs).first(reduced_runs.empty() ? 0 : reduced_runs.size() - 1));
      parallel_for(m_count, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, r_count)), [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) {
          A acc = init;
          for (int64_t outer : outer_offset) {
            const T* base = in + kept_offset[static_cast<size_t>(m)] + outer;
            for (int64_t i = 0; i < inner.extent; ++i) acc = combine(acc, load(base[i * inner.stride]));
          }
          dst[m] = store<D>(acc);
        }
      });
    } else {
      const Offsets reduced_offset = offsets_of(reduced_runs);
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

// Top-k hits: each sample's row of scores is read once (in blocks, stopping early once k classes
// outrank the label), counting the classes that outrank it: a higher score, or an equal score at a
// lower index (ties go to the first class, as argmax does); no sort.
// Classes compared between two checks of the running count (the count is branch-free inside a block).
constexpr int64_t kBlock = 128;

// Whether fewer than k of the `classes` scores at x (`stride` apart) outrank the label's (false for a
// label outside [0, classes) or a NaN score).
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

void register_reduction_kernels() {
  install_kernel<kernel_ops::Reduce>(DeviceType::cpu, "cpu", reduce_kernel);
  install_kernel<kernel_ops::TopKHits>(DeviceType::cpu, "cpu", top_k_hits_kernel);
}

}  // namespace kusari::kernels::cpu

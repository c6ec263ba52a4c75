// The multi-tensor optimizer routines of optimizer_routines.h: operand checks, one kernel call; and the
// CPU's kernels, which run the per-tensor routines one tensor after another.

#include <kusari/kernels/optimizer_routines.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include <kusari/core/kernel_table.h>
#include <kusari/core/parallel.h>
#include <kusari/kernels/detail/element_conversion.h>
#include <kusari/kernels/detail/operand_checks.h>
#include <kusari/kernels/routines.h>

namespace kusari::ops {
namespace {

// The float32 or float64 dtype a's squares are summed in.
Dtype squares_dtype(Dtype dtype) { return dtype == Dtype::float64 ? Dtype::float64 : Dtype::float32; }

// Throws unless every array is a floating array of arrays[0]'s dtype on its device.
void check_group(const std::vector<Array>& arrays, const char* op, const char* what) {
  for (size_t k = 0; k < arrays.size(); ++k) {
    const Array& a = arrays[k];
    if (!a.defined()) throw ValueError(cat(op, ": ", what, " ", k, " is undefined"));
    detail::require_same_device(arrays.front(), a, op);
    if (!is_floating(a.dtype()) || a.dtype() != arrays.front().dtype()) {
      throw DtypeError(cat(op, ": expected ", what, " of one floating dtype (", arrays.front().dtype(), "), got ",
                           a.dtype(), " for ", what, " ", k));
    }
  }
}

// Checks pairs of arrays for `op` (as many of each, defined, equal shapes, floating, each pair on one
// device) and calls `run` once a device with its pairs.
template <class Run>
void for_pairs_by_device(const std::vector<Array>& sources, const std::vector<Array>& destinations, const char* op,
                         Run run) {
  if (sources.size() != destinations.size()) {
    throw ShapeError(cat(op, ": expected as many destinations as sources (", sources.size(), "), got ",
                         destinations.size()));
  }
  for (size_t k = 0; k < sources.size(); ++k) {
    const Array& from = sources[k];
    const Array& to = destinations[k];
    if (!from.defined() || !to.defined()) throw ValueError(cat(op, ": pair ", k, " has an undefined array"));
    if (from.shape() != to.shape()) {
      throw ShapeError(cat(op, ": expected pair ", k, "'s destination of its source's shape ", from.shape(), ", got ",
                           to.shape()));
    }
    if (!is_floating(from.dtype()) || !is_floating(to.dtype())) {
      throw DtypeError(cat(op, ": expected floating arrays, got ", from.dtype(), " to ", to.dtype(), " for pair ", k));
    }
    detail::require_same_device(from, to, op);
  }
  std::vector<Device> devices;
  for (const Array& a : sources) {
    if (std::find(devices.begin(), devices.end(), a.device()) == devices.end()) devices.push_back(a.device());
  }
  for (const Device& device : devices) {
    std::vector<Array> from, to;
    for (size_t k = 0; k < sources.size(); ++k) {
      if (sources[k].device() != device) continue;
      from.push_back(sources[k]);
      to.push_back(destinations[k]);
    }
    run(device, from, to);
  }
}

// copy_tensors for the routine `op` (named in its errors).
void copy_pairs(const std::vector<Array>& sources, const std::vector<Array>& destinations, double divisor,
                const char* op) {
  if (!std::isfinite(divisor) || divisor == 0) {
    throw ValueError(cat(op, ": expected a finite non-zero divisor, got ", divisor));
  }
  for_pairs_by_device(sources, destinations, op, [divisor](const Device& device, const auto& from, const auto& to) {
    kernel_for<kernel_ops::CopyTensors>(device)(from, to, divisor);
  });
}

}  // namespace

void momentum_steps(const MomentumTensors& t) {
  const char* op = "momentum_steps";
  const size_t n = t.w.size();
  if (t.v.size() != n || t.g.size() != n || t.momentum.size() != n || t.weight_decay.size() != n) {
    throw ShapeError(cat(op, ": expected ", n, " velocities, gradients, momenta and weight decays for ", n,
                         " parameters, got ", t.v.size(), ", ", t.g.size(), ", ", t.momentum.size(), " and ",
                         t.weight_decay.size()));
  }
  if (n == 0) return;
  check_group(t.w, op, "parameter");
  for (size_t k = 0; k < n; ++k) {
    for (const Array* a : {&t.v[k], &t.g[k]}) {
      if (!a->defined() || a->shape() != t.w[k].shape() || a->dtype() != t.w[k].dtype()) {
        throw ShapeError(cat(op, ": expected the velocity and gradient of parameter ", k, " of its shape ",
                             t.w[k].shape(), " and dtype ", t.w[k].dtype(), ", got ",
                             a->defined() ? cat(a->shape(), " and ", a->dtype()) : std::string("an undefined array")));
      }
      detail::require_same_device(t.w[k], *a, op);
    }
  }
  if (!t.rate.defined() || t.rate.shape() != Shape{static_cast<int64_t>(n)} || t.rate.dtype() != Dtype::float64) {
    throw ShapeError(cat(op, ": expected float64 rates of shape (", n, ",), got ",
                         t.rate.defined() ? cat(t.rate.dtype(), " ", t.rate.shape()) : std::string("none")));
  }
  detail::require_same_device(t.w.front(), t.rate, op);
  kernel_for<kernel_ops::MomentumSteps>(t.w.front().device())(t);
}

Array squared_norms(const std::vector<Array>& arrays) {
  const char* op = "squared_norms";
  if (arrays.empty()) return Array::empty({0}, Dtype::float32);
  check_group(arrays, op, "array");
  const Array out = Array::empty({static_cast<int64_t>(arrays.size())}, squares_dtype(arrays.front().dtype()),
                                 arrays.front().device());
  kernel_for<kernel_ops::SquaredNorms>(out.device())(arrays, out);
  return out;
}

Array all_finite(const std::vector<Array>& arrays) {
  std::vector<Array> floating;
  for (size_t k = 0; k < arrays.size(); ++k) {
    const Array& a = arrays[k];
    if (!a.defined()) throw ValueError(cat("all_finite: array ", k, " is undefined"));
    if (!is_floating(a.dtype())) continue;
    if (!floating.empty()) detail::require_same_device(floating.front(), a, "all_finite");
    floating.push_back(a);
  }
  if (floating.empty()) return Array::full({}, 1.0, Dtype::bool_, Device::cpu());
  const Array out = Array::empty({}, Dtype::bool_, floating.front().device());
  kernel_for<kernel_ops::AllFinite>(out.device())(floating, out);
  return out;
}

void copy_tensors(const std::vector<Array>& sources, const std::vector<Array>& destinations, double divisor) {
  copy_pairs(sources, destinations, divisor, "copy_tensors");
}

void add_scaled_tensors(const std::vector<Array>& sources, const std::vector<Array>& targets, double factor) {
  const char* op = "add_scaled_tensors";
  if (!std::isfinite(factor)) throw ValueError(cat(op, ": expected a finite factor, got ", factor));
  for_pairs_by_device(sources, targets, op, [factor](const Device& device, const auto& from, const auto& to) {
    kernel_for<kernel_ops::AddScaledTensors>(device)(from, to, factor);
  });
}

std::vector<Array> astype_together(const std::vector<Array>& arrays, const std::vector<Dtype>& dtypes) {
  if (arrays.size() != dtypes.size()) {
    throw ShapeError(cat("astype_together: expected a dtype for each of the ", arrays.size(), " arrays, got ",
                         dtypes.size()));
  }
  std::vector<Array> out = arrays, sources, destinations;
  for (size_t k = 0; k < arrays.size(); ++k) {
    if (!arrays[k].defined() || arrays[k].dtype() == dtypes[k]) continue;
    out[k] = Array::empty(arrays[k].shape(), dtypes[k], arrays[k].device());
    sources.push_back(arrays[k]);
    destinations.push_back(out[k]);
  }
  copy_pairs(sources, destinations, 1.0, "astype_together");
  return out;
}

namespace detail {

void momentum_steps_one_by_one(const MomentumTensors& t) {
  // Read on the host: the CPU's kernel's own, or a device's (the CUDA kernel's way for strided parameters).
  const Array rates = t.rate.to(Device::cpu()).contiguous();
  const auto* rate = static_cast<const double*>(rates.host_data());
  for (size_t k = 0; k < t.w.size(); ++k) {
    const Array& w = t.w[k];
    const Array u = t.weight_decay[k] == 0 ? t.g[k] : add(t.g[k], w * t.weight_decay[k]);
    if (t.form == VelocityForm::step) {
      momentum_step(w, t.v[k], u, t.momentum[k], rate[k]);
    } else {
      t.v[k].assign(t.v[k] * t.momentum[k] + mul(u, scalar_like(rate[k], u)));
      add_to(w, neg(t.v[k]));
    }
  }
}

void squared_norms_one_by_one(const std::vector<Array>& arrays, const Array& out) {
  for (size_t k = 0; k < arrays.size(); ++k) {
    out.get_item({static_cast<int64_t>(k)}).assign(sum(square(arrays[k].astype(out.dtype()))));
  }
}

void copy_tensors_one_by_one(const std::vector<Array>& sources, const std::vector<Array>& destinations,
                             double divisor) {
  for (size_t k = 0; k < sources.size(); ++k) {
    destinations[k].assign(sources[k]);
    if (divisor != 1) destinations[k].assign(destinations[k] / divisor);
  }
}

void add_scaled_tensors_one_by_one(const std::vector<Array>& sources, const std::vector<Array>& targets,
                                   double factor) {
  for (size_t k = 0; k < sources.size(); ++k) add_to(targets[k], sources[k].astype(targets[k].dtype()) * factor);
}

void all_finite_scan(const std::vector<Array>& arrays, const Array& out) {
  std::atomic<bool> finite{true};
  for (const Array& a : arrays) {
    const Array dense = a.contiguous();
    visit_floating_dtype(dense.dtype(), "all_finite", [&]<class T>() {
      using Bits = kernels::bits_t<T>;
      const auto* bits = static_cast<const Bits*>(dense.host_data());
      parallel_for(dense.size(), int64_t{1} << 16, [&](int64_t begin, int64_t end) {
        unsigned non_finite = 0;  // or-ed without branches, so that the loop vectorizes
        for (int64_t i = begin; i < end; ++i) non_finite |= kernels::non_finite_bits<T>(bits[i]) ? 1u : 0u;
        if (non_finite != 0) finite = false;
      });
    });
    if (!finite) break;
  }
  *static_cast<bool*>(out.host_data()) = finite;
}

}  // namespace detail

}  // namespace kusari::ops

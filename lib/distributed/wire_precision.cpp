// The ring's arithmetic in one process: rank 0's values packed, every other rank's accumulated in
// turn (the order a chunk's partial sum meets the ranks), the sums stored with the postscale.

#include <kusari/distributed/wire_precision.h>

#include <algorithm>
#include <cmath>

#include <kusari/distributed/detail/array_list_buffer.h>
#include <kusari/distributed/detail/wire_format.h>
#include <kusari/distributed/detail/wire_scaling.h>

namespace kusari::distributed {
namespace {

// Throws unless contributions are equal-sized contiguous float32 host arrays, at least one.
void check_contributions(const std::vector<Array>& contributions) {
  if (contributions.empty()) throw ValueError("simulate_wire_average: expected at least one contribution, got none");
  for (size_t r = 0; r < contributions.size(); ++r) {
    const Array& c = contributions[r];
    if (c.dtype() != Dtype::float32 || !c.is_contiguous() || c.device().type != DeviceType::cpu) {
      throw DtypeError(cat("simulate_wire_average: expected contiguous float32 host arrays, got ", c.dtype(),
                           " at rank ", r));
    }
    if (c.size() != contributions[0].size()) {
      throw ShapeError(cat("simulate_wire_average: expected ", contributions[0].size(),
                           " elements from every rank, got ", c.size(), " at rank ", r));
    }
  }
}

// The q-quantile (0 <= q <= 1) of values, by the nearest rank; 0 when empty.
double quantile(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  const size_t k = std::min(values.size() - 1, static_cast<size_t>(q * static_cast<double>(values.size())));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

}  // namespace

WirePrecision simulate_wire_average(const std::vector<Array>& contributions, Dtype wire, AveragingPolicy policy,
                                    float max_abs) {
  check_contributions(contributions);
  wire::check_wire_dtype(wire, "simulate_wire_average");
  const int64_t n = contributions[0].size();
  const int ranks = static_cast<int>(contributions.size());
  if (max_abs < 0) {
    max_abs = 0;
    for (const Array& c : contributions) max_abs = std::max(max_abs, wire::max_abs(c.data<float>(), n));
  }
  const WireScaling scaling = averaging_scaling(policy, wire, ranks, max_abs);
  const Array partial = scratch(static_cast<size_t>(n) * itemsize(wire));
  for (int r = 0; r < ranks; ++r) {
    const ArrayListBuffer rank_values({contributions[static_cast<size_t>(r)]}, scaling, wire);
    if (r == 0) {
      rank_values.load(0, n, partial.host_data());
    } else {
      rank_values.accumulate(0, n, partial.host_data());
    }
  }
  const Array average = Array::empty({n}, Dtype::float32, Device::cpu());
  ArrayListBuffer({average}, scaling, wire).store(0, n, partial.host_data());

  std::vector<double> mean(static_cast<size_t>(n), 0.0);
  for (const Array& c : contributions) {
    const float* values = c.data<float>();
    for (int64_t i = 0; i < n; ++i) mean[static_cast<size_t>(i)] += values[i];
  }
  WirePrecision result;
  std::vector<double> errors;
  errors.reserve(static_cast<size_t>(n));
  int64_t zeros = 0;
  size_t nonzero = 0;  // elements whose exact mean is not 0
  const float* got = average.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double exact = mean[static_cast<size_t>(i)] / ranks;
    if (!std::isfinite(got[i])) {
      ++result.overflow;
      if (exact != 0) ++nonzero;
      continue;
    }
    if (exact == 0) continue;
    ++nonzero;
    if (got[i] == 0) ++zeros;
    errors.push_back(std::fabs(got[i] - exact) / std::fabs(exact));
  }
  result.zero_fraction = nonzero > 0 ? static_cast<double>(zeros) / static_cast<double>(nonzero) : 0;
  result.median_rel_err = quantile(errors, 0.5);
  result.p90_rel_err = quantile(errors, 0.9);
  return result;
}

}  // namespace kusari::distributed

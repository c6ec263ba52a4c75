// An average through the group compositions (detail/group_average.h).

#include <kusari/distributed/detail/group_average.h>

#include <limits>

#include <kusari/kernels/routines.h>

namespace kusari::distributed {
namespace {

// The factors as arrays on fused's device; undefined for a factor of 1 (no pass).
ScalingArrays scaling_arrays(NcclPattern pattern, const AllreduceGroups& groups, const Array& fused, Dtype wire,
                             AveragingPolicy policy, std::optional<WireScaling> scaling, int ranks) {
  if (!scaling && needs_max_abs(policy, wire)) {
    // Every value non-negative, inf for a NaN or an infinity (a maximum over ranks must not drop a NaN).
    const Array magnitudes = ops::abs(fused);
    const Array local = ops::amax(magnitudes);
    const Array largest =
        ops::where(ops::less_equal(local, ops::scalar_like(std::numeric_limits<float>::max(), local)), local,
                   ops::scalar_like(std::numeric_limits<float>::infinity(), local));
    max_over_groups(pattern, groups, largest);
    return automatic_float16_scaling(largest, ranks);
  }
  const WireScaling factors = scaling ? *scaling : averaging_scaling(policy, wire, ranks);
  const auto factor = [&](float value) {
    return value == 1 ? Array() : Array::scalar(value, Dtype::float32, fused.device());
  };
  return {factor(factors.prescale), factor(factors.postscale)};
}

}  // namespace

Array average_over_groups(NcclPattern pattern, const AllreduceGroups& groups, const Array& fused, Dtype wire,
                          AveragingPolicy policy, std::optional<WireScaling> scaling, int ranks) {
  if (fused.size() == 0) return fused;  // every rank's is empty (one size): nothing to send
  const ScalingArrays factors = scaling_arrays(pattern, groups, fused, wire, policy, scaling, ranks);
  Array on_wire = factors.prescale.defined() ? ops::mul(fused, factors.prescale) : fused;
  if (on_wire.dtype() != wire) on_wire = on_wire.astype(wire);
  allreduce_over_groups(pattern, groups, on_wire);  // in place
  Array sum = on_wire.dtype() == Dtype::float32 ? on_wire : on_wire.astype(Dtype::float32);
  return factors.postscale.defined() ? ops::mul(sum, factors.postscale) : sum;
}

}  // namespace kusari::distributed

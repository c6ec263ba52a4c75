#pragma once
// Internal to the library: an average over every rank through the all-reduce compositions of
// detail/group_allreduce.h, on a wire dtype with its scaling, everything where the array lives: the NCCL
// path's whole all-reduce after its agreement, run on CPUs over MPI groups in the suite.

#include <optional>

#include <kusari/core/array.h>
#include <kusari/distributed/communicator_options.h>
#include <kusari/distributed/detail/group_allreduce.h>
#include <kusari/distributed/detail/wire_scaling.h>

namespace kusari::distributed {

// The average over `ranks` ranks of `fused` (float32, one dimension, contiguous, one size on every rank):
// each rank's values times the prescale, rounded to `wire`, summed by `pattern` over `groups`, widened
// and times the postscale. The factors are `scaling` when given, else `policy`'s; automatic's on a
// float16 wire come from the largest magnitude over the ranks, taken through the same groups and turned
// into factors on fused's device (no read to the host). Returns the average: `fused` itself when it was
// summed in place (a float32 wire without factors), else a new array.
Array average_over_groups(NcclPattern pattern, const AllreduceGroups& groups, const Array& fused, Dtype wire,
                          AveragingPolicy policy, std::optional<WireScaling> scaling, int ranks);

}  // namespace kusari::distributed

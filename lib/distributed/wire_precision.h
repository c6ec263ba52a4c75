#pragma once
// How far an average in a wire dtype lands from the exact mean: the ring all-reduce's arithmetic (each
// rank's values packed into, or accumulated onto, the partial sums that travel the ring, by the
// communicator's own wire code and averaging factors) replayed in one process for any number of ranks.

#include <cstdint>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/distributed/communicator_options.h>

namespace kusari::distributed {

// The error of one simulated average, over the elements whose exact mean is not 0.
struct KUSARI_API WirePrecision {
  double median_rel_err = 0;  // median of |average − mean| / |mean|
  double p90_rel_err = 0;     // its 90th percentile
  double zero_fraction = 0;   // share of them that came out as 0
  int64_t overflow = 0;       // elements that came out inf or NaN
};

// Averages contributions[r] (rank r's float32 values; one array per simulated rank, all of one size)
// as the ring all-reduce of a communicator with `wire` and `policy` would, and compares the result
// with the mean computed in float64. max_abs is the largest |value| in the ranks' whole buffers (the
// automatic policy scales by it); a negative value takes it from the contributions.
KUSARI_API WirePrecision simulate_wire_average(const std::vector<Array>& contributions, Dtype wire, AveragingPolicy policy,
                                               float max_abs = -1);

}  // namespace kusari::distributed

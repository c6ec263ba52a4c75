#pragma once
// WireScaling: the factors around one all-reduce — each contribution times prescale before it is
// rounded to the wire dtype, the sum times postscale after — and the ones an AveragingPolicy picks, on
// the host or, for automatic in float16, as arrays where the contributions live.

#include <kusari/core/array.h>
#include <kusari/core/dtype.h>
#include <kusari/distributed/communicator_options.h>

namespace kusari::distributed {

// sum over ranks of (x · prescale), then · postscale (Horovod's prescale and postscale factors).
struct WireScaling {
  float prescale = 1;
  float postscale = 1;
};

// Whether `policy` needs the largest magnitude over every rank's contribution for this wire dtype.
bool needs_max_abs(AveragingPolicy policy, Dtype wire);
// The factors that average `ranks` contributions. automatic in float16 reads max_abs (the largest
// magnitude on any rank, inf when any value is inf or NaN): the power of two 2^e (|e| <= 60) with
// ranks · max_abs · 2^e at most half of float16's largest value, so that no partial sum of finite
// contributions overflows (below max_abs ≈ 1e22 / ranks, where e stops at -60) and the small values
// sit as high above the subnormals as that allows; an
// inf or NaN keeps 1/ranks before, so it reaches every rank's result (and every rank's loss scaler).
WireScaling averaging_scaling(AveragingPolicy policy, Dtype wire, int ranks, float max_abs = 0);

// WireScaling's factors as 0-dimensional float32 arrays on a device.
struct ScalingArrays {
  Array prescale;
  Array postscale;
};

// automatic's float16 factors for `ranks` contributions, computed on max_abs's device from max_abs (a
// 0-dimensional float32 array: the largest magnitude on any rank, never negative, inf when any value is
// inf or NaN)
// with no read to the host: bit for bit what averaging_scaling gives for its value.
ScalingArrays automatic_float16_scaling(const Array& max_abs, int ranks);

}  // namespace kusari::distributed

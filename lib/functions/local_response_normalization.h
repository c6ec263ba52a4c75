#pragma once
// Local response normalization across channels (Krizhevsky et al. 2012), with Chainer's semantics.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// y = x / (k + alpha * s)^beta, where s at channel c sums x^2 over the channels c - n/2 ... c + n/2
// (integer division; channels outside the input count as zero) of x (N, C, ...). alpha is not divided
// by n, as in Chainer and the paper. Half precision inputs are computed in float32 and cast back.
KUSARI_API Variable local_response_normalization(const Variable& x, int64_t n = 5, double k = 2, double alpha = 1e-4,
                                                 double beta = 0.75);

}  // namespace kusari::functions

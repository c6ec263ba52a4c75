#pragma once
// Activation functions and the (log-)softmax normalisations.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// max(x, 0); the gradient passes where x > 0.
KUSARI_API Variable relu(const Variable& x);
// relu(a + b) in one pass and one graph node (the join of a residual block); a and b have one shape.
KUSARI_API Variable add_relu(const Variable& a, const Variable& b);
// x where x > 0, slope * x elsewhere.
KUSARI_API Variable leaky_relu(const Variable& x, double slope = 0.2);
// x where x > 0, alpha * (e^x - 1) elsewhere.
KUSARI_API Variable elu(const Variable& x, double alpha = 1.0);
// 1 / (1 + e^-x).
KUSARI_API Variable sigmoid(const Variable& x);
// Hyperbolic tangent.
KUSARI_API Variable tanh(const Variable& x);
// e^x normalised to sum to 1 along `axis` (computed from x - max, so large inputs do not overflow).
KUSARI_API Variable softmax(const Variable& x, int64_t axis = 1);
// log(softmax(x)) along `axis`, computed as x - max - log(sum(e^(x - max))).
KUSARI_API Variable log_softmax(const Variable& x, int64_t axis = 1);

}  // namespace kusari::functions

#pragma once
// Matrix products: matmul with transpose flags and broadcast batch axes, and the fully connected layer.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// op(a) @ op(b) over the last two axes, where op transposes when asked; leading (batch) axes broadcast
// as in NumPy and the gradients are summed back to each operand's shape.
KUSARI_API Variable matmul(const Variable& a, const Variable& b, bool transa = false, bool transb = false);

// x W^T + b as in Chainer: W has shape (out, in), x has shape (N, in) (more axes are flattened to
// (N, -1)), b has shape (out,) and may be undefined for no bias. The result has shape (N, out).
KUSARI_API Variable linear(const Variable& x, const Variable& W, const Variable& b = Variable());

}  // namespace kusari::functions

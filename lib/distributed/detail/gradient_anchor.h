#pragma once
// gradient_anchor: what lets a node whose data came from another rank take part in backward().
// Internal header.

#include <kusari/autograd/variable.h>

namespace kusari::distributed {

// A fresh leaf scalar that requires a gradient when `requires_grad` is set. Given as an input to a
// function whose output needs a backward though none of its real inputs requires a gradient here (the
// gradient goes to another rank), it makes FunctionNode::apply record that function; the function's
// backward returns no gradient for it.
Variable gradient_anchor(bool requires_grad);

}  // namespace kusari::distributed

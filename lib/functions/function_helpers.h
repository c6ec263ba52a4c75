#pragma once
// Shorthands for applying a FunctionNode subclass (used inside lib/functions).

#include <memory>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/function_node.h>

namespace kusari::functions {

// Applies a new Node(args...) to the inputs and returns its only output.
template <class Node, class... Args>
Variable apply_single(const std::vector<Variable>& inputs, Args&&... args) {
  return std::allocate_shared<Node>(PoolAllocator<Node>(), std::forward<Args>(args)...)->apply(inputs)[0];
}

// Applies a new Node(args...) to the inputs and returns all of its outputs.
template <class Node, class... Args>
std::vector<Variable> apply_multi(const std::vector<Variable>& inputs, Args&&... args) {
  return std::allocate_shared<Node>(PoolAllocator<Node>(), std::forward<Args>(args)...)->apply(inputs);
}

// A constant (no gradient) holding `value` in like's dtype and on like's device, shape ().
KUSARI_API Variable scalar_constant(double value, const Variable& like);

// Throws DtypeError naming `op` unless both variables share a dtype, DeviceError unless a device.
KUSARI_API void require_same_dtype_and_device(const Variable& a, const Variable& b, const char* op);

// Throws DtypeError naming `op` and the dtype unless x is floating (ValueError when x is undefined).
KUSARI_API void require_floating(const Variable& x, const char* op);

// A constant (no gradient) of cond's shape in like's dtype: if_true where cond holds, if_false elsewhere.
KUSARI_API Variable select_constant(const Array& cond, double if_true, double if_false, const Array& like);

}  // namespace kusari::functions

#pragma once
// Variable: an array with a place in the computational graph recorded as code runs.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

class FunctionNode;
class Variable;
struct VariableImpl;
struct VariableNode;

// Called with a variable once its gradient is final during backward().
using GradientHook = std::function<void(const Variable&)>;

// Options of Variable::backward.
struct KUSARI_API BackwardOptions {
  bool retain_grad = false;             // keep gradients of intermediate variables too
  bool enable_double_backprop = false;  // record the backward computation so gradients are differentiable
  double loss_scale = 1.0;              // multiplies the initial gradient (undone by the optimizer)
};

// A handle to an array and its graph node; copies share the same variable.
class KUSARI_API Variable {
 public:
  // An undefined variable (stands for "no gradient" in FunctionNode::backward).
  Variable() = default;
  // Wraps data; requires_grad = false makes it a constant that backward() skips.
  explicit Variable(Array data, bool requires_grad = true);

  // True unless default-constructed.
  bool defined() const { return impl_ != nullptr; }
  // The data; throws if the variable is undefined.
  const Array& data() const;
  // Replaces the data (the shape, dtype and device recorded in the graph follow).
  void set_data(Array data);
  // The gradient's data, or an undefined array when there is none.
  Array grad() const;
  // The gradient as a variable (with a graph when computed under enable_double_backprop).
  Variable grad_var() const;
  // Sets the gradient (an undefined array clears it); throws on a shape or dtype mismatch.
  void set_grad(const Array& grad);
  // Sets the gradient variable.
  void set_grad_var(const Variable& grad);
  // Removes the gradient.
  void cleargrad();
  // Whether backward() computes this variable's gradient.
  bool requires_grad() const;
  // Sets whether backward() computes this variable's gradient.
  void set_requires_grad(bool requires_grad);
  // The function that created this variable (null for leaves).
  std::shared_ptr<FunctionNode> creator() const;
  // Distance from the leaves in the graph.
  int64_t generation() const;
  // Name shown in messages and graph dumps.
  const std::string& name() const;
  // Sets the name.
  void set_name(std::string name);
  // Shape of the data.
  const Shape& shape() const { return data().shape(); }
  // Dtype of the data.
  Dtype dtype() const { return data().dtype(); }
  // Device of the data.
  const Device& device() const { return data().device(); }
  // Number of axes.
  int64_t ndim() const { return data().ndim(); }
  // Number of elements.
  int64_t size() const { return data().size(); }
  // The single element converted to T.
  template <class T>
  T item() const {
    return data().item<T>();
  }

  // Computes gradients of this variable with respect to every leaf that requires them. A variable of
  // size 1 starts from 1 (times loss_scale); any other needs its grad set first.
  void backward(const BackwardOptions& options = {}) const;
  // Makes this variable a leaf: forgets its creator (the graph behind it is kept for others).
  void unchain() const;
  // Cuts every edge of the graph behind this variable so its memory can be freed.
  void unchain_backward() const;
  // Calls `hook` each time this variable's gradient becomes final in backward(); returns an id.
  int64_t register_gradient_hook(GradientHook hook) const;
  // Removes a hook by the id register_gradient_hook returned.
  void remove_gradient_hook(int64_t id) const;

  // The graph node (for FunctionNode and backward()).
  const std::shared_ptr<VariableNode>& node() const;
  // Rebuilds a handle to a live implementation.
  static Variable from_impl(std::shared_ptr<VariableImpl> impl);
  // True when both handles refer to the same variable.
  bool is(const Variable& other) const { return impl_ == other.impl_; }
  // "variable(...)" with the data as Array::to_string prints it.
  std::string to_string() const;

 private:
  void require_defined(const char* op) const {
    if (!impl_) throw_undefined(op);
  }
  [[noreturn]] static void throw_undefined(const char* op);
  std::shared_ptr<VariableImpl> impl_;
};

// The graph-side record of a variable: what created it and what backward() needs, without the data
// (so an intermediate array is freed once no variable and no retaining function holds it).
struct KUSARI_API VariableNode {
  std::weak_ptr<VariableImpl> variable;   // the user-facing variable, while it lives
  std::shared_ptr<FunctionNode> creator;  // null for leaves and unchained variables
  Shape shape;
  Dtype dtype = Dtype::float32;
  Device device;
  int64_t generation = 0;       // creator's generation + 1; leaves are 0
  bool requires_grad = true;
  std::string name;
  std::vector<std::pair<int64_t, GradientHook>> hooks;  // (id, hook) in registration order
  // Scratch of the backward() pass numbered `pass` (backward.cpp): consumers still to contribute,
  // whether the node is one of the pass's roots, and the gradient summed so far.
  uint64_t pass = 0;
  int64_t pending = 0;
  bool root = false;
  Variable pass_grad;
};

// The state a Variable handle shares.
struct KUSARI_API VariableImpl {
  Array data;
  Variable grad;
  std::shared_ptr<VariableNode> node;
};

inline const Array& Variable::data() const {
  require_defined("data");
  return impl_->data;
}

// Backpropagates from several outputs at once; grad_outputs (when given, one per output, undefined
// entries allowed) become their gradients, else each output needs size 1 or a grad already set.
KUSARI_API void backward(const std::vector<Variable>& outputs, const std::vector<Variable>& grad_outputs = {},
                         const BackwardOptions& options = {});

// Prints Variable::to_string().
KUSARI_API std::ostream& operator<<(std::ostream& out, const Variable& variable);

}  // namespace kusari

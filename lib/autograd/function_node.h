#pragma once
// FunctionNode: one differentiable operation recorded in the graph. Subclasses implement forward on
// arrays and backward on variables (so backward is itself differentiable).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/core/object_pool.h>
#include <kusari/core/small_vector.h>

namespace kusari {

// Base of every differentiable operation.
class KUSARI_API FunctionNode : public std::enable_shared_from_this<FunctionNode> {
 public:
  virtual ~FunctionNode() = default;

  // Name used in messages ("Add", "Convolution2D", ...).
  virtual std::string label() const = 0;
  // Computes the outputs from the input arrays; may call retain_inputs / retain_outputs.
  virtual std::vector<Array> forward(const std::vector<Array>& inputs) = 0;
  // Gradients of the inputs listed in target_input_indexes (one each, undefined for zero), given the
  // outputs' gradients (undefined where an output has none). Written with differentiable functions.
  virtual std::vector<Variable> backward(const std::vector<size_t>& target_input_indexes,
                                         const std::vector<Variable>& grad_outputs) = 0;

  // Runs forward and, while backprop is enabled and some input requires a gradient, records this node.
  std::vector<Variable> apply(const std::vector<Variable>& inputs);

  // Graph nodes of the inputs (shapes and dtypes stay readable after the data is gone).
  const PooledVector<std::shared_ptr<VariableNode>>& inputs() const { return inputs_; }
  // Graph nodes of the outputs, while they live.
  const PooledVector<std::weak_ptr<VariableNode>>& outputs() const { return outputs_; }
  // Graph depth: the largest generation among the inputs.
  int64_t generation() const { return generation_; }
  // Drops retained arrays; backward() calls it after this node ran. Reading them later throws.
  void release_retained();
  // Forgets the inputs so the graph behind this node can be freed.
  void unchain_inputs();
  // Marks this node as found by the backward() pass numbered `pass`; false if it already was.
  bool mark_reached(uint64_t pass) { return mark(reached_pass_, pass); }
  // Marks this node as queued to run in the backward() pass numbered `pass`; false if it already was.
  bool mark_queued(uint64_t pass) { return mark(queued_pass_, pass); }

 protected:
  // Keeps the input arrays at these indexes for backward.
  void retain_inputs(const SmallVector<size_t, 4>& indexes);
  // Keeps the output arrays at these indexes for backward.
  void retain_outputs(const SmallVector<size_t, 4>& indexes);
  // The retained inputs as variables connected to the graph (in retain_inputs order).
  std::vector<Variable> get_retained_inputs();
  // The retained outputs as variables connected to the graph (in retain_outputs order).
  std::vector<Variable> get_retained_outputs();
  // Retained input array k (in retain_inputs order), for backward code that needs no graph.
  const Array& retained_input(size_t k) const;
  // Retained output array k (in retain_outputs order), for backward code that needs no graph.
  const Array& retained_output(size_t k) const;

 private:
  void require_not_released(const char* what) const;
  static bool mark(uint64_t& slot, uint64_t pass) {
    if (slot == pass) return false;
    slot = pass;
    return true;
  }

  PooledVector<std::shared_ptr<VariableNode>> inputs_;
  PooledVector<std::weak_ptr<VariableNode>> outputs_;
  int64_t generation_ = 0;
  SmallVector<size_t, 4> retained_input_indexes_;
  SmallVector<size_t, 4> retained_output_indexes_;
  PooledVector<Array> retained_input_arrays_;
  PooledVector<Array> retained_output_arrays_;
  bool released_ = false;
  uint64_t reached_pass_ = 0, queued_pass_ = 0;
};

}  // namespace kusari

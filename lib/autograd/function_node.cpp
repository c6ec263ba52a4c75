#include <kusari/autograd/function_node.h>

#include <algorithm>
#include <optional>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/core/profiler.h>

namespace kusari {

std::vector<Variable> FunctionNode::apply(const std::vector<Variable>& inputs) {
  std::vector<Array> arrays;
  arrays.reserve(inputs.size());
  bool requires_grad = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) throw ValueError(cat(label(), ": input ", i, " is an undefined variable"));
    arrays.push_back(inputs[i].data());
    requires_grad = requires_grad || inputs[i].requires_grad();
  }
  std::vector<Array> results;
  {
    std::optional<profiler::Scope> scope;  // the label is made only while the profiler records
    if (profiler::active()) scope.emplace(profiler::ScopeKind::function, label(), " forward");
    results = forward(arrays);
  }
  const bool record = requires_grad && is_backprop_enabled();
  std::vector<Variable> outputs;
  outputs.reserve(results.size());
  for (Array& r : results) outputs.emplace_back(std::move(r), requires_grad);
  if (!record) {
    retained_input_arrays_.clear();
    retained_output_arrays_.clear();
    return outputs;
  }
  generation_ = 0;
  inputs_.clear();
  inputs_.reserve(inputs.size());
  for (const Variable& x : inputs) {
    inputs_.push_back(x.node());
    generation_ = std::max(generation_, x.node()->generation);
  }
  retained_input_arrays_.clear();
  retained_input_arrays_.reserve(retained_input_indexes_.size());
  for (size_t i : retained_input_indexes_) retained_input_arrays_.push_back(arrays[i]);
  retained_output_arrays_.clear();
  retained_output_arrays_.reserve(retained_output_indexes_.size());
  for (size_t i : retained_output_indexes_) retained_output_arrays_.push_back(outputs[i].data());
  auto self = shared_from_this();
  outputs_.clear();
  outputs_.reserve(outputs.size());
  for (const Variable& y : outputs) {
    y.node()->creator = self;
    y.node()->generation = generation_ + 1;
    outputs_.push_back(y.node());
  }
  return outputs;
}

void FunctionNode::retain_inputs(const SmallVector<size_t, 4>& indexes) { retained_input_indexes_ = indexes; }

void FunctionNode::retain_outputs(const SmallVector<size_t, 4>& indexes) { retained_output_indexes_ = indexes; }

void FunctionNode::require_not_released(const char* what) const {
  if (released_) {
    throw ValueError(cat(label(), ": the retained ", what,
                         " were released after this node's backward ran (backward() was called twice on one graph)"));
  }
}

namespace {
// The live variable of `node` when it still holds `data`, else a new one over `data` attached to `node`.
Variable variable_of(const std::shared_ptr<VariableNode>& node, const Array& data) {
  std::shared_ptr<VariableImpl> impl = node->variable.lock();
  if (!impl || impl->data.storage() != data.storage()) {
    impl = std::allocate_shared<VariableImpl>(PoolAllocator<VariableImpl>(), VariableImpl{data, Variable(), node});
    node->variable = impl;
  }
  return Variable::from_impl(std::move(impl));
}
}  // namespace

std::vector<Variable> FunctionNode::get_retained_inputs() {
  require_not_released("inputs");
  std::vector<Variable> out;
  for (size_t k = 0; k < retained_input_indexes_.size(); ++k) {
    out.push_back(variable_of(inputs_.at(retained_input_indexes_[k]), retained_input_arrays_.at(k)));
  }
  return out;
}

std::vector<Variable> FunctionNode::get_retained_outputs() {
  require_not_released("outputs");
  std::vector<Variable> out;
  for (size_t k = 0; k < retained_output_indexes_.size(); ++k) {
    const size_t index = retained_output_indexes_[k];
    const Array& data = retained_output_arrays_.at(k);
    std::shared_ptr<VariableNode> node = outputs_.at(index).lock();
    if (!node) {  // the output was dropped: give it a fresh node that still points at this function
      Variable revived(data, true);
      revived.node()->creator = shared_from_this();
      revived.node()->generation = generation_ + 1;
      outputs_[index] = revived.node();
      out.push_back(revived);
      continue;
    }
    out.push_back(variable_of(node, data));
  }
  return out;
}

const Array& FunctionNode::retained_input(size_t k) const {
  require_not_released("inputs");
  return retained_input_arrays_.at(k);
}

const Array& FunctionNode::retained_output(size_t k) const {
  require_not_released("outputs");
  return retained_output_arrays_.at(k);
}

void FunctionNode::release_retained() {
  retained_input_arrays_.clear();
  retained_output_arrays_.clear();
  released_ = true;
}

void FunctionNode::unchain_inputs() { inputs_.clear(); }

}  // namespace kusari

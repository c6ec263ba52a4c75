// Variable::backward: walks the recorded graph from the newest function to the oldest, accumulating
// gradients, calling hooks the moment a variable's gradient is final, and releasing what each
// function retained as soon as it has run.

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/autograd/function_node.h>
#include <kusari/kernels/routines.h>

namespace kusari {
namespace {

// a + b for two gradients of one shape, differentiable so double backprop sees accumulation.
class GradientSum final : public FunctionNode {
 public:
  std::string label() const override { return "GradientSum"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::add(x[0], x[1])}; }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    return std::vector<Variable>(targets.size(), gy[0]);
  }
};

Variable accumulate(const Variable& existing, const Variable& addition) {
  if (!existing.defined()) return addition;
  if (!addition.defined()) return existing;
  return std::make_shared<GradientSum>()->apply({existing, addition})[0];
}

struct ByGeneration {
  bool operator()(const std::shared_ptr<FunctionNode>& a, const std::shared_ptr<FunctionNode>& b) const {
    return a->generation() < b->generation();
  }
};

// Number of edges from reachable functions into each variable node: its gradient is final once that
// many contributions have been accounted for.
std::unordered_map<VariableNode*, int64_t> count_consumers(const std::vector<FunctionNode*>& roots) {
  std::unordered_map<VariableNode*, int64_t> consumers;
  std::unordered_set<FunctionNode*> seen(roots.begin(), roots.end());
  std::vector<FunctionNode*> stack = roots;
  while (!stack.empty()) {
    FunctionNode* f = stack.back();
    stack.pop_back();
    for (const auto& x : f->inputs()) {
      ++consumers[x.get()];
      if (x->creator && seen.insert(x->creator.get()).second) stack.push_back(x->creator.get());
    }
  }
  return consumers;
}

void run_hooks(const VariableNode& node, const Variable& variable) {
  for (const auto& [id, hook] : node.hooks) hook(variable);
}

void check_gradient(const FunctionNode& f, size_t index, const VariableNode& input, const Variable& gx) {
  if (gx.shape() != input.shape || gx.dtype() != input.dtype) {
    throw ShapeError(cat(f.label(), ".backward: expected the gradient of input ", index, " to have shape ",
                         input.shape, " and dtype ", input.dtype, ", got ", gx.shape(), " and ", gx.dtype()));
  }
}

}  // namespace

void Variable::backward(const BackwardOptions& options) const {
  require_defined("backward");
  kusari::backward({*this}, {}, options);
}

namespace {
// Gives each root its starting gradient: the one passed, the one already set, or ones for size 1.
void seed_gradient(Variable root, const Variable& given, double loss_scale) {
  if (given.defined()) root.set_grad_var(given);
  if (!root.grad_var().defined()) {
    if (root.size() != 1) {
      throw ShapeError(cat("backward: expected a variable of size 1 or one whose grad is set, got shape ",
                           root.shape(), " without a grad"));
    }
    root.set_grad(Array::full(root.shape(), loss_scale, root.dtype(), root.device()));
  } else if (loss_scale != 1.0) {
    root.set_grad(ops::mul(root.grad(), ops::scalar_like(loss_scale, root.grad())));
  }
}
}  // namespace

void backward(const std::vector<Variable>& outputs, const std::vector<Variable>& grad_outputs,
              const BackwardOptions& options) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size()) {
    throw ValueError(cat("backward: expected ", outputs.size(), " output gradients, got ", grad_outputs.size()));
  }
  BackpropModeGuard mode(options.enable_double_backprop);
  std::unordered_map<VariableNode*, Variable> grads;
  std::unordered_set<VariableNode*> roots;
  std::priority_queue<std::shared_ptr<FunctionNode>, std::vector<std::shared_ptr<FunctionNode>>, ByGeneration> queue;
  std::unordered_set<FunctionNode*> queued;
  std::vector<FunctionNode*> root_functions;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Variable& y = outputs[i];
    if (!y.defined()) throw ValueError(cat("backward: output ", i, " is undefined"));
    seed_gradient(y, grad_outputs.empty() ? Variable() : grad_outputs[i], options.loss_scale);
    grads[y.node().get()] = accumulate(grads[y.node().get()], y.grad_var());
    roots.insert(y.node().get());
    const std::shared_ptr<FunctionNode>& creator = y.node()->creator;
    if (creator && queued.insert(creator.get()).second) {
      queue.push(creator);
      root_functions.push_back(creator.get());
    }
  }
  std::unordered_map<VariableNode*, int64_t> pending = count_consumers(root_functions);

  while (!queue.empty()) {
    std::shared_ptr<FunctionNode> f = queue.top();
    queue.pop();
    std::vector<Variable> grad_outputs;
    bool any_grad = false;
    for (const auto& weak : f->outputs()) {
      std::shared_ptr<VariableNode> y = weak.lock();
      auto it = y ? grads.find(y.get()) : grads.end();
      grad_outputs.push_back(it == grads.end() ? Variable() : it->second);
      any_grad = any_grad || grad_outputs.back().defined();
      if (it == grads.end()) continue;
      if (options.retain_grad && !roots.contains(y.get())) {
        if (auto impl = y->variable.lock()) impl->grad = it->second;
      }
      grads.erase(it);
    }
    const std::vector<std::shared_ptr<VariableNode>> inputs = f->inputs();
    std::vector<size_t> targets;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i]->requires_grad) targets.push_back(i);
    }
    std::vector<Variable> grad_inputs;
    if (any_grad && !targets.empty()) {
      grad_inputs = f->backward(targets, grad_outputs);
      if (grad_inputs.size() != targets.size()) {
        throw ValueError(cat(f->label(), ".backward: expected ", targets.size(), " gradients, got ",
                             grad_inputs.size()));
      }
    }
    if (!options.enable_double_backprop) f->release_retained();  // the new graph may still read them

    for (size_t k = 0; k < targets.size(); ++k) {
      VariableNode* x = inputs[targets[k]].get();
      if (k < grad_inputs.size() && grad_inputs[k].defined()) {
        check_gradient(*f, targets[k], *x, grad_inputs[k]);
        grads[x] = accumulate(grads[x], grad_inputs[k]);
      }
    }
    for (const auto& x : inputs) {
      if (--pending[x.get()] > 0) continue;
      auto it = grads.find(x.get());
      if (it == grads.end() || !it->second.defined()) continue;
      if (x->creator) {
        if (queued.insert(x->creator.get()).second) queue.push(x->creator);
        if (!x->hooks.empty()) {
          if (auto impl = x->variable.lock()) {
            if (options.retain_grad) impl->grad = it->second;
            run_hooks(*x, Variable::from_impl(impl));
          }
        }
        continue;
      }
      if (auto impl = x->variable.lock()) {  // a leaf: its gradient is final, accumulate into .grad
        // A root's own seed is already in the sum; other leaves add to what earlier backward calls left.
        impl->grad = roots.contains(x.get()) ? it->second : accumulate(impl->grad, it->second);
        run_hooks(*x, Variable::from_impl(impl));
      }
      grads.erase(it);
    }
  }
}

}  // namespace kusari

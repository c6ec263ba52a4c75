// Variable::backward: walks the recorded graph from the newest function to the oldest, accumulating
// gradients, calling hooks the moment a variable's gradient is final, and releasing what each
// function retained as soon as it has run.

#include <algorithm>
#include <atomic>
#include <optional>
#include <queue>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/autograd/function_node.h>
#include <kusari/core/profiler.h>
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
  return std::allocate_shared<GradientSum>(PoolAllocator<GradientSum>())->apply({existing, addition})[0];
}

struct ByGeneration {
  bool operator()(const std::shared_ptr<FunctionNode>& a, const std::shared_ptr<FunctionNode>& b) const {
    return a->generation() < b->generation();
  }
};

std::atomic<uint64_t> pass_counter{0};
// The numbers of the backward() passes running on this thread, innermost last.
thread_local std::vector<uint64_t> running_passes;

// One backward() pass: its number, and the variable nodes whose scratch it uses (their summed
// gradients are dropped when the pass ends, normally or by an exception).
class Pass {
 public:
  Pass() : number_(pass_counter.fetch_add(1, std::memory_order_relaxed) + 1) { running_passes.push_back(number_); }
  ~Pass() {
    for (const auto& node : nodes_) node->pass_grad = Variable();
    running_passes.pop_back();
  }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;

  uint64_t number() const { return number_; }
  // Gives `node` fresh scratch for this pass (once); throws when an enclosing pass still uses it.
  void enter(const std::shared_ptr<VariableNode>& node) {
    if (node->pass == number_) return;
    if (std::find(running_passes.begin(), running_passes.end() - 1, node->pass) != running_passes.end() - 1) {
      throw ValueError("backward: called (from a hook) on a graph that an unfinished backward() is still walking");
    }
    node->pass = number_;
    node->pending = 0;
    node->root = false;
    node->pass_grad = Variable();
    nodes_.push_back(node);
  }

 private:
  uint64_t number_;
  PooledVector<std::shared_ptr<VariableNode>> nodes_;
};

// Counts, on each variable node, the edges from functions reachable from `roots` into it: its
// gradient is final once that many contributions have been accounted for.
void count_consumers(const std::vector<FunctionNode*>& roots, Pass& pass) {
  std::vector<FunctionNode*> stack;
  for (FunctionNode* f : roots) {
    if (f->mark_reached(pass.number())) stack.push_back(f);
  }
  while (!stack.empty()) {
    FunctionNode* f = stack.back();
    stack.pop_back();
    for (const auto& x : f->inputs()) {
      pass.enter(x);
      ++x->pending;
      if (x->creator && x->creator->mark_reached(pass.number())) stack.push_back(x->creator.get());
    }
  }
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
  Pass pass;
  std::priority_queue<std::shared_ptr<FunctionNode>, std::vector<std::shared_ptr<FunctionNode>>, ByGeneration> queue;
  std::vector<FunctionNode*> root_functions;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Variable& y = outputs[i];
    if (!y.defined()) throw ValueError(cat("backward: output ", i, " is undefined"));
    seed_gradient(y, grad_outputs.empty() ? Variable() : grad_outputs[i], options.loss_scale);
    const std::shared_ptr<VariableNode>& node = y.node();
    pass.enter(node);
    node->root = true;
    node->pass_grad = accumulate(node->pass_grad, y.grad_var());
    const std::shared_ptr<FunctionNode>& creator = node->creator;
    if (creator && creator->mark_queued(pass.number())) {
      queue.push(creator);
      root_functions.push_back(creator.get());
    }
  }
  count_consumers(root_functions, pass);

  while (!queue.empty()) {
    std::shared_ptr<FunctionNode> f = queue.top();
    queue.pop();
    std::vector<Variable> grad_outputs;
    grad_outputs.reserve(f->outputs().size());
    bool any_grad = false;
    for (const auto& weak : f->outputs()) {
      std::shared_ptr<VariableNode> y = weak.lock();
      if (!y || y->pass != pass.number()) {  // dropped, or consumed by nothing this pass reaches
        grad_outputs.emplace_back();
        continue;
      }
      grad_outputs.push_back(std::move(y->pass_grad));  // leaves the node's sum empty
      if (!grad_outputs.back().defined()) continue;
      any_grad = true;
      if (options.retain_grad && !y->root) {
        if (auto impl = y->variable.lock()) impl->grad = grad_outputs.back();
      }
    }
    const PooledVector<std::shared_ptr<VariableNode>> inputs = f->inputs();
    std::vector<size_t> targets;
    targets.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i]->requires_grad) targets.push_back(i);
    }
    std::vector<Variable> grad_inputs;
    if (any_grad && !targets.empty()) {
      std::optional<profiler::Scope> scope;  // the label is made only while the profiler records
      if (profiler::active()) scope.emplace(profiler::ScopeKind::function, f->label(), " backward");
      grad_inputs = f->backward(targets, grad_outputs);
      if (grad_inputs.size() != targets.size()) {
        throw ValueError(cat(f->label(), ".backward: expected ", targets.size(), " gradients, got ",
                             grad_inputs.size()));
      }
    }
    // The new graph of a double backprop may still read the retained arrays.
    if (any_grad && !options.enable_double_backprop) f->release_retained();

    for (size_t k = 0; k < grad_inputs.size(); ++k) {
      if (!grad_inputs[k].defined()) continue;
      VariableNode& x = *inputs[targets[k]];
      check_gradient(*f, targets[k], x, grad_inputs[k]);
      x.pass_grad = accumulate(x.pass_grad, grad_inputs[k]);
    }
    for (const auto& x : inputs) {
      if (--x->pending > 0) continue;
      const Variable& gx = x->pass_grad;
      if (x->creator) {  // runs even without a gradient, so the nodes behind it learn they get none from it
        if (x->creator->mark_queued(pass.number())) queue.push(x->creator);
        if (gx.defined() && !x->hooks.empty()) {
          if (auto impl = x->variable.lock()) {
            if (options.retain_grad) impl->grad = gx;
            run_hooks(*x, Variable::from_impl(impl));
          }
        }
        continue;
      }
      if (!gx.defined()) continue;
      if (auto impl = x->variable.lock()) {  // a leaf: its gradient is final, accumulate into .grad
        // A root's own seed is already in the sum; other leaves add to what earlier backward calls left.
        impl->grad = x->root ? gx : accumulate(impl->grad, gx);
        run_hooks(*x, Variable::from_impl(impl));
      }
      x->pass_grad = Variable();
    }
  }
}

}  // namespace kusari

#include <kusari/autograd/variable.h>

#include <ostream>

#include <kusari/autograd/function_node.h>
#include <kusari/core/object_pool.h>
#include <kusari/kernels/routines.h>

namespace kusari {

Variable::Variable(Array data, bool requires_grad) {
  if (!data.defined()) throw ValueError("Variable: expected defined data, got an undefined array");
  auto node = std::allocate_shared<VariableNode>(PoolAllocator<VariableNode>());
  node->shape = data.shape();
  node->dtype = data.dtype();
  node->device = data.device();
  node->requires_grad = requires_grad;
  impl_ = std::allocate_shared<VariableImpl>(PoolAllocator<VariableImpl>(),
                                         VariableImpl{std::move(data), Variable(), std::move(node)});
  impl_->node->variable = impl_;
}

Variable Variable::from_impl(std::shared_ptr<VariableImpl> impl) {
  Variable v;
  v.impl_ = std::move(impl);
  return v;
}

void Variable::throw_undefined(const char* op) {
  throw ValueError(cat("Variable::", op, ": the variable is undefined"));
}

void Variable::set_data(Array data) {
  require_defined("set_data");
  if (!data.defined()) throw ValueError("Variable::set_data: expected defined data, got an undefined array");
  impl_->node->shape = data.shape();
  impl_->node->dtype = data.dtype();
  impl_->node->device = data.device();
  impl_->data = std::move(data);
}

Array Variable::grad() const {
  require_defined("grad");
  return impl_->grad.defined() ? impl_->grad.data() : Array();
}

Variable Variable::grad_var() const {
  require_defined("grad_var");
  return impl_->grad;
}

void Variable::set_grad(const Array& grad) { set_grad_var(grad.defined() ? Variable(grad, false) : Variable()); }

void Variable::set_grad_var(const Variable& grad) {
  require_defined("set_grad_var");
  if (grad.defined() && (grad.shape() != shape() || grad.dtype() != dtype())) {
    throw ShapeError(cat("Variable::set_grad: expected a gradient of shape ", shape(), " and dtype ", dtype(),
                         ", got ", grad.shape(), " and ", grad.dtype()));
  }
  impl_->grad = grad;
}

void Variable::cleargrad() {
  require_defined("cleargrad");
  impl_->grad = Variable();
}

bool Variable::requires_grad() const {
  require_defined("requires_grad");
  return impl_->node->requires_grad;
}

void Variable::set_requires_grad(bool requires_grad) {
  require_defined("set_requires_grad");
  impl_->node->requires_grad = requires_grad;
}

std::shared_ptr<FunctionNode> Variable::creator() const {
  require_defined("creator");
  return impl_->node->creator;
}

int64_t Variable::generation() const {
  require_defined("generation");
  return impl_->node->generation;
}

const std::string& Variable::name() const {
  require_defined("name");
  return impl_->node->name;
}

void Variable::set_name(std::string name) {
  require_defined("set_name");
  impl_->node->name = std::move(name);
}

const std::shared_ptr<VariableNode>& Variable::node() const {
  require_defined("node");
  return impl_->node;
}

void Variable::unchain() const {
  require_defined("unchain");
  impl_->node->creator = nullptr;
  impl_->node->generation = 0;
}

void Variable::unchain_backward() const {
  require_defined("unchain_backward");
  std::vector<std::shared_ptr<FunctionNode>> pending;
  if (impl_->node->creator) pending.push_back(impl_->node->creator);
  unchain();
  while (!pending.empty()) {
    std::shared_ptr<FunctionNode> f = std::move(pending.back());
    pending.pop_back();
    for (const auto& x : f->inputs()) {
      if (x->creator) pending.push_back(x->creator);
      x->creator = nullptr;
      x->generation = 0;
    }
    f->unchain_inputs();
    f->release_retained();
  }
}

int64_t Variable::register_gradient_hook(GradientHook hook) const {
  require_defined("register_gradient_hook");
  auto& hooks = impl_->node->hooks;
  const int64_t id = hooks.empty() ? 0 : hooks.back().first + 1;
  hooks.emplace_back(id, std::move(hook));
  return id;
}

void Variable::remove_gradient_hook(int64_t id) const {
  require_defined("remove_gradient_hook");
  std::erase_if(impl_->node->hooks, [id](const auto& entry) { return entry.first == id; });
}

std::string Variable::to_string() const {
  if (!impl_) return "variable(undefined)";
  std::string text = impl_->data.to_string();
  return "variable" + text.substr(text.find('('));
}

std::ostream& operator<<(std::ostream& out, const Variable& variable) { return out << variable.to_string(); }

}  // namespace kusari

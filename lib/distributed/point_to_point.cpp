// Send and Recv nodes: a flag saying whether the sender wants a gradient and the data go forward on
// the data tag; the gradient comes back on the gradient tag.

#include <kusari/distributed/point_to_point.h>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/distributed/detail/communicator_checks.h>
#include <kusari/distributed/detail/gradient_anchor.h>
#include <kusari/functions/function_helpers.h>

namespace kusari::distributed {
namespace {

// The communicator tag of forward data for a user tag.
int data_tag(int tag) { return 2 * tag; }
// The communicator tag of gradients for a user tag.
int gradient_tag(int tag) { return 2 * tag + 1; }

// Input: the variable sent; output: the delegate, whose backward receives the variable's gradient.
class Send final : public FunctionNode {
 public:
  Send(Communicator comm, int peer, int tag) : comm_(std::move(comm)), peer_(peer), tag_(tag) {}
  std::string label() const override { return "Send"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    comm_.send(x[0], peer_, data_tag(tag_));
    return {Array::scalar(0, Dtype::float32, Device::cpu())};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>&) override {
    const VariableNode& x = *inputs()[0];
    return {Variable(comm_.recv(peer_, gradient_tag(tag_), x.shape, x.dtype), false)};
  }

 private:
  Communicator comm_;
  int peer_, tag_;
};

// Inputs: a gradient anchor (index 0) that requires a gradient when the sender wants one, then the
// optional delegate (index 1).
class Recv final : public FunctionNode {
 public:
  Recv(Communicator comm, int peer, int tag, bool return_gradient)
      : comm_(std::move(comm)), peer_(peer), tag_(tag), return_gradient_(return_gradient) {}
  std::string label() const override { return "Recv"; }
  std::vector<Array> forward(const std::vector<Array>&) override { return {comm_.recv(peer_, data_tag(tag_))}; }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    if (return_gradient_) comm_.send(gy[0].data(), peer_, gradient_tag(tag_));
    std::vector<Variable> gxs;
    for (size_t i : targets) {
      const VariableNode& x = *inputs()[i];
      gxs.push_back(i == 0 ? Variable() : Variable(Array::zeros(x.shape, x.dtype, Device::cpu()), false));
    }
    return gxs;
  }

 private:
  Communicator comm_;
  int peer_, tag_;
  bool return_gradient_;
};

}  // namespace

int max_p2p_tag(const Communicator& comm) { return (comm.max_tag() - 1) / 2; }

Variable send(const Variable& x, const Communicator& comm, int peer, int tag) {
  if (!x.defined()) throw ValueError("send: expected a defined variable");
  require_tag(tag, max_p2p_tag(comm), "send");
  const bool wants_gradient = x.requires_grad() && is_backprop_enabled();
  comm.send(Array::scalar(wants_gradient ? 1 : 0, Dtype::bool_, Device::cpu()), peer, data_tag(tag));
  return functions::apply_single<Send>({x}, comm, peer, tag);
}

Variable recv(const Communicator& comm, int peer, int tag, const Variable& delegate) {
  require_tag(tag, max_p2p_tag(comm), "recv");
  const bool sender_wants_gradient = comm.recv(peer, data_tag(tag), Shape{}, Dtype::bool_).item<bool>();
  std::vector<Variable> inputs{gradient_anchor(sender_wants_gradient)};
  if (delegate.defined()) inputs.push_back(delegate);
  return functions::apply_single<Recv>(inputs, comm, peer, tag, sender_wants_gradient);
}

}  // namespace kusari::distributed

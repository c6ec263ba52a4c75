// AllGather and ReduceScatter (each the other's backward), AllToAll (its own backward), and Bcast.

#include <kusari/distributed/collective_functions.h>

#include <cstring>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/distributed/detail/gradient_anchor.h>
#include <kusari/functions/concat_stack_split.h>
#include <kusari/functions/function_helpers.h>

namespace kusari::distributed {
namespace {

// The gradients, with zeros (constants) of each node's shape and dtype where one is undefined.
std::vector<Variable> zero_filled(const std::vector<Variable>& grads, const std::vector<Shape>& shapes,
                                  const std::vector<Dtype>& dtypes) {
  std::vector<Variable> out;
  for (size_t k = 0; k < grads.size(); ++k) {
    out.push_back(grads[k].defined() ? grads[k] : Variable(Array::zeros(shapes[k], dtypes[k], Device::cpu()), false));
  }
  return out;
}

// Sum over the ranks of every rank's slice rank() of x (shape (size(), ...)).
class ReduceScatter final : public FunctionNode {
 public:
  explicit ReduceScatter(Communicator comm) : comm_(std::move(comm)) {}
  std::string label() const override { return "ReduceScatter"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {comm_.reduce_scatter(x[0])}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {functions::stack(allgather(comm_, gy[0]), 0)};
  }

 private:
  Communicator comm_;
};

class AllGather final : public FunctionNode {
 public:
  explicit AllGather(Communicator comm) : comm_(std::move(comm)) {}
  std::string label() const override { return "AllGather"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    const Array gathered = comm_.allgather(x[0]);
    std::vector<Array> parts;
    for (int64_t r = 0; r < comm_.size(); ++r) parts.push_back(gathered.get_item({r}));
    return parts;
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gys) override {
    const VariableNode& x = *inputs()[0];
    const std::vector<Variable> parts =
        zero_filled(gys, std::vector<Shape>(gys.size(), x.shape), std::vector<Dtype>(gys.size(), x.dtype));
    return {functions::apply_single<ReduceScatter>({functions::stack(parts, 0)}, comm_)};
  }

 private:
  Communicator comm_;
};

class AllToAll final : public FunctionNode {
 public:
  explicit AllToAll(Communicator comm) : comm_(std::move(comm)) {}
  std::string label() const override { return "AllToAll"; }
  std::vector<Array> forward(const std::vector<Array>& xs) override {
    std::vector<Array> ys = comm_.alltoall(xs);
    for (const Array& y : ys) {
      shapes_.push_back(y.shape());
      dtypes_.push_back(y.dtype());
    }
    return ys;
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gys) override {
    const std::vector<Variable> gxs = alltoall(comm_, zero_filled(gys, shapes_, dtypes_));
    std::vector<Variable> out;
    for (size_t i : targets) out.push_back(gxs[i]);
    return out;
  }

 private:
  Communicator comm_;
  std::vector<Shape> shapes_;
  std::vector<Dtype> dtypes_;
};

// What root tells the other ranks before a bcast: dtype, whether root's x wants a gradient, shape.
struct BcastHeader {
  Dtype dtype = Dtype::float32;
  bool wants_gradient = false;
  Shape shape;
};

// The header root sent, on every rank (x is read on root only).
BcastHeader share_header(const Communicator& comm, const Variable& x, int root) {
  std::vector<int64_t> fields;
  if (comm.rank() == root) {
    fields = {static_cast<int64_t>(x.dtype()), x.requires_grad() && is_backprop_enabled()};
    fields.insert(fields.end(), x.shape().begin(), x.shape().end());
  }
  std::string bytes(fields.size() * sizeof(int64_t), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), fields.data(), bytes.size());  // empty off the root
  bytes = comm.bcast_obj(bytes, root);
  fields.resize(bytes.size() / sizeof(int64_t));
  std::memcpy(fields.data(), bytes.data(), bytes.size());
  const Shape shape(std::vector<int64_t>(fields.begin() + 2, fields.end()));
  return {static_cast<Dtype>(fields[0]), fields[1] != 0, shape};
}

// Input: root's x on root, a gradient anchor elsewhere.
class Bcast final : public FunctionNode {
 public:
  Bcast(Communicator comm, int root, BcastHeader header)
      : comm_(std::move(comm)), root_(root), header_(std::move(header)) {}
  std::string label() const override { return "Bcast"; }
  std::vector<Array> forward(const std::vector<Array>& x) override {
    const Array y = comm_.rank() == root_ ? x[0] : Array::empty(header_.shape, header_.dtype, Device::cpu());
    comm_.bcast(y, root_);
    return {y};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    const Array sum = comm_.allreduce(gy[0].data(), ReduceOp::sum);
    return {comm_.rank() == root_ ? Variable(sum, false) : Variable()};
  }

 private:
  Communicator comm_;
  int root_;
  BcastHeader header_;
};

}  // namespace

std::vector<Variable> allgather(const Communicator& comm, const Variable& x) {
  if (!x.defined()) throw ValueError("allgather: expected a defined variable");
  return functions::apply_multi<AllGather>({x}, comm);
}

std::vector<Variable> alltoall(const Communicator& comm, const std::vector<Variable>& xs) {
  if (xs.size() != static_cast<size_t>(comm.size())) {
    throw ValueError(cat("alltoall: expected one variable per rank (", comm.size(), "), got ", xs.size()));
  }
  return functions::apply_multi<AllToAll>(xs, comm);
}

Variable bcast(const Communicator& comm, const Variable& x, int root) {
  const bool is_root = comm.rank() == root;
  if (is_root && !x.defined()) {
    throw ValueError(cat("bcast: expected a defined variable on the root (rank ", root, ")"));
  }
  BcastHeader header = share_header(comm, x, root);
  const Variable input = is_root ? x : gradient_anchor(header.wants_gradient);
  return functions::apply_single<Bcast>({input}, comm, root, std::move(header));
}

}  // namespace kusari::distributed

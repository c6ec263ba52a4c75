// Model-parallel suite: run under mpiexec (2 and 3 ranks). Differentiable send/recv, allgather,
// alltoall and bcast: each rank compares its share of the distributed results with the same
// computation in one process on data every rank regenerates, and the gradients of the whole
// distributed computation are checked against finite differences.

#include "testing.h"

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_close;
using kusari::testing::expect_error;
using kusari::testing::random;

namespace {

// Runs backward from ys seeded with gys.
void backward_with(const std::vector<Variable>& ys, const std::vector<Array>& gys) {
  std::vector<Variable> seeds;
  for (const Array& gy : gys) seeds.emplace_back(gy, false);
  backward(ys, seeds);
}

// Checks the gradients of a computation spread over the ranks against finite differences. Every rank
// calls f on inputs of the same shapes (each rank may use only some of them); a finite-difference step
// moves one element on every rank at once, so the sum over the ranks of the numerical gradients of
// each rank's sum_k <f(x)_k, gys_k> is the gradient of the whole computation, which must equal the sum
// over the ranks of the gradients backward() leaves in the inputs.
void check_collective_gradients(const Communicator& comm, const gradient_check::Function& f,
                                const std::vector<Array>& inputs, const std::vector<Array>& gys) {
  std::vector<Variable> xs;
  for (const Array& x : inputs) xs.emplace_back(x.copy(), true);
  backward_with(f(xs), gys);
  const std::vector<Array> numerical = gradient_check::numerical_grad(f, inputs, gys, 1e-3);
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input ", i);
    const Array grad = xs[i].grad();
    const Array analytic =
        grad.defined() ? grad.astype(Dtype::float64) : Array::zeros(inputs[i].shape(), Dtype::float64);
    expect_close(comm.allreduce(analytic), comm.allreduce(numerical[i]), 1e-5, 1e-5);
  }
}

// check_collective_gradients of the function (x, gy) -> (gradient of x) that backward() records under
// enable_double_backprop, seeded with ggxs: the gradient of the gradient. all_gys[k] are rank k's output
// gradients; every rank takes all of them as inputs (so that the inputs have one shape everywhere) and
// seeds its outputs with its own.
void check_collective_double_backward(const Communicator& comm, const gradient_check::Function& f,
                                      const std::vector<Array>& inputs, const std::vector<std::vector<Array>>& all_gys,
                                      const std::vector<Array>& ggxs) {
  std::vector<Array> args = inputs;
  std::ptrdiff_t own_gys = 0;
  for (int k = 0; k < comm.size(); ++k) {
    if (k == comm.rank()) own_gys = static_cast<std::ptrdiff_t>(args.size());
    const std::vector<Array>& gys = all_gys[static_cast<size_t>(k)];
    args.insert(args.end(), gys.begin(), gys.end());
  }
  const auto n = static_cast<std::ptrdiff_t>(inputs.size());
  const auto outputs = static_cast<std::ptrdiff_t>(all_gys[static_cast<size_t>(comm.rank())].size());
  const gradient_check::Function first_order = [&](const std::vector<Variable>& vars) {
    std::vector<Variable> xs(vars.begin(), vars.begin() + n);
    const std::vector<Variable> seeds(vars.begin() + own_gys, vars.begin() + own_gys + outputs);
    backward(f(xs), seeds, {.enable_double_backprop = true});
    std::vector<Variable> gxs;
    for (Variable& x : xs) {
      const Variable gx = x.grad_var();
      gxs.push_back(gx.defined() ? gx : Variable(Array::zeros(x.shape(), x.dtype()), false));
      x.cleargrad();
    }
    return gxs;
  };
  check_collective_gradients(comm, first_order, args, ggxs);
}

// Width of the activations entering layer s of the test pipelines: 3, 4, 5, ...
int64_t width(int s) { return 3 + s; }

// The input x (2, 3) and the parameters W_s (width(s + 1), width(s)), b_s (width(s + 1)) of `stages`
// layers, as [x, W_0, b_0, W_1, b_1, ...]; the same on every rank.
std::vector<Array> pipeline_arrays(int stages, Dtype dtype) {
  std::vector<Array> arrays{random({2, width(0)}, 1, dtype)};
  for (int s = 0; s < stages; ++s) {
    arrays.push_back(random({width(s + 1), width(s)}, 10 + static_cast<uint64_t>(s), dtype));
    arrays.push_back(random({width(s + 1)}, 20 + static_cast<uint64_t>(s), dtype));
  }
  return arrays;
}

// Fresh variables over copies of the arrays, requiring gradients.
std::vector<Variable> variables(const std::vector<Array>& arrays) {
  std::vector<Variable> out;
  for (const Array& a : arrays) out.emplace_back(a.copy(), true);
  return out;
}

// Layer s of a pipeline over [x, W_0, b_0, ...]: tanh(linear(h, W_s, b_s)).
Variable layer(const Variable& h, const std::vector<Variable>& vars, int s) {
  return F::tanh(F::linear(h, vars[static_cast<size_t>(1 + 2 * s)], vars[static_cast<size_t>(2 + 2 * s)]));
}

// Every layer in one process.
Variable whole_pipeline(const std::vector<Variable>& vars, int stages) {
  Variable h = vars[0];
  for (int s = 0; s < stages; ++s) h = layer(h, vars, s);
  return h;
}

// This rank's stage of a pipeline of size() layers: rank 0 starts from x, every other rank from what
// its predecessor sent; the last rank returns its layer's output, the others the delegate of their send.
Variable pipeline_stage(const Communicator& comm, const std::vector<Variable>& vars) {
  const int r = comm.rank(), last = comm.size() - 1;
  const Variable h = layer(r == 0 ? vars[0] : recv(comm, r - 1), vars, r);
  return r == last ? h : send(h, comm, r + 1);
}

// Tolerance of comparisons with the one-process computation in `dtype`.
double tolerance(Dtype dtype) { return dtype == Dtype::float64 ? 1e-12 : 1e-5; }

}  // namespace

TEST_CASE("send/recv: a model split over size() ranks has the loss and gradients of the model in one process") {
  const Communicator comm = create_communicator();
  const int n = comm.size(), r = comm.rank();
  for (Dtype dtype : {Dtype::float64, Dtype::float32}) {
    INFO("dtype ", dtype_name(dtype));
    const std::vector<Array> arrays = pipeline_arrays(n, dtype);
    const Variable target(random({2, width(n)}, 99, dtype), false);

    const std::vector<Variable> whole = variables(arrays);
    const Variable whole_loss = F::mean_squared_error(whole_pipeline(whole, n), target);
    whole_loss.backward();

    const std::vector<Variable> part = variables(arrays);
    const Variable out = pipeline_stage(comm, part);
    if (r == n - 1) {
      const Variable loss = F::mean_squared_error(out, target);
      loss.backward();
      expect_close(loss.data(), whole_loss.data(), tolerance(dtype), tolerance(dtype));
    } else {
      CHECK(out.shape() == Shape{});
      out.backward();
    }
    for (int s = 0; s < n; ++s) {
      for (size_t i : {static_cast<size_t>(1 + 2 * s), static_cast<size_t>(2 + 2 * s)}) {
        INFO("stage ", s, ", parameter ", i);
        if (s != r) {
          CHECK_FALSE(part[i].grad().defined());
          continue;
        }
        expect_close(part[i].grad(), whole[i].grad(), tolerance(dtype), tolerance(dtype));
      }
    }
    if (r == 0) expect_close(part[0].grad(), whole[0].grad(), tolerance(dtype), tolerance(dtype));
  }
}

TEST_CASE("send/recv: gradients through a pipeline of size() stages match finite differences") {
  const Communicator comm = create_communicator();
  const int n = comm.size();
  const Array gy = comm.rank() == n - 1 ? random({2, width(n)}, 7) : Array::scalar(1.0);
  check_collective_gradients(
      comm, [&](const std::vector<Variable>& vars) { return std::vector<Variable>{pipeline_stage(comm, vars)}; },
      pipeline_arrays(n, Dtype::float64), {gy});
}

TEST_CASE("send/recv: a delegate chains a send into recv's graph, so one backward runs both in order") {
  // Rank 0 runs layers 0 and 2, rank 1 layer 1, on a communicator of those two.
  const Communicator world = create_communicator();
  const Communicator comm = world.split(world.rank() <= 1 ? 0 : 1, world.rank());
  const int r = world.rank();
  if (r > 1) return;
  const std::vector<Array> arrays = pipeline_arrays(3, Dtype::float64);
  const Variable target(random({2, width(3)}, 98), false);
  // Rank 0 returns the loss; rank 1 the delegate of the send that returns layer 1's output.
  const auto split = [&](const std::vector<Variable>& vars) {
    if (r == 0) {
      const Variable delegate = send(layer(vars[0], vars, 0), comm, 1, 3);
      const Variable back = recv(comm, 1, 4, delegate);
      return std::vector<Variable>{F::mean_squared_error(layer(back, vars, 2), target)};
    }
    return std::vector<Variable>{send(layer(recv(comm, 0, 3), vars, 1), comm, 0, 4)};
  };

  const std::vector<Variable> whole = variables(arrays);
  const Variable whole_loss = F::mean_squared_error(whole_pipeline(whole, 3), target);
  whole_loss.backward();
  const std::vector<Variable> part = variables(arrays);
  const Variable out = split(part)[0];
  out.backward();
  const std::vector<size_t> mine = r == 0 ? std::vector<size_t>{0, 1, 2, 5, 6} : std::vector<size_t>{3, 4};
  for (size_t i : mine) {
    INFO("variable ", i);
    expect_close(part[i].grad(), whole[i].grad(), 1e-12, 1e-12);
  }
  if (r == 0) expect_close(out.data(), whole_loss.data(), 1e-12, 1e-12);
  check_collective_gradients(comm, split, arrays, {r == 0 ? Array::scalar(0.5, Dtype::float64) : Array::scalar(1.0)});
}

TEST_CASE("send/recv: data that needs no gradient gets none back, and recv's output then needs none") {
  const Communicator comm = create_communicator();
  const Array marker = Array::full({2}, 42.0);
  if (comm.rank() == 0) {
    const Variable constant(Array::ones({2, 3}), false);
    CHECK_FALSE(send(constant, comm, 1).requires_grad());
    const Variable parameter(Array::ones({2, 3}));
    {
      auto guard = no_backprop_mode();
      send(parameter, comm, 1);
    }
    // Gradients of tag 0 come back on the communicator's tag 1: the next message there is the marker.
    kusari::testing::expect_values(comm.recv(1, 1), {42, 42});
  } else if (comm.rank() == 1) {
    for (int k = 0; k < 2; ++k) {
      const Variable y = recv(comm, 0);
      CHECK_FALSE(y.requires_grad());
      const Variable w(Array::full({3}, 2.0));
      F::sum(y * w).backward();
      kusari::testing::expect_values(w.grad(), {2, 2, 2});
    }
    comm.send(marker, 0, 1);
  }
}

TEST_CASE("send/recv: bad peers, tags and variables throw ValueError before anything is sent") {
  const Communicator comm = create_communicator();
  const Variable x(Array::ones({2}));
  const int other = (comm.rank() + 1) % comm.size();
  CHECK(max_p2p_tag(comm) == (comm.max_tag() - 1) / 2);
  for (int peer : {comm.rank(), comm.size(), -1}) {
    const std::string got = "got " + std::to_string(peer);
    expect_error<ValueError>([&] { send(x, comm, peer); }, {"send: expected a peer rank", got});
    expect_error<ValueError>([&] { recv(comm, peer); }, {"recv: expected a peer rank", got});
  }
  for (int tag : {-1, max_p2p_tag(comm) + 1}) {
    const std::string expected =
        "expected a tag in [0, " + std::to_string(max_p2p_tag(comm)) + "], got " + std::to_string(tag);
    expect_error<ValueError>([&] { send(x, comm, other, tag); }, {"send: " + expected});
    expect_error<ValueError>([&] { recv(comm, other, tag); }, {"recv: " + expected});
  }
  expect_error<ValueError>([&] { send(Variable(), comm, other); }, {"send: expected a defined variable"});
}

TEST_CASE("allgather: every rank's x in rank order; gradients as for a stack of all of them in one process") {
  const Communicator comm = create_communicator();
  const int n = comm.size(), r = comm.rank();
  for (Dtype dtype : {Dtype::float64, Dtype::float32}) {
    // Rank k's x is xs[k]; rank k seeds its output j with grads[k][j] (all of them, or only j = k + 1).
    const Array xs = random({n, 2, 3}, 1, dtype), grads = random({n, n, 2, 3}, 2, dtype);
    for (bool all_outputs : {true, false}) {
      INFO("dtype ", dtype_name(dtype), all_outputs ? ", every output" : ", output rank + 1 alone");
      const auto used = [&](int k, int j) { return all_outputs || j == (k + 1) % n; };
      // One process: the stack of every rank's x, and the sum of every rank's loss.
      std::vector<Variable> whole;
      for (int k = 0; k < n; ++k) whole.emplace_back(xs.get_item({int64_t{k}}).copy());
      const Variable stacked = F::stack(whole, 0);
      Variable whole_loss = F::sum(stacked * Variable(Array::zeros(stacked.shape(), dtype), false));
      for (int k = 0; k < n; ++k) {
        for (int j = 0; j < n; ++j) {
          if (!used(k, j)) continue;
          const Variable seed(grads.get_item({int64_t{k}, int64_t{j}}), false);
          whole_loss = whole_loss + F::sum(F::get_item(stacked, {int64_t{j}}) * seed);
        }
      }
      whole_loss.backward();

      const Variable x(xs.get_item({int64_t{r}}).copy());
      const std::vector<Variable> gathered = allgather(comm, x);
      REQUIRE(gathered.size() == static_cast<size_t>(n));
      std::vector<Variable> outputs;
      std::vector<Array> seeds;
      for (int j = 0; j < n; ++j) {
        CHECK(gathered[static_cast<size_t>(j)].data().to_vector<double>() ==
              whole[static_cast<size_t>(j)].data().to_vector<double>());
        if (!used(r, j)) continue;
        outputs.push_back(gathered[static_cast<size_t>(j)]);
        seeds.push_back(grads.get_item({int64_t{r}, int64_t{j}}).copy());
      }
      backward_with(outputs, seeds);
      expect_close(x.grad(), whole[static_cast<size_t>(r)].grad(), tolerance(dtype), tolerance(dtype));
    }
  }
}

TEST_CASE("allgather: gradient and double-backward checks") {
  const Communicator comm = create_communicator();
  const int n = comm.size(), r = comm.rank();
  const auto f = [&](const std::vector<Variable>& vars) { return allgather(comm, F::get_item(vars[0], {int64_t{r}})); };
  std::vector<std::vector<Array>> all_gys(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < n; ++j) {
      all_gys[static_cast<size_t>(k)].push_back(random({1, 2}, 50 + static_cast<uint64_t>(10 * k + j)));
    }
  }
  const Array xs = random({n, 1, 2}, 3);
  check_collective_gradients(comm, f, {xs}, all_gys[static_cast<size_t>(r)]);
  check_collective_double_backward(comm, f, {xs}, all_gys, {random({n, 1, 2}, 70 + static_cast<uint64_t>(r))});
}

TEST_CASE("allgather: bad inputs throw on every rank") {
  const Communicator comm = create_communicator();
  expect_error<ShapeError>([&] { allgather(comm, Variable(Array::ones({2 + comm.rank()}))); },
                           {"allgather", "differ across ranks", "rank 0 has 2", "rank 1 has 3"});
  expect_error<ValueError>([&] { allgather(comm, Variable()); }, {"allgather: expected a defined variable"});
}

namespace {

// What rank `from` sends to rank `to` in the alltoall tests: shape (from + 1, to + 1).
Array alltoall_message(int from, int to) {
  return random({from + 1, to + 1}, 200 + static_cast<uint64_t>(10 * from + to));
}

// Rank `at`'s gradient of what it received from rank `from`.
Array alltoall_gradient(int at, int from) {
  return random({from + 1, at + 1}, 300 + static_cast<uint64_t>(10 * at + from));
}

// Every alltoall_message, the one from rank `from` to rank `to` at index from · n + to.
std::vector<Array> all_alltoall_messages(int n) {
  std::vector<Array> out;
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) out.push_back(alltoall_message(from, to));
  }
  return out;
}

}  // namespace

TEST_CASE("alltoall: each rank receives what the others sent it, and sends back its gradients") {
  const Communicator comm = create_communicator();
  const int n = comm.size(), r = comm.rank();
  std::vector<Variable> xs;
  for (int to = 0; to < n; ++to) xs.emplace_back(alltoall_message(r, to));
  const std::vector<Variable> ys = alltoall(comm, xs);
  REQUIRE(ys.size() == static_cast<size_t>(n));
  std::vector<Array> seeds;
  for (int from = 0; from < n; ++from) {
    expect_close(ys[static_cast<size_t>(from)].data(), alltoall_message(from, r), 0, 0);
    seeds.push_back(alltoall_gradient(r, from));
  }
  backward_with(ys, seeds);
  // In one process, the message from r to `to` is used once: by rank `to`, whose gradient of it came back.
  for (int to = 0; to < n; ++to) expect_close(xs[static_cast<size_t>(to)].grad(), alltoall_gradient(to, r), 0, 0);

  const auto f = [&](const std::vector<Variable>& vars) {
    return alltoall(comm, std::vector<Variable>(vars.begin() + r * n, vars.begin() + (r + 1) * n));
  };
  const std::vector<Array> inputs = all_alltoall_messages(n);
  check_collective_gradients(comm, f, inputs, seeds);
  std::vector<std::vector<Array>> all_gys(static_cast<size_t>(n));
  for (int at = 0; at < n; ++at) {
    for (int from = 0; from < n; ++from) all_gys[static_cast<size_t>(at)].push_back(alltoall_gradient(at, from));
  }
  std::vector<Array> ggxs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ggxs.push_back(random(inputs[i].shape(), 400 + i + static_cast<uint64_t>(100 * r)));
  }
  check_collective_double_backward(comm, f, inputs, all_gys, ggxs);
  expect_error<ValueError>([&] { alltoall(comm, {xs[0]}); }, {"alltoall: expected one variable per rank"});
}

TEST_CASE("bcast: root's x on every rank; root's gradient sums every rank's") {
  const Communicator comm = create_communicator();
  const int n = comm.size(), r = comm.rank(), root = n - 1;
  const Array value = random({2, 3}, 5);
  const Array grad = random({2, 3}, 60 + static_cast<uint64_t>(r));
  const Variable x = r == root ? Variable(value.copy()) : Variable();
  const Variable y = bcast(comm, x, root);
  expect_close(y.data(), value, 0, 0);
  CHECK(y.requires_grad());
  backward_with({y}, {grad});
  if (r == root) {
    // One process: every rank's copy is x itself, so x's gradient is the sum of every rank's.
    const Variable whole(value.copy());
    Variable loss = F::sum(whole * Variable(Array::zeros({2, 3}, Dtype::float64), false));
    for (int k = 0; k < n; ++k) {
      loss = loss + F::sum(whole * Variable(random({2, 3}, 60 + static_cast<uint64_t>(k)), false));
    }
    loss.backward();
    expect_close(x.grad(), whole.grad(), 1e-12, 1e-12);
  }

  const Variable constant = r == root ? Variable(Array::full({3}, 7.0, Dtype::int64), false) : Variable();
  const Variable received = bcast(comm, constant, root);
  CHECK_FALSE(received.requires_grad());
  kusari::testing::expect_values(received.data(), {7, 7, 7});
  CHECK(received.dtype() == Dtype::int64);

  check_collective_gradients(comm,
                             [&](const std::vector<Variable>& vars) {
                               return std::vector<Variable>{bcast(comm, r == root ? vars[0] : Variable(), root)};
                             },
                             {value}, {grad});
  const Communicator self = comm.split(r, 0);
  expect_error<ValueError>([&] { bcast(self, Variable(), 0); }, {"bcast: expected a defined variable on the root"});
}

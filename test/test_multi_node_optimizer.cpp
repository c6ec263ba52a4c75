// Multi-node optimizer suite: run under mpiexec (2 and 3 ranks). Each rank trains on its rows of
// batches every rank can regenerate and compares the result with the same training in one process
// on the concatenated batches, which every rank computes itself.

#include "testing.h"

#include <limits>
#include <tuple>

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_close;
using kusari::testing::expect_error;
using kusari::testing::random;

namespace {

constexpr int64_t kRowsPerRank = 4;

// linear -> batch normalization -> relu -> linear.
class Net : public links::Chain {
 public:
  Net() {
    add_link("l1", l1);
    add_link("bn", bn);
    add_link("l2", l2);
  }
  Variable forward(const Variable& x) override { return l2->forward(functions::relu(bn->forward(l1->forward(x)))); }

  std::shared_ptr<links::Linear> l1 = std::make_shared<links::Linear>(4, 6);
  std::shared_ptr<links::BatchNormalization> bn = std::make_shared<links::BatchNormalization>(6);
  std::shared_ptr<links::Linear> l2 = std::make_shared<links::Linear>(6, 3);
};

// A net initialised from the default generator seeded with `seed`.
std::shared_ptr<Net> make_net(uint64_t seed) {
  default_generator().set_state(seed, 0);
  return std::make_shared<Net>();
}

// Inputs and targets of step `step`, for every rank's rows together.
struct Batch {
  Array x, t;
};
Batch whole_batch(const Communicator& comm, int step) {
  const int64_t rows = kRowsPerRank * comm.size();
  return {random({rows, 4}, 100 + static_cast<uint64_t>(step), Dtype::float32, -2, 2),
          random({rows, 3}, 200 + static_cast<uint64_t>(step), Dtype::float32)};
}
// This rank's rows of a whole batch.
Batch my_batch(const Communicator& comm, int step) {
  const Batch whole = whole_batch(comm, step);
  const int64_t begin = kRowsPerRank * comm.rank();
  const auto rows = [&](const Array& a) { return a.get_item({Slice{begin, begin + kRowsPerRank}}).copy(); };
  return {rows(whole.x), rows(whole.t)};
}

Variable loss_of(links::Link& net, const Batch& batch) {
  return functions::mean_squared_error(net(Variable(batch.x, false)), Variable(batch.t, false));
}

// Asserts that two links have the same parameter values.
void expect_same_params(const links::Link& a, const links::Link& b, double tol) {
  const auto pa = a.namedparams(), pb = b.namedparams();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    INFO(pa[i].first);
    expect_close(pa[i].second.data(), pb[i].second.data(), tol, tol);
  }
}

// Asserts that every rank holds bitwise the same parameters.
void expect_identical_across_ranks(const Communicator& comm, const links::Link& link) {
  for (const auto& entry : link.namedparams()) {
    const auto& name = std::get<0>(entry);
    const auto& param = std::get<1>(entry);
    INFO(name);
    const std::vector<float> all = comm.allgather(param.data()).to_vector<float>();
    const size_t n = static_cast<size_t>(param.size());
    for (size_t r = 1; r < static_cast<size_t>(comm.size()); ++r) {
      CHECK(std::equal(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n),
                       all.begin() + static_cast<std::ptrdiff_t>(r * n)));
    }
  }
}

}  // namespace

TEST_CASE("multi-node optimizer: data-parallel training equals one process on the whole batch") {
  const Communicator comm = create_communicator();
  const std::vector<MultiNodeOptions> settings = {
      {}, {.bucket_bytes = 64}, {.bucket_bytes = 64, .overlap = false}, {.overlap = false}};
  for (const MultiNodeOptions& options : settings) {
    INFO("bucket_bytes ", options.bucket_bytes, ", overlap ", options.overlap);
    constexpr int kSteps = 5;
    // Every rank starts from its own parameters; the first update broadcasts rank 0's.
    auto net = create_mnbn_model(make_net(1000 + static_cast<uint64_t>(comm.rank())), comm);
    auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.1, 0.9), comm, options);
    optimizer->setup(net);
    for (int step = 1; step <= kSteps; ++step) {
      const Batch batch = my_batch(comm, step);
      CHECK(optimizer->update([&] { return loss_of(*net, batch); }) == (step > 1));
    }
    CHECK(optimizer->t() == kSteps - 1);

    auto reference = make_net(1000);
    optimizers::MomentumSGD plain(0.1, 0.9);
    plain.setup(reference);
    for (int step = 2; step <= kSteps; ++step) {
      const Batch batch = whole_batch(comm, step);
      plain.update([&] { return loss_of(*reference, batch); });
    }
    expect_same_params(*net, *reference, 1e-5);
    expect_identical_across_ranks(comm, *net);
  }
}

TEST_CASE("multi-node optimizer: ranks that start from the same parameters step from the first update") {
  const Communicator comm = create_communicator();
  for (bool overlap : {true, false}) {
    INFO("overlap ", overlap);
    constexpr int kSteps = 3;
    auto net = create_mnbn_model(make_net(1500), comm);
    auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.1, 0.9), comm,
                                                 {.bucket_bytes = 64, .overlap = overlap});
    optimizer->setup(net);
    for (int step = 1; step <= kSteps; ++step) {
      const Batch batch = my_batch(comm, step);
      CHECK(optimizer->update([&] { return loss_of(*net, batch); }));
    }
    CHECK(optimizer->t() == kSteps);

    auto reference = make_net(1500);
    optimizers::MomentumSGD plain(0.1, 0.9);
    plain.setup(reference);
    for (int step = 1; step <= kSteps; ++step) {
      const Batch batch = whole_batch(comm, step);
      plain.update([&] { return loss_of(*reference, batch); });
    }
    expect_same_params(*net, *reference, 1e-5);
    expect_identical_across_ranks(comm, *net);
  }
  // With double buffering the first update has nothing to apply yet, whatever the parameters.
  auto net = make_net(1600);
  auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm, {.double_buffering = true});
  optimizer->setup(net);
  CHECK_FALSE(optimizer->update([&] { return loss_of(*net, my_batch(comm, 1)); }));
}

TEST_CASE("multi-node optimizer: double buffering applies each averaged gradient one step late") {
  const Communicator comm = create_communicator();
  for (bool overlap : {true, false}) {
    INFO("overlap ", overlap);
    constexpr int kSteps = 6;
    auto net = create_mnbn_model(make_net(2000 + static_cast<uint64_t>(comm.rank())), comm);
    auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.1, 0.9), comm,
                                                 {.double_buffering = true, .overlap = overlap});
    optimizer->setup(net);
    for (int step = 1; step <= kSteps; ++step) {
      const Batch batch = my_batch(comm, step);
      CHECK(optimizer->update([&] { return loss_of(*net, batch); }) == (step > 2));
    }

    // One process: the gradient of step k (at the parameters of step k) is applied at step k + 1.
    auto reference = make_net(2000);
    optimizers::MomentumSGD plain(0.1, 0.9);
    plain.setup(reference);
    std::vector<Array> pending;
    for (int step = 2; step <= kSteps; ++step) {
      reference->cleargrads();
      loss_of(*reference, whole_batch(comm, step)).backward();
      std::vector<Array> grads;
      for (const Variable& p : reference->params()) grads.push_back(p.grad().copy());
      if (!pending.empty()) {
        std::vector<Variable> params = reference->params();
        for (size_t i = 0; i < params.size(); ++i) params[i].set_grad(pending[i]);
        plain.update();
      }
      pending = grads;
    }
    expect_same_params(*net, *reference, 1e-5);
    expect_identical_across_ranks(comm, *net);
  }
}

TEST_CASE("multi-node optimizer: NoSync accumulates k backward passes locally, one average for all of them") {
  const Communicator comm = create_communicator();
  constexpr int kMicro = 3;
  auto net = create_mnbn_model(make_net(3000 + static_cast<uint64_t>(comm.rank())), comm);
  auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm);
  optimizer->setup(net);
  CHECK_FALSE(optimizer->update([&] { return loss_of(*net, my_batch(comm, 0)); }));  // takes rank 0's values
  net->cleargrads();
  {
    const NoSync local(*optimizer);
    for (int j = 0; j + 1 < kMicro; ++j) {
      const NoSync nested(*optimizer);  // scopes nest: the outer one still holds when this one ends
      loss_of(*net, my_batch(comm, 10 + j)).backward();
    }
    expect_error<ValueError>([&] { optimizer->update(); }, {"inside no_sync"});
  }
  loss_of(*net, my_batch(comm, 10 + kMicro - 1)).backward();
  CHECK(optimizer->update());

  // One process: the same k passes over every rank's rows, summed, one step.
  auto reference = make_net(3000);
  optimizers::SGD plain(0.1);
  plain.setup(reference);
  reference->cleargrads();
  for (int j = 0; j < kMicro; ++j) loss_of(*reference, whole_batch(comm, 10 + j)).backward();
  plain.update();
  expect_same_params(*net, *reference, 1e-5);
  expect_identical_across_ranks(comm, *net);
  expect_error<ValueError>([] {
    optimizers::SGD alone(0.1);
    const NoSync local(alone);
  }, {"create_multi_node_optimizer"});
}

TEST_CASE("multi-node optimizer: destroyed with an all-reduce in flight, every rank still completes it") {
  // With double buffering the last step's all-reduce is still queued or running when the optimizer
  // goes; every rank must finish it, or the ranks that started it would wait for the others forever.
  const Communicator comm = create_communicator();
  for (int round = 0; round < 20; ++round) {
    auto net = make_net(6000);
    auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm,
                                                 {.bucket_bytes = 64, .double_buffering = true});
    optimizer->setup(net);
    for (int step = 1; step <= 3; ++step) {
      const Batch batch = my_batch(comm, step);
      optimizer->update([&] { return loss_of(*net, batch); });
    }
  }
  comm.barrier();
}

TEST_CASE("multi-node optimizer: gradients a rank did not produce count as zeros") {
  const Communicator comm = create_communicator();
  for (int64_t bucket_bytes : {int64_t{16}, int64_t{25} << 20}) {
    INFO("bucket_bytes ", bucket_bytes);
    // Two linear branches; only rank 1 uses the second.
    auto net = std::make_shared<links::Chain>();
    default_generator().set_state(3000 + static_cast<uint64_t>(comm.rank()), 0);
    net->add_link("a", std::make_shared<links::Linear>(3, 2));
    net->add_link("b", std::make_shared<links::Linear>(3, 2));
    const auto loss = [&](const links::Chain& chain, int rank) {
      const Variable x(random({2, 3}, 10 + static_cast<uint64_t>(rank), Dtype::float32), false);
      Variable l = functions::sum(functions::square(chain.child<links::Linear>("a")->forward(x)));
      if (rank == 1) l = l + functions::sum(functions::square(chain.child<links::Linear>("b")->forward(x)));
      return l;
    };
    auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm,
                                                 {.bucket_bytes = bucket_bytes});
    optimizer->setup(net);
    for (int step = 1; step <= 2; ++step) optimizer->update([&] { return loss(*net, comm.rank()); });

    // One process: the mean over ranks of each rank's gradient (rank 0's parameters at the start).
    auto reference = std::make_shared<links::Chain>();
    default_generator().set_state(3000, 0);
    reference->add_link("a", std::make_shared<links::Linear>(3, 2));
    reference->add_link("b", std::make_shared<links::Linear>(3, 2));
    Variable total = loss(*reference, 0);
    for (int r = 1; r < comm.size(); ++r) total = total + loss(*reference, r);
    (total / static_cast<double>(comm.size())).backward();
    optimizers::SGD plain(0.1);
    plain.setup(reference);
    plain.update();
    expect_same_params(*net, *reference, 1e-6);
  }
}

TEST_CASE("multi-node optimizer: several backward passes before one update") {
  const Communicator comm = create_communicator();
  auto net = create_mnbn_model(make_net(4000), comm);
  auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm, {.bucket_bytes = 64});
  optimizer->setup(net);
  optimizer->update();  // the broadcast
  net->cleargrads();
  loss_of(*net, my_batch(comm, 1)).backward();
  loss_of(*net, my_batch(comm, 2)).backward();
  CHECK(optimizer->update());

  auto reference = make_net(4000);
  loss_of(*reference, whole_batch(comm, 1)).backward();
  loss_of(*reference, whole_batch(comm, 2)).backward();
  optimizers::SGD plain(0.1);
  plain.setup(reference);
  plain.update();
  expect_same_params(*net, *reference, 1e-5);
}

TEST_CASE("multi-node optimizer: dynamic loss scaling skips a step on every rank when one overflows") {
  const Communicator comm = create_communicator();
  default_generator().set_state(5000, 0);
  auto net = std::make_shared<links::Linear>(3, 2);
  auto actual = std::make_shared<optimizers::SGD>(0.1);
  actual->set_loss_scaler(optimizers::LossScaler::dynamic({.initial_scale = 1024}));
  auto optimizer = create_multi_node_optimizer(actual, comm);
  optimizer->setup(net);
  const auto step = [&](bool overflow) {
    Array x = random({2, 3}, 50, Dtype::float32);
    if (overflow && comm.rank() == comm.size() - 1) x.fill(std::numeric_limits<float>::infinity());
    return optimizer->update([&] { return functions::sum(net->forward(Variable(x, false))); });
  };
  step(false);
  const Array before = net->param("W").data().copy();
  CHECK_FALSE(step(true));
  CHECK(optimizer->loss_scale() == 512);
  expect_close(net->param("W").data(), before, 0, 0);
  CHECK(step(false));
  CHECK(optimizer->loss_scale() == 512);
  expect_identical_across_ranks(comm, *net);
}

TEST_CASE("multi-node optimizer: double buffering unscales each step's gradients by the loss scale they were "
          "computed with, across a scale change") {
  const Communicator comm = create_communicator();
  default_generator().set_state(5100, 0);
  auto net = std::make_shared<links::Linear>(3, 2);
  const Array initial = net->param("W").data().copy();
  auto actual = std::make_shared<optimizers::SGD>(0.1);
  actual->set_loss_scaler(optimizers::LossScaler::dynamic({.initial_scale = 1024}));
  auto optimizer = create_multi_node_optimizer(actual, comm, {.double_buffering = true});
  optimizer->setup(net);
  // Step k's input on rank r; the last rank's at step 3 overflows.
  const auto input = [&](int k, int r) {
    Array x = random({2, 3}, 60 + static_cast<uint64_t>(10 * k + r), Dtype::float32);
    if (k == 3 && r == comm.size() - 1) x.fill(std::numeric_limits<float>::infinity());
    return x;
  };
  // Update k applies step k - 1's gradients: none at 1 and 2, step 3's overflow at 4 (the scale
  // halves to 512 after step 4's backward ran at 1024), then steps 4 (at 1024) and 5 (at 512).
  const std::vector<bool> applied = {false, false, true, false, true, true};
  for (int k = 1; k <= 6; ++k) {
    INFO("update ", k);
    const Array x = input(k, comm.rank());
    CHECK(optimizer->update([&] { return functions::sum(net->forward(Variable(x, false))); }) ==
          applied[static_cast<size_t>(k - 1)]);
  }
  CHECK(optimizer->loss_scale() == 512);
  // d sum(W x + b) / dW[i][j] = sum over rows of x[., j], whatever W is: W moves by -0.1 times the
  // ranks' mean of that, for the gradients of steps 2, 4 and 5.
  std::vector<double> expected = initial.to_vector<double>();
  for (int k : {2, 4, 5}) {
    for (int r = 0; r < comm.size(); ++r) {
      const std::vector<float> x = input(k, r).to_vector<float>();
      for (size_t i = 0; i < 2; ++i) {
        for (size_t j = 0; j < 3; ++j) expected[i * 3 + j] -= 0.1 * (x[j] + x[3 + j]) / comm.size();
      }
    }
  }
  kusari::testing::expect_values(net->param("W").data(), expected, 1e-5);
  expect_identical_across_ranks(comm, *net);
}

TEST_CASE("multi-node optimizer: parameter sets that differ across ranks are named, not hung on") {
  const Communicator comm = create_communicator();
  const bool odd = comm.rank() == 1;
  auto net = std::make_shared<links::Linear>(3, odd ? 5 : 4);
  auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(), comm);
  optimizer->setup(net);
  expect_error<ValueError>([&] { optimizer->update(); },
                           {"MultiNodeOptimizer: the parameters differ across ranks", "parameter #0",
                            "'/W (4, 3) float32' on rank 0", "'/W (5, 3) float32' on rank 1"});

  auto chain = std::make_shared<links::Chain>();
  chain->add_link("a", std::make_shared<links::Linear>(3, 4));
  if (odd) chain->add_link("extra", std::make_shared<links::Linear>(3, 4));
  auto other = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(), comm);
  other->setup(chain);
  expect_error<ValueError>([&] { other->update(); },
                           {"2 on rank 0, 4 on rank 1", "parameter #2", "nothing on rank 0",
                            "'/extra/W (4, 3) float32' on rank 1"});
}

TEST_CASE("multi-node optimizer: errors") {
  const Communicator comm = create_communicator();
  expect_error<ValueError>([&] { create_multi_node_optimizer(nullptr, comm); }, {"expected an optimizer"});
  expect_error<ValueError>(
      [&] { create_multi_node_optimizer(std::make_shared<optimizers::SGD>(), comm, {.bucket_bytes = 0}); },
      {"bucket_bytes >= 1", "got 0"});
  // Parameters initialised after the first update would silently stay unaveraged: refused.
  auto lazy = std::make_shared<links::Linear>(links::LinearOptions(2));
  auto optimizer = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(), comm);
  optimizer->setup(lazy);
  optimizer->update();
  lazy->forward(Variable(Array::ones({1, 3}), false));
  expect_error<ValueError>([&] { optimizer->update(); }, {"had 1 trainable parameters", "has 2 now"});
  // A parameter replaced by one of the same size would keep its old hook and stay unaveraged: refused.
  auto net = make_net(7);
  auto replaced = create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm);
  replaced->setup(net);
  const Batch batch = my_batch(comm, 1);
  replaced->update([&] { return loss_of(*net, batch); });
  net->replace_child("l1", std::make_shared<links::Linear>(4, 6));
  expect_error<ValueError>([&] { replaced->update([&] { return loss_of(*net, batch); }); },
                           {"l1/", "was replaced", "setup(link) again"});
  // setup again lays the buckets out anew (no buffer of the old layout is reused), then steps as usual.
  auto other = std::make_shared<links::Linear>(4, 3);
  replaced->setup(other);
  const Variable x(batch.x, false);
  for (int step = 0; step < 3; ++step) replaced->update([&] { return functions::sum(other->forward(x)); });
  replaced->setup(net);
  for (int step = 0; step < 3; ++step) replaced->update([&] { return loss_of(*net, batch); });
  expect_identical_across_ranks(comm, *net);
}

// Multi-node batch normalization suite: run under mpiexec (2 and 3 ranks). Rank r holds rows
// [offset(r), offset(r) + 2 + r) of a batch every rank can regenerate, so local batch sizes differ;
// each rank compares its share of the multi-node results with batch normalization of the whole
// batch computed in one process.

#include "testing.h"

#include <map>
#include <tuple>

#include <kusari/distributed/mpi_interop.h>

#include "mpi_call_counter.h"

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_close;
using kusari::testing::expect_error;
using kusari::testing::mpi_calls;
using kusari::testing::random;

namespace {

// Rows of rank r in the concatenated batch.
int64_t local_rows(int rank) { return 2 + rank; }
int64_t row_offset(int rank) {
  int64_t offset = 0;
  for (int r = 0; r < rank; ++r) offset += local_rows(r);
  return offset;
}
int64_t total_rows(const Communicator& comm) { return row_offset(comm.size()); }

// Shape (rows, ...rest).
Shape with_rows(int64_t rows, const std::vector<int64_t>& rest) {
  Shape shape{rows};
  for (int64_t extent : rest) shape.push_back(extent);
  return shape;
}

// This rank's rows of a whole-batch array (a contiguous copy).
Array my_rows(const Array& whole, const Communicator& comm) {
  const int64_t begin = row_offset(comm.rank());
  return whole.get_item({Slice{begin, begin + local_rows(comm.rank())}}).copy();
}

// Tolerance of comparisons in `dtype`.
double tolerance(Dtype dtype) { return dtype == Dtype::float64 ? 1e-10 : 2e-5; }

// Gradient of an input after backward, as an array.
Array grad_of(const Variable& v) { return v.grad(); }

}  // namespace

TEST_CASE("mnbn: forward and backward equal batch normalization of the concatenated batch") {
  const Communicator comm = create_communicator();
  for (const std::vector<int64_t>& rest : {std::vector<int64_t>{3}, std::vector<int64_t>{2, 3, 2}}) {
    for (Dtype dtype : {Dtype::float64, Dtype::float32}) {
      INFO("shape (N, ", rest[0], ", ...), dtype ", dtype);
      const int64_t channels = rest[0];
      const Array x = random(with_rows(total_rows(comm), rest), 1, dtype, -2, 3);
      const Array gy = random(x.shape(), 2, dtype);
      const Array gamma = random({channels}, 3, dtype, 0.5, 1.5), beta = random({channels}, 4, dtype);

      Variable whole_x(x), whole_gamma(gamma.copy()), whole_beta(beta.copy());
      functions::BatchNormalizationResult whole = functions::batch_normalization(whole_x, whole_gamma, whole_beta);
      whole.y.set_grad(gy);
      whole.y.backward();

      Variable part_x(my_rows(x, comm)), part_gamma(gamma.copy()), part_beta(beta.copy());
      functions::BatchNormalizationResult part = multi_node_batch_normalization(part_x, part_gamma, part_beta, comm);
      part.y.set_grad(my_rows(gy, comm));
      part.y.backward();

      const double tol = tolerance(dtype);
      CHECK(part.count == whole.count);
      expect_close(part.mean, whole.mean, tol, tol);
      expect_close(part.var, whole.var, tol, tol);
      expect_close(part.y.data(), my_rows(whole.y.data(), comm), tol, tol);
      expect_close(grad_of(part_x), my_rows(grad_of(whole_x), comm), tol, tol);
      expect_close(comm.allreduce(grad_of(part_gamma)), grad_of(whole_gamma), tol, tol);
      expect_close(comm.allreduce(grad_of(part_beta)), grad_of(whole_beta), tol, tol);
    }
  }
}

TEST_CASE("mnbn: half-precision inputs are normalised with float32 statistics of the whole batch") {
  const Communicator comm = create_communicator();
  const Array x = random(with_rows(total_rows(comm), {2, 2}), 5, Dtype::float32, -2, 2);
  const Array gamma = Array::ones({2}, Dtype::float16), beta = Array::zeros({2}, Dtype::float16);
  const functions::BatchNormalizationResult whole =
      functions::batch_normalization(Variable(x.astype(Dtype::float16), false), Variable(gamma, false),
                                     Variable(beta, false));
  const functions::BatchNormalizationResult part = multi_node_batch_normalization(
      Variable(my_rows(x, comm).astype(Dtype::float16), false), Variable(gamma, false), Variable(beta, false), comm);
  CHECK(part.y.dtype() == Dtype::float16);
  CHECK(part.mean.dtype() == Dtype::float32);
  expect_close(part.y.data(), my_rows(whole.y.data(), comm), 2e-3, 2e-3);
  expect_close(part.mean, whole.mean, 1e-5, 1e-5);
}

TEST_CASE("mnbn: double backward equals the concatenated batch's") {
  const Communicator comm = create_communicator();
  const Array x = random(with_rows(total_rows(comm), {2, 2}), 6, Dtype::float64, -2, 3);
  const Array w = random(x.shape(), 7), v = random(x.shape(), 8);
  const Array gamma = random({2}, 9, Dtype::float64, 0.5, 1.5), beta = random({2}, 10);
  BackwardOptions record;
  record.enable_double_backprop = true;

  // z = Σ v · ∂(Σ w · y)/∂x, differentiated again with respect to x and gamma.
  const auto second_order = [&](Variable xs, Variable g, Variable b, const Array& ws,
                                const Array& vs, const functions::BatchNormalizationResult& result) {
    functions::sum(result.y * Variable(ws, false)).backward(record);
    const Variable gx = xs.grad_var();
    xs.cleargrad();
    g.cleargrad();
    b.cleargrad();
    functions::sum(gx * Variable(vs, false)).backward();
  };
  Variable whole_x(x), whole_gamma(gamma.copy()), whole_beta(beta.copy());
  second_order(whole_x, whole_gamma, whole_beta, w, v,
               functions::batch_normalization(whole_x, whole_gamma, whole_beta));
  Variable part_x(my_rows(x, comm)), part_gamma(gamma.copy()), part_beta(beta.copy());
  second_order(part_x, part_gamma, part_beta, my_rows(w, comm), my_rows(v, comm),
               multi_node_batch_normalization(part_x, part_gamma, part_beta, comm));

  expect_close(grad_of(part_x), my_rows(grad_of(whole_x), comm), 1e-10, 1e-8);
  expect_close(comm.allreduce(grad_of(part_gamma)), grad_of(whole_gamma), 1e-10, 1e-8);
}

TEST_CASE("mnbn: gradient, double-backward and dtype checks on a communicator of one rank") {
  const Communicator world = create_communicator();
  const Communicator alone = world.split(world.rank(), 0);
  REQUIRE(alone.size() == 1);
  const auto f = [&](const std::vector<Variable>& in) {
    return std::vector<Variable>{multi_node_batch_normalization(in[0], in[1], in[2], alone).y};
  };
  const std::vector<Array> inputs = {random({3, 2, 2}, 11), random({2}, 12, Dtype::float64, 0.5, 1.5),
                                     random({2}, 13)};
  kusari::testing::check_gradients(f, inputs);
  kusari::testing::check_forward_dtypes(f, inputs, 2);
}

TEST_CASE("mnbn: an empty local batch contributes nothing") {
  const Communicator comm = create_communicator();
  const bool empty = comm.rank() == 1;
  const Array x = random({4, 3}, 14, Dtype::float64);
  Variable part_x(empty ? Array::zeros({0, 3}, Dtype::float64) : x.copy());
  functions::BatchNormalizationResult part = multi_node_batch_normalization(
      part_x, Variable(Array::ones({3}, Dtype::float64)), Variable(Array::zeros({3}, Dtype::float64)), comm);
  const int64_t holders = comm.size() - 1;
  CHECK(part.count == 4 * holders);
  const functions::BatchNormalizationResult whole = functions::batch_normalization(
      Variable(x), Variable(Array::ones({3}, Dtype::float64)), Variable(Array::zeros({3}, Dtype::float64)));
  expect_close(part.mean, whole.mean, 1e-12, 1e-10);
  expect_close(part.var, whole.var, 1e-12, 1e-10);
  part.y.set_grad(Array::ones(part.y.shape(), Dtype::float64));
  part.y.backward();
  CHECK(part_x.grad().shape() == part_x.shape());
}

TEST_CASE("mnbn: errors") {
  const Communicator comm = create_communicator();
  const Communicator alone = comm.split(comm.rank(), 0);
  const Variable gamma(Array::ones({3})), beta(Array::zeros({3}));
  expect_error<ShapeError>([&] { multi_node_batch_normalization(Variable(random({1, 3}, 1, Dtype::float32)), gamma, beta, alone); },
                           {"more than one value per channel", "got 1"});
  expect_error<ShapeError>([&] { multi_node_batch_normalization(Variable(random({4}, 1, Dtype::float32)), gamma, beta, comm); },
                           {"split_batch_normalization", "(N, C, ...)", "(4,)"});
  // Channel counts that differ across ranks are caught before any sum is taken, on every rank.
  const int64_t channels = comm.rank() == 1 ? 4 : 3;
  expect_error<ShapeError>(
      [&] {
        multi_node_batch_normalization(Variable(random({2, channels}, 1, Dtype::float32)),
                                       Variable(Array::ones({channels})), Variable(Array::zeros({channels})), comm);
      },
      {"multi_node_batch_normalization", "channel counts differ across ranks", "rank 0 has 3", "rank 1 has 4"});
  // So are dtypes, by the forward's all-reduce.
  const Dtype dtype = comm.rank() == 1 ? Dtype::float64 : Dtype::float32;
  expect_error<DtypeError>(
      [&] { multi_node_batch_normalization(Variable(random({2, 3}, 1, dtype)), gamma, beta, comm); },
      {"split_batch_normalization", cat("statistics in ", dtype), "got parts that differ"});
}

TEST_CASE("MultiNodeBatchNormalization: running averages and last-batch statistics of the concatenated batch") {
  const Communicator comm = create_communicator();
  for (bool running : {true, false}) {
    INFO("use_running_average ", running);
    const auto options = links::BatchNormalizationOptions(3).decay(0.7).use_running_average(running);
    links::BatchNormalization whole(options);
    links::MultiNodeBatchNormalization part(options, comm);
    for (uint64_t step = 0; step < 2; ++step) {
      const Array x = random(with_rows(total_rows(comm), {3, 2}), 20 + step, Dtype::float32, -1, 4);
      const Variable y_whole = whole(Variable(x, false));
      const Variable y_part = part(Variable(my_rows(x, comm), false));
      expect_close(y_part.data(), my_rows(y_whole.data(), comm), 2e-5, 2e-5);
    }
    for (const char* name : {"avg_mean", "avg_var"}) {
      INFO(name);
      expect_close(part.persistent(name), whole.persistent(name), 1e-5, 1e-5);
    }
    const Array x_eval = random({2, 3, 2}, 30, Dtype::float32);
    const auto eval = using_train_mode(false);
    expect_close(part(Variable(x_eval, false)).data(), whole(Variable(x_eval, false)).data(), 2e-5, 2e-5);
  }
}

TEST_CASE("MultiNodeBatchNormalization: one all-reduce per direction once the ranks compared channel counts") {
  using Calls = std::tuple<int, int, int, int>;  // allgather, allreduce, bcast, other
  const auto calls_of = [](MPI_Comm comm, auto&& work) {
    const kusari::testing::CountMpiCalls counting(comm);
    work();
    return Calls{mpi_calls.allgather, mpi_calls.allreduce, mpi_calls.bcast, mpi_calls.other};
  };
  const Communicator comm = create_communicator();
  links::MultiNodeBatchNormalization bn(links::BatchNormalizationOptions(3), comm);
  for (Dtype dtype : {Dtype::float32, Dtype::float64}) {
    INFO("dtype ", dtype);
    for (int step = 0; step < 3; ++step) {
      INFO("step ", step);
      const Variable x(random({local_rows(comm.rank()), 3, 2}, 40 + step, dtype), true);
      Variable y;
      // Only the layer's first forward compares the channel counts (one allgather); then only sums.
      const int comparisons = dtype == Dtype::float32 && step == 0 ? 1 : 0;
      CHECK(calls_of(mpi_comm(comm), [&] { y = bn(x); }) == Calls{comparisons, 1, 0, 0});
      CHECK(calls_of(mpi_comm(comm), [&] { functions::sum(y * y).backward(); }) == Calls{0, 1, 0, 0});
    }
  }
  // The function without a layer's memory compares on every call, unless the communicator's
  // check_sizes is off; backward makes one all-reduce.
  const Communicator unchecked = create_communicator("ring", {.check_sizes = false});
  const Variable gamma(Array::ones({3})), beta(Array::zeros({3}));
  for (const Communicator* c : {&comm, &comm, &unchecked}) {
    const Variable x(random({local_rows(comm.rank()), 3}, 50, Dtype::float32), true);
    Variable y;
    const int comparisons = c->options().check_sizes ? 1 : 0;
    CHECK(calls_of(mpi_comm(*c), [&] { y = multi_node_batch_normalization(x, gamma, beta, *c).y; }) ==
          Calls{comparisons, 1, 0, 0});
    CHECK(calls_of(mpi_comm(*c), [&] { functions::sum(y).backward(); }) == Calls{0, 1, 0, 0});
  }
}

TEST_CASE("MultiNodeBatchNormalization: a rank computing in another dtype makes every rank's forward throw") {
  const Communicator comm = create_communicator();
  links::MultiNodeBatchNormalization bn(links::BatchNormalizationOptions(3), comm);
  bn(Variable(random({local_rows(comm.rank()), 3}, 60, Dtype::float32), false));
  const Dtype dtype = comm.rank() == 1 ? Dtype::float64 : Dtype::float32;
  expect_error<DtypeError>([&] { bn(Variable(random({local_rows(comm.rank()), 3}, 61, dtype), false)); },
                           {"split_batch_normalization", cat("statistics in ", dtype), "got parts that differ"});
  // float16 inputs compute in float32, so they may meet float32 ones.
  const Dtype half_or_single = comm.rank() == 1 ? Dtype::float16 : Dtype::float32;
  CHECK(bn(Variable(random({local_rows(comm.rank()), 3}, 62, half_or_single), false)).dtype() == half_or_single);
}

TEST_CASE("create_mnbn_model: every BatchNormalization becomes multi-node and keeps its arrays") {
  const Communicator comm = create_communicator();
  auto model = std::make_shared<links::models::ResNet>(20, 1, 10);
  const auto before = model->namedparams();
  std::map<std::string, Array> averages;
  int64_t bns = 0;
  for (const auto& [path, link] : model->namedlinks()) {
    if (const auto* bn = dynamic_cast<const links::BatchNormalization*>(link)) {
      averages[path] = bn->persistent("avg_mean");
      ++bns;
    }
  }
  REQUIRE(bns > 0);
  CHECK(create_mnbn_model(model, comm) == model);
  int64_t multi_node = 0;
  for (const auto& entry : model->namedlinks()) {
    const auto& path = std::get<0>(entry);
    const auto& link = std::get<1>(entry);
    if (dynamic_cast<const links::BatchNormalization*>(link) == nullptr) continue;
    INFO(path);
    CHECK(dynamic_cast<const links::MultiNodeBatchNormalization*>(link) != nullptr);
    CHECK(link->persistent("avg_mean").storage() == averages.at(path).storage());
    ++multi_node;
  }
  CHECK(multi_node == bns);
  const auto after = model->namedparams();
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].first == before[i].first);
    CHECK(after[i].second.is(before[i].second));
  }
  // The stem's batch normalization is also held by a field, which now points at the replacement:
  // forward on this rank's images uses statistics over every rank.
  const Array x = random({static_cast<int64_t>(2 * comm.size()), 1, 8, 8}, 40, Dtype::float32);
  const int64_t begin = 2 * comm.rank();
  auto reference = std::make_shared<links::models::ResNet>(20, 1, 10);
  reference->copyparams(*model);
  const Array whole = reference->forward(Variable(x, false)).data();
  const Array mine = model->forward(Variable(x.get_item({Slice{begin, begin + 2}}).copy(), false)).data();
  expect_close(mine, whole.get_item({Slice{begin, begin + 2}}), 1e-4, 1e-4);

  // A lone BatchNormalization is replaced by its multi-node counterpart.
  auto lone = std::make_shared<links::BatchNormalization>(3);
  auto replaced = create_mnbn_model(std::static_pointer_cast<links::Link>(lone), comm);
  CHECK(std::dynamic_pointer_cast<links::MultiNodeBatchNormalization>(replaced) != nullptr);
  CHECK(replaced->param("gamma").is(lone->param("gamma")));
  expect_error<ValueError>([&] { create_mnbn_model(std::shared_ptr<links::Link>(), comm); }, {"expected a model"});
}

TEST_CASE("ghost batch normalization is local-only: multi-node layers and create_mnbn_model refuse it") {
  const Communicator comm = create_communicator();
  const auto ghost = links::BatchNormalizationOptions(3).group_size(4);
  expect_error<ValueError>([&] { links::MultiNodeBatchNormalization(ghost, comm); },
                           {"ghost batch normalization", "local-only", "got 4"});
  const links::BatchNormalization local(ghost);
  expect_error<ValueError>([&] { links::MultiNodeBatchNormalization(local, comm); }, {"local-only", "got 4"});
  // Nothing is replaced when a layer of the model has ghost groups.
  auto model = std::make_shared<links::models::ResNet>(8, 1, 10, links::models::NormalizationConfig{.group_size = 2});
  expect_error<ValueError>([&] { create_mnbn_model(model, comm); }, {"create_mnbn_model", "local-only", "got 2"});
  for (const auto& entry : model->namedlinks()) {
    const auto& path = std::get<0>(entry);
    const auto& link = std::get<1>(entry);
    INFO(path);
    CHECK(dynamic_cast<const links::MultiNodeBatchNormalization*>(link) == nullptr);
  }
}

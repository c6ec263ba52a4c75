// Multi-node training suite: run under mpiexec (2 and 3 ranks). The multi-node evaluator is compared
// with one Evaluator on the whole validation set, and training resumed from a multi-node snapshot with
// the same training run without a break.

#include "training_fixtures.h"

#include <kusari/serializers/zip.h>

using namespace kusari;
using namespace kusari::testing;
using kusari::distributed::Communicator;
using kusari::distributed::create_communicator;
namespace fs = std::filesystem;

namespace {

// A directory every rank sees at the same path: rank 0 creates it and removes it once every rank is done.
class SharedDir {
 public:
  explicit SharedDir(const Communicator& comm) : comm_(comm) {
    if (comm.rank() == 0) owned_ = std::make_unique<TempDir>();
    path_ = comm.bcast_obj(owned_ ? owned_->path() : std::string());
  }
  ~SharedDir() { comm_.barrier(); }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;
  // The path of `name` inside the directory.
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  Communicator comm_;
  std::unique_ptr<TempDir> owned_;
  std::string path_;
};

// regression_data(n, seed) in float64, so that means of its columns are exact to float64 rounding.
std::shared_ptr<D::TupleDataset> float64_data(int64_t n, uint64_t seed) {
  const auto float32_data = regression_data(n, seed);
  std::vector<Array> arrays;
  for (const Array& array : float32_data->arrays()) arrays.push_back(array.astype(Dtype::float64));
  return std::make_shared<D::TupleDataset>(arrays);
}

// An evaluation function reporting the (float32) model's loss and the mean of the first input
// column; rank `extra_rank` also reports "main/extra" (the mean of the second column).
T::LossFunction evaluation(const std::shared_ptr<Regressor>& model, int rank, int extra_rank) {
  return [model, rank, extra_rank](const std::vector<Array>& batch) {
    const Variable loss = model->forward(Variable(batch[0].astype(Dtype::float32), false),
                                         Variable(batch[1].astype(Dtype::float32), false));
    const Array x = batch[0];
    T::report({{"main/loss", loss}, {"main/x0", ops::mean(x.get_item({Slice{}, 0}))}});
    if (rank == extra_rank) T::report({{"main/extra", ops::mean(x.get_item({Slice{}, 1}))}});
    return loss;
  };
}

// Every rank's values of `observation` (in key order), stacked: shape (ranks, keys).
std::vector<std::vector<double>> gather_values(const Communicator& comm, const T::Observation& observation) {
  std::vector<double> mine;
  for (const auto& [key, value] : observation) mine.push_back(value);
  const Array all = comm.allgather(Array::from_vector(mine, {static_cast<int64_t>(mine.size())}, Dtype::float64));
  std::vector<std::vector<double>> rows;
  const std::vector<double> flat = all.to_vector<double>();
  for (int r = 0; r < comm.size(); ++r) {
    rows.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(r * mine.size()),
                      flat.begin() + static_cast<std::ptrdiff_t>((r + 1) * mine.size()));
  }
  return rows;
}

// A data-parallel trainer of the Regressor on unequal shards of regression_data(13), each rank's
// iterator shuffled with its own seed, so every rank's iterator state differs from rank 0's.
Setup make_parallel_setup(const Communicator& comm, const std::string& out, int64_t stop_iteration) {
  Setup s;
  s.model = std::make_shared<Regressor>(3, 2, 11);
  s.optimizer = distributed::create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.05, 0.9), comm);
  s.optimizer->setup(s.model);
  const auto shard = distributed::scatter_dataset(regression_data(13), comm, true, 5, false);
  s.iterator = std::make_shared<D::SerialIterator>(shard, 2, true, true, 100 + static_cast<uint64_t>(comm.rank()));
  s.updater = std::make_shared<T::StandardUpdater>(s.iterator, s.optimizer, s.model);
  s.trainer = std::make_unique<T::Trainer>(s.updater, T::Trigger{static_cast<double>(stop_iteration), "iteration"}, out);
  return s;
}

}  // namespace

TEST_CASE("multi-node evaluator: exact means over every shard, equal to one process on the whole set") {
  const Communicator comm = create_communicator();
  // 11 examples give unequal shards (5 + 6, 3 + 4 + 4); size - 1 examples leave rank 0 with none.
  for (int64_t n : {int64_t{11}, int64_t{comm.size() - 1}}) {
    INFO("n ", n);
    const auto data = float64_data(n, 21);
    const auto model = std::make_shared<Regressor>(3, 2, 5);
    const int extra_rank = comm.size() - 1;
    const auto shard = distributed::scatter_dataset(data, comm, true, 9, false);
    auto local = std::make_shared<T::Evaluator>(std::make_shared<D::SerialIterator>(shard, 3, false, false),
                                                evaluation(model, comm.rank(), extra_rank), model);
    const auto evaluator = T::create_multi_node_evaluator(local, comm);
    const T::Observation global = evaluator->evaluate();

    T::Evaluator whole(std::make_shared<D::SerialIterator>(data, 5, false, false), evaluation(model, 0, 0), model);
    const T::Observation expected = whole.evaluate();
    REQUIRE(global.size() == 3);
    // The loss of each batch is a float32 mean; the sums over batches and ranks are float64.
    CHECK(global.at("validation/main/loss") == doctest::Approx(expected.at("validation/main/loss")).epsilon(1e-6));
    CHECK(global.at("validation/main/x0") == doctest::Approx(expected.at("validation/main/x0")).epsilon(1e-12));
    // A key one rank reports is the mean over that rank's examples.
    const Array extra = Array::zeros({1}, Dtype::float64);
    if (comm.rank() == extra_rank) {
      T::Evaluator mine(std::make_shared<D::SerialIterator>(shard, 4, false, false), evaluation(model, 0, 0), model);
      extra.fill(mine.evaluate().at("validation/main/extra"));
    }
    comm.bcast(extra, extra_rank);
    CHECK(global.at("validation/main/extra") == doctest::Approx(extra.to_vector<double>()[0]).epsilon(1e-12));
    // Every rank reports bitwise the same numbers.
    const auto rows = gather_values(comm, global);
    for (const auto& row : rows) CHECK(row == rows[0]);
    if (n != 11) continue;
    // The shards' sizes differ, so a mean of per-rank means would be wrong: the data tells them apart.
    const double local_loss = local->evaluate().at("validation/main/loss");
    const double mean_of_means = comm.allreduce(Array::full({1}, local_loss, Dtype::float64)).to_vector<double>()[0] /
                                 comm.size();
    CHECK(std::abs(mean_of_means - expected.at("validation/main/loss")) > 1e-3);
  }
  expect_error<ValueError>([&] { T::MultiNodeEvaluator(nullptr, comm); }, {"expected an evaluator"});
}

TEST_CASE("multi-node snapshot: k iterations, snapshot, resume, m more equal k + m without a break") {
  const Communicator comm = create_communicator();
  SharedDir dir(comm);
  constexpr int64_t k = 7, m = 6;  // batches of 2 from shards of 4 to 7 examples: the break falls mid-epoch
  Setup straight = make_parallel_setup(comm, dir / "straight", k + m);
  straight.trainer->run();

  {
    Setup first = make_parallel_setup(comm, dir / "resumed", k);
    first.trainer->extend(T::multi_node_snapshot(comm, {.n_retains = 1}), {k, "iteration"});
    first.trainer->run();
  }
  const std::string file = dir / "resumed/snapshot_iter_7";
  if (comm.rank() == 0) {
    // Rank 0 alone wrote one file: its whole trainer and every rank's iterator state.
    CHECK(fs::directory_iterator(dir / "resumed")->path().filename() == "snapshot_iter_7");
    CHECK(std::distance(fs::directory_iterator(dir / "resumed"), fs::directory_iterator()) == 1);
    const serializers::ZipReader archive(file);
    CHECK(archive.contains("updater/model:main/W.npy"));
    CHECK(archive.contains("updater/iterator:main/order.npy"));
    for (int r = 0; r < comm.size(); ++r) CHECK(archive.contains(cat("rank_states/", r, "/updater/iterator:main/order.npy")));
    CHECK_FALSE(archive.contains(cat("rank_states/0/updater/model:main/W.npy")));
  }

  Setup second = make_parallel_setup(comm, dir / "resumed", k + m);
  auto snap = T::multi_node_snapshot(comm, {.n_retains = 1, .autoload = true});
  second.trainer->extend(snap, {k, "iteration"});
  second.trainer->run();
  REQUIRE(snap->autoloaded());
  CHECK(*snap->autoloaded() == file);
  CHECK(second.updater->iteration() == k + m);
  CHECK(second.optimizer->t() == straight.optimizer->t());
  CHECK(second.iterator->epoch_detail() == straight.iterator->epoch_detail());
  CHECK(parameters(*second.model) == parameters(*straight.model));

  // load() resumes the same way from an explicit path.
  Setup third = make_parallel_setup(comm, dir / "explicit", k + m);
  auto explicit_snap = T::multi_node_snapshot(comm);
  third.trainer->extend(explicit_snap, {100, "iteration"});
  explicit_snap->load(*third.trainer, file);
  third.trainer->run();
  CHECK(parameters(*third.model) == parameters(*straight.model));
}

TEST_CASE("multi-node snapshot: autoload agrees on one file, and failures end every rank alike") {
  const Communicator comm = create_communicator();
  SharedDir dir(comm);
  const std::string out = dir / "out";
  {
    Setup s = make_parallel_setup(comm, out, 4);
    s.trainer->extend(T::multi_node_snapshot(comm), {2, "iteration"});
    s.trainer->run();
  }
  // A newer file that does not load is skipped by rank 0, and every rank follows its choice.
  if (comm.rank() == 0) write_bytes(out + "/snapshot_iter_9", {'n', 'o', 't', ' ', 'a', ' ', 'z', 'i', 'p'});
  comm.barrier();
  {
    Setup resumed = make_parallel_setup(comm, out, 5);
    auto snap = T::multi_node_snapshot(comm, {.autoload = true});
    resumed.trainer->extend(snap, {100, "iteration"});
    resumed.trainer->run();
    REQUIRE(snap->autoloaded());
    CHECK(fs::path(*snap->autoloaded()).filename() == "snapshot_iter_4");
    CHECK(resumed.updater->iteration() == 5);
  }
  // A job of another size refuses the file on every rank of it.
  const Communicator part = comm.split(comm.rank() == 0 ? 0 : 1, comm.rank());
  Setup other = make_parallel_setup(part, dir / "other", 1);
  expect_error<IOError>([&] { T::multi_node_snapshot(part)->load(*other.trainer, out + "/snapshot_iter_4"); },
                        {"cannot load", cat("holds the state of ", comm.size(), " ranks; this job has ", part.size())});
  // When no file loads on rank 0, every rank throws.
  comm.barrier();  // every group has read the file before it is spoilt
  if (comm.rank() == 0) {
    for (const char* name : {"snapshot_iter_2", "snapshot_iter_4"}) write_bytes(out + "/" + name, {0});
  }
  comm.barrier();
  Setup failing = make_parallel_setup(comm, out, 5);
  failing.trainer->extend(T::multi_node_snapshot(comm, {.autoload = true}));
  expect_error<IOError>([&] { failing.trainer->run(); }, {"no snapshot", "snapshot_iter_9", "snapshot_iter_2:"});
  CHECK(failing.updater->iteration() == 0);
  CHECK(T::is_rank_local_key("updater/iterator:main/order"));
  CHECK(T::is_rank_local_key("a/iterator:b/c/d"));
  CHECK_FALSE(T::is_rank_local_key("updater/model:main/iterator:x"));
  CHECK_FALSE(T::is_rank_local_key("iterator:main"));
}

// scatter_dataset suite: run under mpiexec (2 and 3 ranks). Every rank gathers every rank's shard
// (as base indices) and checks how they partition the data set.

#include "testing.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_error;

namespace {

// A data set of n examples whose only component is the example's index.
data::DatasetPtr indices_dataset(int64_t n) {
  return std::make_shared<data::TupleDataset>(std::vector<Array>{Array::arange(0, static_cast<double>(n), 1, Dtype::int64)});
}

// Every rank's shard as the base indices of its examples (read through get(), in shard order).
std::vector<std::vector<int64_t>> all_shards(const Communicator& comm, const data::SubDataset& shard) {
  std::vector<int64_t> mine;
  for (int64_t i = 0; i < shard.size(); ++i) mine.push_back(shard.get(i)[0].item<int64_t>());
  std::string bytes(mine.size() * sizeof(int64_t), '\0');
  if (!mine.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  std::vector<std::vector<int64_t>> out;
  for (int r = 0; r < comm.size(); ++r) {
    const std::string theirs = comm.bcast_obj(bytes, r);
    std::vector<int64_t> indices(theirs.size() / sizeof(int64_t));
    if (!indices.empty()) std::memcpy(indices.data(), theirs.data(), theirs.size());
    out.push_back(indices);
  }
  return out;
}

}  // namespace

TEST_CASE("scatter_dataset: shards are disjoint and cover the data set") {
  const Communicator comm = create_communicator();
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{10}, int64_t{101}}) {
    for (bool shuffle : {false, true}) {
      INFO("n ", n, ", shuffle ", shuffle);
      const auto shard = scatter_dataset(indices_dataset(n), comm, shuffle, 7, false);
      const auto shards = all_shards(comm, *shard);
      std::vector<int64_t> all;
      for (int r = 0; r < comm.size(); ++r) {
        const int64_t expected = n * (r + 1) / comm.size() - n * r / comm.size();
        CHECK(static_cast<int64_t>(shards[static_cast<size_t>(r)].size()) == expected);
        all.insert(all.end(), shards[static_cast<size_t>(r)].begin(), shards[static_cast<size_t>(r)].end());
      }
      if (!shuffle) CHECK(std::is_sorted(all.begin(), all.end()));
      std::sort(all.begin(), all.end());
      std::vector<int64_t> every(static_cast<size_t>(n));
      std::iota(every.begin(), every.end(), int64_t{0});
      CHECK(all == every);
    }
  }
}

TEST_CASE("scatter_dataset: equal lengths cover the data set with the fewest repeats") {
  const Communicator comm = create_communicator();
  const int64_t n = 10;
  const int64_t per_rank = (n + comm.size() - 1) / comm.size();
  const auto shards = all_shards(comm, *scatter_dataset(indices_dataset(n), comm, true, 3));
  std::vector<int64_t> all;
  for (const auto& shard : shards) {
    CHECK(static_cast<int64_t>(shard.size()) == per_rank);
    all.insert(all.end(), shard.begin(), shard.end());
  }
  const std::set<int64_t> distinct(all.begin(), all.end());
  CHECK(static_cast<int64_t>(distinct.size()) == n);
  CHECK(static_cast<int64_t>(all.size()) - n == per_rank * comm.size() - n);
}

TEST_CASE("scatter_dataset: rank 0's seed decides the order") {
  const Communicator comm = create_communicator();
  const auto dataset = indices_dataset(50);
  const auto first = all_shards(comm, *scatter_dataset(dataset, comm, true, 11));
  CHECK(all_shards(comm, *scatter_dataset(dataset, comm, true, 11)) == first);
  CHECK(all_shards(comm, *scatter_dataset(dataset, comm, true, 12)) != first);
  CHECK(all_shards(comm, *scatter_dataset(dataset, comm, false)) != first);
  // Without a seed rank 0 draws one; the shards still partition the data set.
  const auto drawn = all_shards(comm, *scatter_dataset(dataset, comm, true, std::nullopt, false));
  std::set<int64_t> distinct;
  for (const auto& shard : drawn) distinct.insert(shard.begin(), shard.end());
  CHECK(distinct.size() == 50);
}

TEST_CASE("scatter_dataset: errors") {
  const Communicator comm = create_communicator();
  expect_error<ValueError>([&] { scatter_dataset(nullptr, comm); }, {"expected a data set"});
  const int64_t n = comm.rank() == 1 ? 9 : 8;
  expect_error<ValueError>([&] { scatter_dataset(indices_dataset(n), comm); },
                           {"one size on every rank", "rank 0 has 8 examples", "rank 1 has 9"});
}

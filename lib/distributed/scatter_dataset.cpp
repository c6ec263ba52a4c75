#include <kusari/distributed/scatter_dataset.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include <kusari/data/random_stream.h>

namespace kusari::distributed {
namespace {

// Throws ValueError on every rank unless every rank's data set has rank 0's size.
void require_same_size(const Communicator& comm, int64_t size) {
  const std::vector<int64_t> sizes = comm.allgather(Array::full({1}, static_cast<double>(size), Dtype::int64, Device::cpu()))
                                         .to_vector<int64_t>();
  for (int r = 1; r < comm.size(); ++r) {
    if (sizes[static_cast<size_t>(r)] != sizes[0]) {
      throw ValueError(cat("scatter_dataset: expected data sets of one size on every rank: rank 0 has ", sizes[0],
                           " examples, rank ", r, " has ", sizes[static_cast<size_t>(r)]));
    }
  }
}

// Rank 0's order of the n examples, as bytes.
std::string root_order(int64_t n, bool shuffle, std::optional<uint64_t> seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  if (shuffle) {
    order = data::random_permutation(n, seed ? *seed : std::random_device()());
  } else {
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  std::string bytes(order.size() * sizeof(int64_t), '\0');
  if (!order.empty()) std::memcpy(bytes.data(), order.data(), bytes.size());
  return bytes;
}

}  // namespace

std::shared_ptr<data::SubDataset> scatter_dataset(const data::DatasetPtr& dataset, const Communicator& comm,
                                                  bool shuffle, std::optional<uint64_t> seed,
                                                  bool force_equal_length) {
  if (!dataset) throw ValueError("scatter_dataset: expected a data set, got null");
  const int64_t n = dataset->size();
  require_same_size(comm, n);
  const std::string bytes = comm.bcast_obj(comm.rank() == 0 ? root_order(n, shuffle, seed) : std::string());
  const int64_t size = comm.size(), rank = comm.rank();
  const int64_t begin = n * rank / size;
  const int64_t end = force_equal_length ? begin + (n + size - 1) / size : n * (rank + 1) / size;
  std::vector<int64_t> shard(static_cast<size_t>(end - begin));
  if (!shard.empty()) {
    std::memcpy(shard.data(), bytes.data() + static_cast<size_t>(begin) * sizeof(int64_t),
                shard.size() * sizeof(int64_t));
  }
  return std::make_shared<data::SubDataset>(dataset, std::move(shard));
}

}  // namespace kusari::distributed

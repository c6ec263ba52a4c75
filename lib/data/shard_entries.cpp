#include <kusari/data/shard_entries.h>

#include <kusari/core/error.h>
#include <kusari/data/random_stream.h>

namespace kusari::data {

std::vector<LabeledPath> shard_entries(const std::vector<LabeledPath>& entries, int64_t rank, int64_t size,
                                       uint64_t seed, bool shuffle, bool equal_length) {
  if (size <= 0 || rank < 0 || rank >= size) {
    throw ValueError(cat("shard_entries: expected 0 <= rank < size, got rank ", rank, " of size ", size));
  }
  const auto n = static_cast<int64_t>(entries.size());
  const int64_t begin = n * rank / size;
  const int64_t end = equal_length ? begin + (n + size - 1) / size : n * (rank + 1) / size;
  const std::vector<int64_t> order = shuffle ? random_permutation(n, seed) : std::vector<int64_t>();
  std::vector<LabeledPath> shard;
  shard.reserve(static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) {
    shard.push_back(entries[static_cast<size_t>(shuffle ? order[static_cast<size_t>(i)] : i)]);
  }
  return shard;
}

}  // namespace kusari::data

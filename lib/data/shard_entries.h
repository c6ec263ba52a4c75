#pragma once
// Sharding at the list: each rank keeps only its own files, so it reads and decodes nothing else.

#include <cstdint>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/label_list.h>

namespace kusari::data {

// Rank `rank`'s share of `entries` among `size` ranks, the same on every rank without communication:
// the r-th contiguous slice of the order (a random permutation drawn from `seed` when shuffle is on,
// the list order otherwise). Slices are disjoint and cover the list, some empty when size exceeds
// the list; with equal_length each has ceil(N / size) entries instead, overlapping by the few needed
// (scatter_dataset's layout). Throws ValueError unless size > 0 and 0 <= rank < size.
KUSARI_API std::vector<LabeledPath> shard_entries(const std::vector<LabeledPath>& entries, int64_t rank, int64_t size,
                                                  uint64_t seed, bool shuffle, bool equal_length);

}  // namespace kusari::data

#pragma once
// scatter_dataset: gives each rank its shard of a data set every rank can read.

#include <cstdint>
#include <memory>
#include <optional>

#include <kusari/core/api.h>
#include <kusari/data/sub_dataset.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

// This rank's shard of `dataset`, which every rank holds (the same size everywhere, else every rank
// throws ValueError naming two ranks' sizes). Rank 0 decides the order of the examples (a random
// permutation drawn from `seed` when shuffle is on, from a random seed when none is given; the
// identity otherwise) and broadcasts it; rank r takes the r-th contiguous slice of that order. The
// slices are disjoint and cover the data set; with force_equal_length each has ceil(N / size)
// examples instead, slices overlapping by the few needed (Chainer's layout). Collective.
KUSARI_API std::shared_ptr<data::SubDataset> scatter_dataset(const data::DatasetPtr& dataset, const Communicator& comm,
                                                             bool shuffle = false, std::optional<uint64_t> seed = {},
                                                             bool force_equal_length = true);

}  // namespace kusari::distributed

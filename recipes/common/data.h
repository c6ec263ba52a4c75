#pragma once
// The data of a run: this rank's shards of the training and validation sets (IDX files, or list
// files of JPEG/PNG images read lazily or kept in memory) and the iterators over them.

#include <cstdint>
#include <memory>

#include <kusari/data/iterator.h>
#include <kusari/distributed/communicator.h>

#include "settings.h"

namespace kusari::recipes {

// This rank's share of the data.
struct RunData {
  data::DatasetPtr train;                  // this rank's training shard (equal lengths on every rank)
  data::DatasetPtr val;                    // this rank's disjoint part of the validation set
  std::shared_ptr<data::Iterator> train_iter;  // repeating, reshuffled every epoch
  std::shared_ptr<data::Iterator> val_iter;    // one pass, in order
  int64_t channels = 3;                    // image channels the model takes
};

// Threads for one rank: compute threads and image loaders, within the node's cores shared by its ranks.
struct ThreadPlan {
  int64_t compute = 1;  // OpenMP threads
  int64_t loaders = 0;  // decoding threads (0: batches are decoded on the training thread)
};

// The flags' thread counts, or, where they are automatic, this node's cores divided among its ranks
// so that ranks × (compute + loaders) stays within the cores (loaders only for image lists, none when
// a rank has one core); explicit counts are taken as given (run() warns when they exceed the cores).
ThreadPlan plan_threads(const Settings& settings, int ranks_on_node, int64_t cores);

// Reads this rank's shards and makes the iterators (local batch = B / P; evaluation batches of
// eval_batchsize). Collective for IDX data (the shard order is broadcast). Prints the in-memory
// estimate on rank 0 before loading; throws when it exceeds this rank's share of the node's memory.
RunData load_data(const Settings& settings, const distributed::Communicator& comm, const ThreadPlan& threads);

}  // namespace kusari::recipes

#pragma once
// Multi-node snapshots (ChainerMN's multi_node_snapshot): rank 0 writes the whole trainer together
// with every rank's iterator positions, and every rank resumes from that one file.
//
// The ranks hold the same model, optimizer state and counters (the multi-node optimizer keeps them
// equal), so rank 0's copy stands for all. Each rank's iterators, though, walk its own shard with
// their own position, epoch and order, which need not match rank 0's (a shard of another length, an
// iterator seeded per rank), so those are gathered from every rank and each rank gets its own back.

#include <optional>
#include <string>

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>
#include <kusari/training/snapshot.h>

namespace kusari::training {

// Whether `key` (a full trainer key) is state each rank keeps for itself: a value under a scope named
// "iterator:<name>" (an updater's iterators, in Chainer's layout).
KUSARI_API bool is_rank_local_key(const std::string& key);

// Snapshots of the whole trainer over the ranks of a communicator. Every rank extends its trainer
// with one and runs it at the same iterations; the files must be visible to every rank at the same
// path (one machine or a shared file system).
class KUSARI_API MultiNodeSnapshot : public Extension {
 public:
  // Writes and finds files as `options` says (filename, n_retains, autoload, compress, strict).
  // Throws ValueError for the filenames and n_retains Snapshot refuses.
  MultiNodeSnapshot(distributed::Communicator comm, SnapshotOptions options = {});
  // Gathers every rank's rank-local values at rank 0, which writes its own trainer (so the file also
  // resumes a single process) plus "rank_states/size" and, under "rank_states/<r>/", rank r's values,
  // atomically, then removes the oldest files beyond n_retains. A failed write throws IOError on
  // every rank. Collective.
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return "snapshot"; }
  Trigger default_trigger() const override { return {1, "epoch"}; }
  int priority() const override { return kPrioritySnapshot; }
  // With autoload: rank 0 loads the newest matching file that loads, broadcasts its name, and every
  // other rank loads that same file, so no two ranks resume from different iterations. Nothing
  // happens when there is no file; IOError on every rank when files exist but none loads on rank 0,
  // or when the chosen one fails on some rank. Collective.
  void restore(Trainer& trainer) override;
  // Loads `path` into this rank's trainer: rank 0's state for everything but the rank-local values,
  // which come from this rank's own entry. Throws ValueError on every rank when the file was written
  // by another number of ranks, and IOError on every rank, naming each rank's error, when loading
  // fails on any (a rank that failed is left unchanged). Collective.
  void load(Trainer& trainer, const std::string& path);
  // The file autoload loaded, if any (the same on every rank).
  const std::optional<std::string>& autoloaded() const { return autoloaded_; }

 private:
  // A plain Snapshot with these options, writing `target` (used for naming, pruning and listing).
  Snapshot files(serializers::SerializeFunction target = {}) const;
  // Loads `path` into this rank's trainer alone (not collective).
  void load_here(Trainer& trainer, const std::string& path) const;
  // Throws IOError with `what` and every rank's non-empty `error` on every rank when any is non-empty. Collective.
  void agree_on_errors(const std::string& error, const std::string& what) const;

  distributed::Communicator comm_;
  SnapshotOptions options_;
  std::optional<std::string> autoloaded_;
};

// A multi-node snapshot of the whole trainer: `trainer.extend(multi_node_snapshot(comm, {.n_retains = 2}))`.
KUSARI_API std::shared_ptr<MultiNodeSnapshot> multi_node_snapshot(const distributed::Communicator& comm,
                                                                  SnapshotOptions options = {});

}  // namespace kusari::training

#pragma once
// Multi-node evaluation (ChainerMN's create_multi_node_evaluator): every rank evaluates its shard of the
// validation set, and every rank reports the means over all shards together.

#include <memory>
#include <string>

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>
#include <kusari/training/dict_summary.h>
#include <kusari/training/evaluator.h>

namespace kusari::training {

// The sum over the ranks of every rank's summary (each key's weighted sums and weights added over the
// ranks that reported it), bitwise the same on every rank: gathered at rank 0, merged in rank order
// and broadcast. Collective.
KUSARI_API DictSummary merge_across_ranks(const DictSummary& local, const distributed::Communicator& comm);

// An Evaluator over this rank's shard whose reports cover every rank's shard.
class KUSARI_API MultiNodeEvaluator : public Extension {
 public:
  // Runs `evaluator` on this rank and combines over comm. Throws ValueError for a null evaluator.
  MultiNodeEvaluator(std::shared_ptr<Evaluator> evaluator, distributed::Communicator comm);
  // Runs the local evaluator and returns, prefixed, each key's weighted sum over all ranks' batches
  // divided by its total weight: exactly what one process would report on the shards concatenated
  // (not a mean of per-rank means), whatever the shard sizes, and the same on every rank. Collective.
  Observation evaluate();
  // Reports evaluate() into the trainer's observation (on every rank). Collective.
  void operator()(Trainer& trainer) override;
  // The local evaluator's name, trigger and priority.
  std::string default_name() const override { return evaluator_->default_name(); }
  Trigger default_trigger() const override { return evaluator_->default_trigger(); }
  int priority() const override { return evaluator_->priority(); }

 private:
  std::shared_ptr<Evaluator> evaluator_;
  distributed::Communicator comm_;
};

// `evaluator` made multi-node: `trainer.extend(create_multi_node_evaluator(evaluator, comm))`, with
// the evaluator's iterator over this rank's shard (scatter_dataset with force_equal_length off, so no
// example is counted twice). Every rank must run it at the same iterations.
KUSARI_API std::shared_ptr<MultiNodeEvaluator> create_multi_node_evaluator(std::shared_ptr<Evaluator> evaluator,
                                                                           const distributed::Communicator& comm);

}  // namespace kusari::training

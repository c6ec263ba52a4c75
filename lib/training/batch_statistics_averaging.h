#pragma once
// Batch normalization without moving averages, evaluated on every rank's statistics (Akiba et al.
// 2017): right before evaluation, one all-reduce averages the last training batch's E[x] and E[x²] of
// every such layer over the ranks, so each rank evaluates with the statistics of the global batch.

#include <memory>

#include <kusari/distributed/communicator.h>
#include <kusari/links/link.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// For every BatchNormalization in `model` kept without running averages, replaces last_mean and
// last_var by those of all ranks' last training batches together: E[x] and E[x²] weighted by each
// rank's last_count, every layer in one float64 all-reduce, var = E[x²] − E[x]². A layer no rank has
// trained yet is left as it is. Collective: every rank calls it with the same model structure.
void average_batch_statistics_now(const links::Link& model, const distributed::Communicator& comm);

// An extension that runs average_batch_statistics_now before the evaluator (give it the evaluator's
// trigger: `trainer.extend(average_batch_statistics(model, comm), evaluation_trigger)`).
std::shared_ptr<Extension> average_batch_statistics(std::shared_ptr<links::Link> model, distributed::Communicator comm);

}  // namespace kusari::training

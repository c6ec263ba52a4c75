#pragma once
// Batch-normalization statistics made the same on every rank. Each rank of a data-parallel run with
// local batch normalization gathers statistics from its own batches, so before evaluation and before
// a snapshot (which keeps rank 0's copy for every rank) one all-reduce puts every rank on the
// statistics of all ranks together (ChainerMN's AllreducePersistent, and for layers without running
// averages the evaluation statistics of Akiba et al. 2017).

#include <memory>

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>
#include <kusari/links/link.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// For every BatchNormalization in `model`: with running averages, replaces avg_mean and avg_var by
// their mean over the ranks; without them, replaces last_mean and last_var by those of all ranks'
// last training batches together (E[x] and E[x²] weighted by each rank's last_count, var = E[x²] −
// E[x]²), leaving a layer no rank has trained yet as it is. One float64 all-reduce for all layers.
// Collective: every rank calls it with the same model structure.
KUSARI_API void average_batch_statistics_now(const links::Link& model, const distributed::Communicator& comm);

// An extension that runs average_batch_statistics_now before the evaluator and snapshots of the same
// iteration: `trainer.extend(average_batch_statistics(model, comm), evaluation_trigger)`.
KUSARI_API std::shared_ptr<Extension> average_batch_statistics(std::shared_ptr<links::Link> model, distributed::Communicator comm);

}  // namespace kusari::training

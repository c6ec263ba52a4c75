#pragma once
// The network of a run, built from --model with the batch-normalization settings of the flags, made
// multi-node or cast to the compute dtype as the flags say.

#include <cstdint>
#include <memory>

#include <kusari/core/dtype.h>
#include <kusari/distributed/communicator.h>
#include <kusari/links/link.h>

#include "settings.h"

namespace kusari::recipes {

// The predictor (logits out) named by settings.model for `channels` input channels, its batch
// normalizations configured by the bn flags (ghost groups of bn_batch, eps, decay, running averages,
// zero-γ); with --bn multi_node they take their statistics over every rank's batch.
std::shared_ptr<links::Link> make_model(const Settings& settings, int64_t channels,
                                        const distributed::Communicator& comm);

// Gives every lazily shaped parameter its shape with one evaluation-mode forward of `example` (one
// input example, from wherever the dataset keeps it) on `device`, the model's.
void shape_parameters(links::Link& model, const Array& example, const Device& device);

// shape_parameters, then casts the parameters to `dtype` (nothing at all for float32).
void cast_parameters(links::Link& model, const Array& example, Dtype dtype, const Device& device);

}  // namespace kusari::recipes

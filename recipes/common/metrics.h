#pragma once
// What a run measures per iteration besides the loss and accuracy (training::classification_loss): the
// learning rate, the time an iteration takes and the images it trains per second.

#include <cstdint>

#include <kusari/training/trainer.h>

namespace kusari::recipes {

// Extends `trainer` to report "lr" (the optimizer's rate in the iteration), "time_per_iteration"
// (seconds of the update, from the end of the previous iteration's extensions) and
// "images_per_second" (`batchsize` over that time) every iteration, so a log entry holds their means
// over its interval; the updater reports "data_time", the part spent waiting for the batch.
void observe_iteration(training::Trainer& trainer, int64_t batchsize);

}  // namespace kusari::recipes

#pragma once
// What a run measures per iteration besides the loss and accuracy (training::classification_loss): the
// learning rate, the time an iteration takes and the images it trains per second.

#include <cstdint>

#include <kusari/training/trainer.h>

namespace kusari::recipes {

// Extends `trainer` to report "lr" (the optimizer's rate in the iteration) and "time_per_iteration"
// (seconds of the update, from the end of the previous iteration's extensions) every iteration, so a
// log entry holds their means over its interval; the updater reports "data_time", the part spent
// waiting for the batch.
void observe_iteration(training::Trainer& trainer);
// Sets a log entry's "images_per_second": `batchsize` over its mean "time_per_iteration" (the images of
// the interval over its time, where a mean of each iteration's rate would weigh fast iterations more).
void add_images_per_second(training::Observation& entry, int64_t batchsize);

}  // namespace kusari::recipes

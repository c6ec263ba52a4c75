#include <kusari/training/unit_progress.h>

#include <kusari/core/error.h>
#include <kusari/training/trainer.h>

namespace kusari::training {

UnitProgress::UnitProgress(std::string unit, const char* trigger) : unit_(std::move(unit)) {
  if (unit_ != "iteration" && unit_ != "epoch") {
    throw ValueError(cat(trigger, ": expected the unit \"iteration\" or \"epoch\", got \"", unit_, "\""));
  }
}

std::pair<std::optional<double>, double> UnitProgress::advance(const Trainer& trainer) {
  const Updater& updater = trainer.updater();
  const bool epoch = unit_ == "epoch";
  const double current = epoch ? updater.epoch_detail() : static_cast<double>(updater.iteration());
  std::optional<double> previous;
  // A loaded progress past the trainer's (a snapshot taken while this trigger counted another unit, or
  // on a rank whose shard is longer) says nothing of this run: the trigger starts over from now.
  if (previous_ > current) {
    previous_ = current;
    return {std::nullopt, current};
  }
  if (previous_ >= 0) {
    previous = previous_;
  } else if (epoch) {
    previous = updater.previous_epoch_detail();
  } else if (updater.iteration() > 0) {
    previous = current - 1;
  }
  previous_ = current;
  return {previous, current};
}

void UnitProgress::serialize(Serializer& serializer) {
  serialize_at_least(serializer, "previous", previous_, -1, "trigger");
}

}  // namespace kusari::training

#include <kusari/training/standard_updater.h>

#include <chrono>

#include <kusari/core/error.h>
#include <kusari/core/timeline.h>
#include <kusari/data/concat_examples.h>
#include <kusari/training/reporter.h>

namespace kusari::training {

StandardUpdater::StandardUpdater(std::shared_ptr<data::Iterator> iterator,
                                 std::shared_ptr<optimizers::Optimizer> optimizer, LossFunction loss_fn,
                                 std::optional<Device> device)
    : iterator_(std::move(iterator)), optimizer_(std::move(optimizer)), loss_fn_(std::move(loss_fn)), device_(device) {
  if (!iterator_) throw ValueError("StandardUpdater: expected an iterator, got null");
  if (!optimizer_) throw ValueError("StandardUpdater: expected an optimizer, got null");
  if (!optimizer_->target()) throw ValueError("StandardUpdater: the optimizer has no target; call setup(model) first");
  if (!loss_fn_) throw ValueError("StandardUpdater: expected a loss function, got an empty one");
}

void StandardUpdater::update() {
  optimizer_->set_epoch_detail(iterator_->epoch_detail());
  data::Example arrays;
  const auto waiting = std::chrono::steady_clock::now();
  {
    const timeline::Span span("data");
    const std::vector<data::Example> batch = iterator_->next();
    if (batch.empty()) {
      throw ValueError(cat("StandardUpdater: the iterator ran out of batches at iteration ", iteration_,
                           "; training iterators must repeat"));
    }
    arrays = data::concat_examples(batch, device_);
  }
  report({{"data_time", std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count()}});
  optimizer_->update([&] { return loss_fn_(arrays); });
  if (iterator_->is_new_epoch()) optimizer_->new_epoch();
  ++iteration_;
}

void StandardUpdater::serialize(Serializer& serializer) {
  iterator_->serialize(serializer["iterator:main"]);
  optimizer_->serialize(serializer["optimizer:main"]);
  optimizer_->target()->serialize(serializer["model:main"]);
  serialize_count(serializer, "iteration", iteration_, "StandardUpdater");
}

}  // namespace kusari::training

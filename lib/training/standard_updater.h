#pragma once
// StandardUpdater: one batch from an iterator, concatenated, one loss, one optimizer step per
// iteration (Chainer's StandardUpdater).

#include <memory>
#include <optional>

#include <kusari/core/api.h>
#include <kusari/core/device.h>
#include <kusari/data/iterator.h>
#include <kusari/training/loss_function.h>
#include <kusari/training/updater.h>

namespace kusari::training {

// Updates the optimizer's target from the batches of one iterator.
class KUSARI_API StandardUpdater : public Updater {
 public:
  // Draws batches from `iterator` (it should repeat), concatenates them (onto `device` when given),
  // and steps `optimizer` (already set up on the model) on loss_fn(batch). Throws ValueError for a
  // null argument or an optimizer without a target.
  StandardUpdater(std::shared_ptr<data::Iterator> iterator, std::shared_ptr<optimizers::Optimizer> optimizer,
                  LossFunction loss_fn, std::optional<Device> device = std::nullopt);
  // The same with supervised_loss(model) for a model whose forward(x, t) returns the loss.
  template <SupervisedModel M>
  StandardUpdater(std::shared_ptr<data::Iterator> iterator, std::shared_ptr<optimizers::Optimizer> optimizer,
                  std::shared_ptr<M> model, std::optional<Device> device = std::nullopt)
      : StandardUpdater(std::move(iterator), std::move(optimizer), supervised_loss(std::move(model)), device) {}

  // Sets the optimizer's epoch_detail, fetches the next batch (reporting "data_time", the seconds it
  // waited for it and its copy to the device), runs optimizer.update(loss), marks a new epoch on the
  // optimizer when the batch completed one, and counts the iteration. Throws ValueError
  // when the iterator is exhausted.
  void update() override;
  int64_t iteration() const override { return iteration_; }
  int64_t epoch() const override { return iterator_->epoch(); }
  double epoch_detail() const override { return iterator_->epoch_detail(); }
  std::optional<double> previous_epoch_detail() const override { return iterator_->previous_epoch_detail(); }
  bool is_new_epoch() const override { return iterator_->is_new_epoch(); }
  optimizers::Optimizer& optimizer() override { return *optimizer_; }
  // The iterator batches come from.
  data::Iterator& iterator() { return *iterator_; }
  // Saves or loads the iterator ("iterator:main/"), the optimizer ("optimizer:main/"), the model
  // ("model:main/") and the iteration count, in Chainer's layout.
  void serialize(Serializer& serializer) override;

 private:
  std::shared_ptr<data::Iterator> iterator_;
  std::shared_ptr<optimizers::Optimizer> optimizer_;
  LossFunction loss_fn_;
  std::optional<Device> device_;
  int64_t iteration_ = 0;
};

}  // namespace kusari::training

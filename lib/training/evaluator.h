#pragma once
// Evaluator: runs a model over a validation iterator once and reports the batch-size-weighted means of
// what the evaluation function reported, under "validation/" (Chainer's Evaluator).

#include <memory>
#include <optional>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/device.h>
#include <kusari/data/iterator.h>
#include <kusari/links/link.h>
#include <kusari/training/dict_summary.h>
#include <kusari/training/extension.h>
#include <kusari/training/loss_function.h>

namespace kusari::training {

// Settings of an Evaluator.
struct KUSARI_API EvaluatorOptions {
  std::optional<Device> device{};       // where batches are concatenated (default: where they are)
  std::string prefix = "validation";    // reported keys become "<prefix>/<key>"; also the default name
};

// Evaluates on a whole data set each time it runs (by default once per epoch).
class KUSARI_API Evaluator : public Extension {
 public:
  // Calls eval_fn on every batch of `iterator` (which should not repeat; one epoch is used either way)
  // with `model` (optional) in evaluation mode. Throws ValueError for a null iterator or an empty function.
  Evaluator(std::shared_ptr<data::Iterator> iterator, LossFunction eval_fn,
            std::shared_ptr<links::Link> model = nullptr, EvaluatorOptions options = {});
  // The same with supervised_loss(model), which reports "main/loss".
  template <SupervisedModel M>
  Evaluator(std::shared_ptr<data::Iterator> iterator, std::shared_ptr<M> model, EvaluatorOptions options = {})
      : Evaluator(std::move(iterator), supervised_loss(model), model, std::move(options)) {}

  // Resets the iterator and goes through one epoch of it with the model's set_train(false),
  // using_train_mode(false) and no_backprop_mode, returning what was reported, key by key (unprefixed),
  // weighted by the batch sizes. The model's train flag is restored afterwards.
  DictSummary summarize();
  // The means of summarize(), prefixed ("validation/main/loss").
  Observation evaluate();
  // The means of `summary`, prefixed.
  Observation prefixed_means(const DictSummary& summary) const;
  // Reports evaluate() into the trainer's observation.
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return options_.prefix; }
  Trigger default_trigger() const override { return {1, "epoch"}; }
  int priority() const override { return kPriorityWriter; }

 private:
  std::shared_ptr<data::Iterator> iterator_;
  LossFunction eval_fn_;
  std::shared_ptr<links::Link> model_;
  EvaluatorOptions options_;
};

}  // namespace kusari::training

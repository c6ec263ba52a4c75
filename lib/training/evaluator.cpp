#include <kusari/training/evaluator.h>

#include <kusari/autograd/backprop_mode.h>
#include <kusari/core/config.h>
#include <kusari/core/timeline.h>
#include <kusari/data/concat_examples.h>

namespace kusari::training {
namespace {

// Puts a link into evaluation mode and restores its flag at scope exit.
class EvaluationMode {
 public:
  explicit EvaluationMode(links::Link* link) : link_(link), previous_(link && link->is_train()) {
    if (link_) link_->set_train(false);
  }
  ~EvaluationMode() {
    if (link_) link_->set_train(previous_);
  }
  EvaluationMode(const EvaluationMode&) = delete;
  EvaluationMode& operator=(const EvaluationMode&) = delete;

 private:
  links::Link* link_;
  bool previous_;
};

}  // namespace

Evaluator::Evaluator(std::shared_ptr<data::Iterator> iterator, LossFunction eval_fn,
                     std::shared_ptr<links::Link> model, EvaluatorOptions options)
    : iterator_(std::move(iterator)), eval_fn_(std::move(eval_fn)), model_(std::move(model)),
      options_(std::move(options)) {
  if (!iterator_) throw ValueError("Evaluator: expected an iterator, got null");
  if (!eval_fn_) throw ValueError("Evaluator: expected an evaluation function, got an empty one");
}

DictSummary Evaluator::summarize() {
  const timeline::Span span("evaluation");
  EvaluationMode model_mode(model_.get());
  auto train_mode = using_train_mode(false);
  auto no_graph = no_backprop_mode();
  iterator_->reset();
  DictSummary summary;
  do {
    const std::vector<data::Example> batch = iterator_->next();
    if (batch.empty()) break;
    Observation observed;
    {
      auto scope = report_scope(observed);
      eval_fn_(data::concat_examples(batch, options_.device));
    }
    summary.add(observed, static_cast<double>(batch.size()));
  } while (!iterator_->is_new_epoch());
  return summary;
}

Observation Evaluator::evaluate() { return prefixed_means(summarize()); }

Observation Evaluator::prefixed_means(const DictSummary& summary) const {
  Observation result;
  for (const auto& [key, mean] : summary.compute_mean()) result[options_.prefix + "/" + key] = mean;
  return result;
}

void Evaluator::operator()(Trainer&) {
  report_observation(evaluate());
}

}  // namespace kusari::training

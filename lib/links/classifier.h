#pragma once
// Classifier: a predictor with a loss and an accuracy, both reported (Chainer's L.Classifier).

#include <functional>
#include <memory>

#include <kusari/core/api.h>
#include <kusari/links/chain.h>

namespace kusari::links {

// A function of the predictor's output y and the labels t (a loss or a metric).
using LossFunction = std::function<Variable(const Variable& y, const Variable& t)>;

// F::softmax_cross_entropy with its default options.
KUSARI_API Variable default_loss(const Variable& y, const Variable& t);
// F::accuracy without an ignored label.
KUSARI_API Variable default_accuracy(const Variable& y, const Variable& t);

// Wraps a predictor (child "predictor"): forward(x, t) runs it on x and returns lossfun(y, t), keeping
// that loss and accfun(y, t) and reporting them as "main/loss" and "main/accuracy" (the trainer's
// target is "main" in Chainer's keys; an Evaluator makes them "validation/main/...").
class KUSARI_API Classifier : public Cloneable<Classifier, Chain> {
 public:
  // A classifier of `predictor` with the given loss and accuracy; an empty accfun computes no accuracy.
  explicit Classifier(std::shared_ptr<Link> predictor, LossFunction lossfun = default_loss,
                      LossFunction accfun = default_accuracy);
  // The loss of the predictor's output on x against the labels t.
  Variable forward(const Variable& x, const Variable& t);
  // Same as forward(x, t).
  Variable operator()(const Variable& x, const Variable& t) { return forward(x, t); }
  // The one-input forward and call of Link, which throw: a classifier needs the labels too.
  using Chain::forward;
  using Chain::operator();
  // The predictor.
  const std::shared_ptr<Link>& predictor() const { return predictor_; }
  // The loss of the last forward (undefined before the first).
  const Variable& last_loss() const { return last_loss_; }
  // The accuracy of the last forward (undefined before the first or without accfun).
  const Variable& last_accuracy() const { return last_accuracy_; }

 protected:
  std::string type_name() const override { return "Classifier"; }

 private:
  std::shared_ptr<Link> predictor_;
  LossFunction lossfun_;
  LossFunction accfun_;
  Variable last_loss_;
  Variable last_accuracy_;
};

}  // namespace kusari::links

#include <kusari/links/classifier.h>

#include <kusari/autograd/report.h>
#include <kusari/functions/evaluation.h>
#include <kusari/functions/loss.h>

namespace kusari::links {

Variable default_loss(const Variable& y, const Variable& t) { return functions::softmax_cross_entropy(y, t); }

Variable default_accuracy(const Variable& y, const Variable& t) { return functions::accuracy(y, t); }

Classifier::Classifier(std::shared_ptr<Link> predictor, LossFunction lossfun, LossFunction accfun)
    : predictor_(std::move(predictor)), lossfun_(std::move(lossfun)), accfun_(std::move(accfun)) {
  if (!lossfun_) throw ValueError("Classifier: the loss function is empty");
  add_link("predictor", predictor_);
}

Variable Classifier::forward(const Variable& x, const Variable& t) {
  last_loss_ = last_accuracy_ = Variable();
  const Variable y = predictor_->forward(x);
  last_loss_ = lossfun_(y, t);
  if (accfun_) last_accuracy_ = accfun_(y, t);
  report({{"main/loss", last_loss_}});
  if (accfun_) report({{"main/accuracy", last_accuracy_}});
  return last_loss_;
}

}  // namespace kusari::links

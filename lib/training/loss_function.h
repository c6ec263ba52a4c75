#pragma once
// LossFunction: how an updater or evaluator turns a batch into a loss, so any model fits. A model
// with forward(x, t) (a classifier) gets one from supervised_loss.

#include <concepts>
#include <functional>
#include <memory>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/training/reporter.h>

namespace kusari::training {

// Computes the loss of one concatenated batch (its components in example order, e.g. {x, t}); it may
// report values such as "main/accuracy".
using LossFunction = std::function<Variable(const std::vector<Array>& batch)>;

// A model whose forward(x, t) returns its loss.
template <class M>
concept SupervisedModel = requires(M& model, const Variable& x, const Variable& t) {
  { model.forward(x, t) } -> std::convertible_to<Variable>;
};

// Throws ValueError unless `batch` has exactly the two components {x, t}.
KUSARI_API void require_input_and_target(const std::vector<Array>& batch);

// The loss model->forward(x, t) of a batch {x, t}, reported as "main/loss".
template <SupervisedModel M>
LossFunction supervised_loss(std::shared_ptr<M> model) {
  return [model = std::move(model)](const std::vector<Array>& batch) {
    require_input_and_target(batch);
    Variable loss = model->forward(Variable(batch[0], false), Variable(batch[1], false));
    report({{"main/loss", loss}});
    return loss;
  };
}

}  // namespace kusari::training

#include <kusari/training/classification_loss.h>

#include <string>

#include <kusari/functions/cast.h>
#include <kusari/functions/evaluation.h>
#include <kusari/functions/loss.h>
#include <kusari/training/reporter.h>

namespace kusari::training {

namespace F = kusari::functions;

LossFunction classification_loss(std::shared_ptr<links::Link> predictor, ClassificationLossOptions options) {
  if (!predictor) throw ValueError("classification_loss: expected a predictor, got null");
  const std::string top_k_key = "main/accuracy_top" + std::to_string(options.top_k);
  return [predictor = std::move(predictor), options, top_k_key](const std::vector<Array>& batch) {
    require_input_and_target(batch);
    const Array& x = batch[0];
    const Variable input(x.dtype() == options.compute_dtype ? x : x.astype(options.compute_dtype), false);
    const Variable t(batch[1], false);
    Variable y = predictor->forward(input);
    if (y.dtype() != Dtype::float32) y = F::cast(y, Dtype::float32);
    const Variable loss = F::softmax_cross_entropy(y, t, {.label_smoothing = options.label_smoothing});
    if (!reporting()) return loss;
    report({{"main/loss", loss}, {"main/accuracy", F::accuracy(y, t)}});
    if (options.top_k > 1 && y.ndim() == 2 && y.shape()[1] > options.top_k) {
      report({{top_k_key, F::accuracy(y, t, {}, options.top_k)}});
    }
    return loss;
  };
}

}  // namespace kusari::training

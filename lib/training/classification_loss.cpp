#include <kusari/training/classification_loss.h>

#include <string>

#include <kusari/core/memory_order.h>
#include <kusari/functions/cast.h>
#include <kusari/functions/evaluation.h>
#include <kusari/functions/loss.h>
#include <kusari/training/reporter.h>

namespace kusari::training {

namespace F = kusari::functions;

namespace {

// x in the compute dtype and, for an image batch, the memory order: x itself where it is both (a view of
// its bytes where one channel makes it dense in both orders), else one copy (a cast alone would give a
// row-major result).
Array model_input(const Array& x, const ClassificationLossOptions& options) {
  const bool channels_last = x.ndim() == 4 && options.memory_order == MemoryOrder::channels_last;
  if (!channels_last) return x.astype(options.compute_dtype);
  if (x.dtype() == options.compute_dtype) return in_order(x, MemoryOrder::channels_last);
  Array out = empty_in_order(x.shape(), MemoryOrder::channels_last, options.compute_dtype, x.device());
  out.assign(x);
  return out;
}

}  // namespace

LossFunction classification_loss(std::shared_ptr<links::Link> predictor, ClassificationLossOptions options) {
  if (!predictor) throw ValueError("classification_loss: expected a predictor, got null");
  const std::string top_k_key = "main/accuracy_top" + std::to_string(options.top_k);
  return [predictor = std::move(predictor), options, top_k_key](const std::vector<Array>& batch) {
    require_input_and_target(batch);
    const Variable input(model_input(batch[0], options), false);
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

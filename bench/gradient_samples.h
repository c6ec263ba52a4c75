#pragma once
// Gradient sets for the wire-precision study: what P ranks would each contribute to one all-reduce —
// one micro-batch's gradients per rank — recorded from a model training on Fashion-MNIST.

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <kusari/kusari.h>
#include <kusari/distributed/detail/wire_format.h>

namespace kusari::bench {

// One all-reduce's contributions, rank by rank.
struct GradientSamples {
  std::vector<Array> contributions;  // per rank: every stride-th element of its flattened gradients
  std::vector<float> max_abs;        // per rank: the largest |g| in its whole gradients
  // The power of two a dynamic loss scaler settles near for these gradients: the largest S that
  // keeps every rank's |g|·S finite in float16.
  float loss_scale = 1;
};

// The examples [begin, begin + n) of images and labels as constant variables.
inline std::pair<Variable, Variable> batch_of(const Array& images, const Array& labels, int64_t begin, int64_t n) {
  return {Variable(images.get_item({Slice{begin, begin + n}}).copy(), false),
          Variable(labels.get_item({Slice{begin, begin + n}}).copy(), false)};
}

// Trains `model` for `steps` MomentumSGD steps (lr 0.1·batch/256, momentum 0.9) on consecutive
// batches of `batch` examples, then records, at those weights, the gradients of `ranks` further
// disjoint micro-batches of `micro` examples (BN in training mode, as on each rank), keeping every
// stride-th element of each rank's parameters' gradients flattened in name order.
template <class Model>
GradientSamples record_gradient_samples(const std::shared_ptr<Model>& model, const Array& images, const Array& labels,
                                        int steps, int64_t batch, int ranks, int64_t micro, int64_t stride) {
  optimizers::MomentumSGD optimizer(0.1 * static_cast<double>(batch) / 256, 0.9);
  optimizer.setup(model);
  int64_t at = 0;
  for (int step = 0; step < steps; ++step, at += batch) {
    const auto [x, t] = batch_of(images, labels, at, batch);
    optimizer.update([&, &x = x, &t = t] { return F::softmax_cross_entropy(model->forward(x), t); });
  }
  GradientSamples samples;
  for (int r = 0; r < ranks; ++r, at += micro) {
    const auto [x, t] = batch_of(images, labels, at, micro);
    model->cleargrads();
    F::softmax_cross_entropy(model->forward(x), t).backward();
    std::vector<float> kept;
    float largest = 0;
    for (const auto& [name, param] : model->namedparams()) {
      const Array grad = param.grad().astype(Dtype::float32).contiguous();
      const float* g = grad.data<float>();
      largest = std::max(largest, distributed::wire::max_abs(g, grad.size()));
      for (int64_t i = 0; i < grad.size(); i += stride) kept.push_back(g[i]);
    }
    samples.contributions.push_back(Array::from_vector<float>(kept, {static_cast<int64_t>(kept.size())}));
    samples.max_abs.push_back(largest);
  }
  const float largest = *std::max_element(samples.max_abs.begin(), samples.max_abs.end());
  if (!(largest > 0 && largest < INFINITY)) {
    throw ValueError(cat("record_gradient_samples: expected finite, non-zero gradients, got a largest |g| of ", largest));
  }
  samples.loss_scale = std::ldexp(1.0f, static_cast<int>(std::floor(std::log2(65504.0 / largest))));
  return samples;
}

// The first `ranks` contributions of `samples` times `scale` (1: the raw gradients, loss_scale: the
// loss-scaled ones) and their largest magnitude, as one all-reduce over that many ranks would see them.
struct RankSubset {
  std::vector<Array> contributions;
  float max_abs = 0;
};
inline RankSubset first_ranks(const GradientSamples& samples, int ranks, float scale) {
  RankSubset subset;
  for (int r = 0; r < ranks; ++r) {
    const Array& c = samples.contributions[static_cast<size_t>(r)];
    subset.contributions.push_back(scale == 1 ? c : (c * scale).astype(Dtype::float32).contiguous());
    subset.max_abs = std::max(subset.max_abs, samples.max_abs[static_cast<size_t>(r)] * scale);
  }
  return subset;
}

}  // namespace kusari::bench

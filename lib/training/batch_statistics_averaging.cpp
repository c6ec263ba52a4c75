#include <kusari/training/batch_statistics_averaging.h>

#include <algorithm>
#include <vector>

#include <kusari/kernels/routines.h>
#include <kusari/links/batch_normalization.h>

namespace kusari::training {
namespace {

// The layers whose evaluation statistics are their last training batch's.
std::vector<const links::BatchNormalization*> batch_statistic_layers(const links::Link& model) {
  std::vector<const links::BatchNormalization*> layers;
  for (const auto& [path, link] : model.namedlinks()) {
    const auto* bn = dynamic_cast<const links::BatchNormalization*>(link);
    if (bn && !bn->use_running_average()) layers.push_back(bn);
  }
  return layers;
}

}  // namespace

void average_batch_statistics_now(const links::Link& model, const distributed::Communicator& comm) {
  const std::vector<const links::BatchNormalization*> layers = batch_statistic_layers(model);
  // Per layer: count, then count·E[x] and count·E[x²] per channel.
  std::vector<double> sums;
  for (const links::BatchNormalization* bn : layers) {
    const double count = static_cast<double>(bn->persistent("last_count").item<int64_t>());
    const std::vector<double> mean = bn->persistent("last_mean").to_vector<double>();
    const std::vector<double> var = bn->persistent("last_var").to_vector<double>();
    sums.push_back(count);
    for (double m : mean) sums.push_back(count * m);
    for (size_t c = 0; c < var.size(); ++c) sums.push_back(count * (var[c] + mean[c] * mean[c]));
  }
  if (sums.empty()) return;
  const std::vector<double> total =
      comm.allreduce(Array::from_vector(sums, {static_cast<int64_t>(sums.size())})).to_vector<double>();
  size_t at = 0;
  for (const links::BatchNormalization* bn : layers) {
    const double count = total[at++];
    const auto channels = static_cast<size_t>(bn->size());
    std::vector<double> mean(channels), var(channels);
    for (size_t c = 0; c < channels; ++c) mean[c] = total[at + c] / count;
    for (size_t c = 0; c < channels; ++c) var[c] = std::max(0.0, total[at + channels + c] / count - mean[c] * mean[c]);
    at += 2 * channels;
    if (count == 0) continue;
    const Array& last_mean = bn->persistent("last_mean");
    const Array& last_var = bn->persistent("last_var");
    const Shape shape{static_cast<int64_t>(channels)};
    last_mean.assign(Array::from_vector(mean, shape).astype(last_mean.dtype()));
    last_var.assign(Array::from_vector(var, shape).astype(last_var.dtype()));
  }
}

std::shared_ptr<Extension> average_batch_statistics(std::shared_ptr<links::Link> model, distributed::Communicator comm) {
  return make_extension([model, comm](Trainer&) { average_batch_statistics_now(*model, comm); },
                        "average_batch_statistics", {1, "epoch"}, kPriorityWriter + 10);
}

}  // namespace kusari::training

#include <kusari/training/batch_statistics_averaging.h>

#include <algorithm>
#include <vector>

#include <kusari/links/batch_normalization.h>

namespace kusari::training {
namespace {

// Every batch normalization of the model, in path order (the same on every rank).
std::vector<const links::BatchNormalization*> batch_normalizations(const links::Link& model) {
  std::vector<const links::BatchNormalization*> layers;
  for (const auto& [path, link] : model.namedlinks()) {
    if (const auto* bn = dynamic_cast<const links::BatchNormalization*>(link)) layers.push_back(bn);
  }
  return layers;
}

// Appends what one layer contributes to the sum over ranks: [avg_mean, avg_var] with running averages,
// else [count, count·E[x], count·E[x²]] of the last training batch.
void append_sums(const links::BatchNormalization& bn, std::vector<double>& sums) {
  if (bn.use_running_average()) {
    for (const char* name : {"avg_mean", "avg_var"}) {
      for (double v : bn.persistent(name).to_vector<double>()) sums.push_back(v);
    }
    return;
  }
  const double count = static_cast<double>(bn.persistent("last_count").item<int64_t>());
  const std::vector<double> mean = bn.persistent("last_mean").to_vector<double>();
  const std::vector<double> var = bn.persistent("last_var").to_vector<double>();
  sums.push_back(count);
  for (double m : mean) sums.push_back(count * m);
  for (size_t c = 0; c < var.size(); ++c) sums.push_back(count * (var[c] + mean[c] * mean[c]));
}

// Writes `values` (float64) into the persistent `name` of bn, in its dtype.
void store(const links::BatchNormalization& bn, const char* name, const std::vector<double>& values) {
  const Array& target = bn.persistent(name);
  target.assign(Array::from_vector(values, {static_cast<int64_t>(values.size())}, target.dtype(), target.device()));
}

// Reads one layer's share of the summed buffer from `at` on and stores the averaged statistics.
void store_average(const links::BatchNormalization& bn, const std::vector<double>& total, size_t& at, int ranks) {
  const auto channels = static_cast<size_t>(bn.size());
  const auto slice = [&](size_t begin) {
    return std::vector<double>(total.begin() + static_cast<std::ptrdiff_t>(begin),
                               total.begin() + static_cast<std::ptrdiff_t>(begin + channels));
  };
  if (bn.use_running_average()) {
    std::vector<double> mean = slice(at), var = slice(at + channels);
    for (size_t c = 0; c < channels; ++c) mean[c] /= ranks, var[c] /= ranks;
    store(bn, "avg_mean", mean);
    store(bn, "avg_var", var);
    at += 2 * channels;
    return;
  }
  const double count = total[at];
  std::vector<double> mean = slice(at + 1), square = slice(at + 1 + channels);
  at += 1 + 2 * channels;
  if (count == 0) return;
  for (size_t c = 0; c < channels; ++c) {
    mean[c] /= count;
    square[c] = std::max(0.0, square[c] / count - mean[c] * mean[c]);
  }
  store(bn, "last_mean", mean);
  store(bn, "last_var", square);
}

}  // namespace

void average_batch_statistics_now(const links::Link& model, const distributed::Communicator& comm) {
  const std::vector<const links::BatchNormalization*> layers = batch_normalizations(model);
  std::vector<double> sums;
  for (const links::BatchNormalization* bn : layers) append_sums(*bn, sums);
  if (sums.empty()) return;
  const std::vector<double> total =
      comm.allreduce(Array::from_vector(sums, {static_cast<int64_t>(sums.size())}, {}, Device::cpu())).to_vector<double>();
  size_t at = 0;
  for (const links::BatchNormalization* bn : layers) store_average(*bn, total, at, comm.size());
}

std::shared_ptr<Extension> average_batch_statistics(std::shared_ptr<links::Link> model,
                                                    distributed::Communicator comm) {
  return make_extension([model, comm](Trainer&) { average_batch_statistics_now(*model, comm); },
                        "average_batch_statistics", {1, "epoch"}, kPriorityWriter + 10);
}

}  // namespace kusari::training

// Batch-statistics averaging under mpiexec (2 and 3 ranks): rank r trains batch normalizations on
// 2 + r rows (optionally in ghost groups) of a batch every rank can regenerate; after
// average_batch_statistics_now every rank holds, for a layer without running averages (Akiba et al.
// 2017), E[x] and Var[x] of all ranks' rows together, and for a layer with them the mean over ranks
// of each rank's running averages, both computed here by hand.

#include "testing.h"

#include <kusari/training/batch_statistics_averaging.h>

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_close;
using kusari::testing::random;

namespace {

int64_t local_rows(int rank) { return 2 + rank; }
int64_t row_offset(int rank) { return rank * 2 + rank * (rank - 1) / 2; }

// A model of two layers: one without running averages, one with them.
struct TwoLayers : public links::Chain {
  std::shared_ptr<links::BatchNormalization> last =
      std::make_shared<links::BatchNormalization>(links::BatchNormalizationOptions(3).use_running_average(false));
  std::shared_ptr<links::BatchNormalization> running = std::make_shared<links::BatchNormalization>(3);
  explicit TwoLayers(int64_t groups) {
    if (groups) last = std::make_shared<links::BatchNormalization>(
                      links::BatchNormalizationOptions(3).use_running_average(false).group_size(groups));
    add_link("last", last);
    add_link("running", running);
  }
};

// Per-channel mean and biased variance of rows [begin, end) of x (N, 3, 2), by hand in double.
std::pair<std::vector<double>, std::vector<double>> statistics(const std::vector<double>& x, int64_t begin,
                                                               int64_t end) {
  std::vector<double> mean(3), square(3), var(3);
  const double count = static_cast<double>((end - begin) * 2);
  for (int64_t n = begin; n < end; ++n) {
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t s = 0; s < 2; ++s) {
        const double v = x[static_cast<size_t>((n * 3 + c) * 2 + s)];
        mean[static_cast<size_t>(c)] += v / count;
        square[static_cast<size_t>(c)] += v * v / count;
      }
    }
  }
  for (size_t c = 0; c < 3; ++c) var[c] = square[c] - mean[c] * mean[c];
  return {mean, var};
}

}  // namespace

TEST_CASE("batch statistics: the last training batches averaged over ranks with unequal batches") {
  const Communicator comm = create_communicator();
  const int64_t total = row_offset(comm.size());
  for (int64_t groups : {int64_t{0}, int64_t{1}}) {
    INFO("ghost groups of ", groups);
    const Array whole = random({total, 3, 2}, 7, Dtype::float64, -2, 3).astype(Dtype::float32);
    const int64_t begin = row_offset(comm.rank());
    TwoLayers model(groups);
    const Array mine = whole.get_item({Slice{begin, begin + local_rows(comm.rank())}}).copy();
    model.last->forward(Variable(mine, false));
    model.running->forward(Variable(mine, false));

    training::average_batch_statistics_now(model, comm);

    const auto [mean, var] = statistics(whole.to_vector<double>(), 0, total);
    expect_close(model.last->persistent("last_mean"), Array::from_vector(mean, {3}).astype(Dtype::float32), 1e-5);
    expect_close(model.last->persistent("last_var"), Array::from_vector(var, {3}).astype(Dtype::float32), 1e-5);
    // Each rank's running averages after one batch from (0, 1): 0.1·mean_r and 0.9 + 0.1·unbiased var_r.
    std::vector<double> avg_mean(3), avg_var(3);
    for (int r = 0; r < comm.size(); ++r) {
      const auto [mean_r, var_r] = statistics(whole.to_vector<double>(), row_offset(r), row_offset(r) + local_rows(r));
      const double m = static_cast<double>(local_rows(r) * 2);
      for (size_t c = 0; c < 3; ++c) {
        avg_mean[c] += 0.1 * mean_r[c] / comm.size();
        avg_var[c] += (0.9 + 0.1 * var_r[c] * m / (m - 1)) / comm.size();
      }
    }
    expect_close(model.running->persistent("avg_mean"), Array::from_vector(avg_mean, {3}).astype(Dtype::float32), 1e-5);
    expect_close(model.running->persistent("avg_var"), Array::from_vector(avg_var, {3}).astype(Dtype::float32), 1e-5);
  }
}

TEST_CASE("batch statistics: a rank that has not trained contributes nothing") {
  const Communicator comm = create_communicator();
  const Array whole = random({4, 3, 2}, 8, Dtype::float32);
  TwoLayers model(0);
  if (comm.rank() == 0) model.last->forward(Variable(whole, false));
  training::average_batch_statistics_now(model, comm);
  const auto [mean, var] = statistics(whole.to_vector<double>(), 0, 4);
  expect_close(model.last->persistent("last_mean"), Array::from_vector(mean, {3}).astype(Dtype::float32), 1e-5);
  expect_close(model.last->persistent("last_var"), Array::from_vector(var, {3}).astype(Dtype::float32), 1e-5);
}

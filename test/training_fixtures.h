#pragma once
// A tiny regression problem, model and trainer shared by the training suites.

#include "testing.h"

#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>

namespace kusari::testing {

namespace T = kusari::training;
namespace D = kusari::data;

// y = x·Wᵀ + b with a mean-squared-error loss against t.
class Regressor : public L::Cloneable<Regressor, L::Link> {
 public:
  using L::Link::forward;
  Regressor(int64_t in, int64_t out, uint64_t seed) {
    add_param("W", Array::uniform({out, in}, -0.5, 0.5, seed));
    add_param("b", Array::zeros({out}));
  }
  // The loss of predicting t from x.
  Variable forward(const Variable& x, const Variable& t) {
    return F::mean_squared_error(F::linear(x, param("W"), param("b")), t);
  }
};

// n examples {x (3 floats), t (2 floats)} with t a fixed linear function of x.
inline std::shared_ptr<D::TupleDataset> regression_data(int64_t n, uint64_t seed = 7) {
  const Array x = Array::uniform({n, 3}, -1, 1, seed);
  const Array a = Array::from_vector<float>({1, -2, 0.5f, 3, 0, -1}, {3, 2});
  return std::make_shared<D::TupleDataset>(std::vector<Array>{x, ops::matmul(x, a) + 0.25});
}

// A trainer with everything it needs to train and resume.
struct Setup {
  std::shared_ptr<Regressor> model;
  std::shared_ptr<optimizers::Optimizer> optimizer;
  std::shared_ptr<D::SerialIterator> iterator;
  std::shared_ptr<T::StandardUpdater> updater;
  std::unique_ptr<T::Trainer> trainer;
};

// Regressor trained by momentum SGD on regression_data(dataset_size), batches of batch_size shuffled
// with `seed`, until `stop`, writing under `out`.
inline Setup make_setup(const std::string& out, T::Trigger stop, int64_t dataset_size = 10, int64_t batch_size = 4,
                        uint64_t seed = 3) {
  Setup s;
  s.model = std::make_shared<Regressor>(3, 2, 11);
  s.optimizer = std::make_shared<optimizers::MomentumSGD>(0.05, 0.9);
  s.optimizer->setup(s.model);
  s.iterator = std::make_shared<D::SerialIterator>(regression_data(dataset_size), batch_size, true, true, seed);
  s.updater = std::make_shared<T::StandardUpdater>(s.iterator, s.optimizer, s.model);
  s.trainer = std::make_unique<T::Trainer>(s.updater, std::move(stop), out);
  return s;
}

// The parameters of a model as host vectors, by path.
inline std::map<std::string, std::vector<double>> parameters(const L::Link& model) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [path, param] : model.namedparams()) out[path] = param.data().to_vector<double>();
  return out;
}

// The contents of a file.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Records the iteration at which an extension ran.
inline std::shared_ptr<T::Extension> iteration_recorder(std::vector<int64_t>& seen, T::Trigger trigger,
                                                        const std::string& name = "recorder") {
  return T::make_extension([&seen](T::Trainer& t) { seen.push_back(t.updater().iteration()); }, name,
                           std::move(trigger));
}

}  // namespace kusari::testing

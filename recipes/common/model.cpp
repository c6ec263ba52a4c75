#include "model.h"

#include <kusari/autograd/backprop_mode.h>
#include <kusari/core/config.h>
#include <kusari/distributed/mnbn_model.h>
#include <kusari/links/models/models.h>

namespace kusari::recipes {
namespace {

namespace M = kusari::links::models;

M::NormalizationConfig normalization(const Settings& s) {
  M::NormalizationConfig config;
  config.eps = s.bn_eps;
  config.decay = s.bn_decay;
  config.use_running_average = s.bn_running_average;
  config.group_size = s.bn_batch;
  config.zero_gamma = s.zero_gamma;
  return config;
}

std::shared_ptr<links::Link> build(const Settings& s, int64_t channels) {
  const M::NormalizationConfig bn = normalization(s);
  if (s.model == "mlp") return std::make_shared<M::MLP>(s.unit, s.classes);
  if (s.model == "resnet20") return std::make_shared<M::ResNet>(20, channels, s.classes, bn);
  if (s.model == "resnet32") return std::make_shared<M::ResNet>(32, channels, s.classes, bn);
  if (s.model == "resnet56") return std::make_shared<M::ResNet>(56, channels, s.classes, bn);
  if (s.model == "resnet50") return std::make_shared<M::ResNet50>(s.classes, bn);
  if (s.model == "alexnet_bn") return std::make_shared<M::AlexNetBN>(s.classes, bn);
  return std::make_shared<M::AlexNetPool5BN>(s.classes, bn);
}

}  // namespace

std::shared_ptr<links::Link> make_model(const Settings& s, int64_t channels, const distributed::Communicator& comm) {
  std::shared_ptr<links::Link> model = build(s, channels);
  return s.bn == "multi_node" ? distributed::create_mnbn_model(model, comm) : model;
}

void shape_parameters(links::Link& model, const Array& example, const Device& device) {
  auto no_graph = no_backprop_mode();
  auto evaluation = using_train_mode(false);
  std::vector<int64_t> batch = example.shape().dims();
  batch.insert(batch.begin(), 1);
  model.forward(Variable(example.reshape(Shape(batch)).to(device), false));
}

void cast_parameters(links::Link& model, const Array& example, Dtype dtype, const Device& device) {
  if (dtype == Dtype::float32) return;
  shape_parameters(model, example, device);
  for (auto& [path, param] : model.namedparams()) param.set_data(param.data().astype(dtype));
}

}  // namespace kusari::recipes

#include <kusari/links/models/residual_network.h>

#include <kusari/functions/activation.h>
#include <kusari/functions/pooling.h>
#include <kusari/links/initializers.h>

namespace kusari::links::models {

std::shared_ptr<Sequential> residual_stage(int64_t n_blocks, const std::function<std::shared_ptr<Link>(int64_t)>& make_block) {
  auto blocks = std::make_shared<Sequential>();
  for (int64_t i = 0; i < n_blocks; ++i) blocks->append(make_block(i));
  return blocks;
}

ResidualNetwork::ResidualNetwork(Convolution2DOptions stem, const NormalizationConfig& stem_bn, bool stem_max_pool,
                                 const std::vector<std::shared_ptr<Sequential>>& stages, int64_t features,
                                 int64_t n_classes)
    : stem_max_pool_(stem_max_pool) {
  conv1_ = std::make_shared<Convolution2D>(stem.nobias().initial_w(initializers::HeNormal()));
  bn1_ = std::make_shared<BatchNormalization>(
      stem_bn.options(conv1_->out_channels()).activation(functions::Activation::relu));
  fc_ = std::make_shared<Linear>(features, n_classes);
  add_link("conv1", conv1_);
  add_link("bn1", bn1_);
  for (size_t i = 0; i < stages.size(); ++i) {
    stage_names_.push_back("res" + std::to_string(i + 2));
    add_link(stage_names_.back(), std::shared_ptr<Link>(stages[i]));
  }
  add_link("fc", fc_);
}

Variable ResidualNetwork::forward(const Variable& x) {
  Variable h = bn1_->forward(conv1_->forward(x));
  if (stem_max_pool_) h = functions::max_pooling_2d(h, 3, 2, 1, false);
  for (const std::string& name : stage_names_) h = child<Sequential>(name)->forward(h);
  return fc_->forward(functions::global_average_pooling_2d(h));
}

}  // namespace kusari::links::models

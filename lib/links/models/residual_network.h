#pragma once
// ResidualNetwork: the layout shared by the ResNets: a stem, stages of residual blocks, global average
// pooling and a fully connected classifier.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/links/batch_normalization.h>
#include <kusari/links/chain.h>
#include <kusari/links/convolution_2d.h>
#include <kusari/links/linear.h>
#include <kusari/links/models/normalization_config.h>
#include <kusari/links/sequential.h>

namespace kusari::links::models {

// A stage: the Sequential of make_block(0), ..., make_block(n_blocks - 1) (block 0 is the one that
// changes the channels and the stride).
KUSARI_API std::shared_ptr<Sequential> residual_stage(int64_t n_blocks, const std::function<std::shared_ptr<Link>(int64_t)>& make_block);

// Children conv1, bn1 (the stem), res2, res3, ... (the stages, Sequentials of residual blocks) and fc.
class KUSARI_API ResidualNetwork : public Chain {
 public:
  // relu(bn1(conv1(x))), a 3x3/2 max pooling when the stem has one, the stages, the spatial mean, fc.
  Variable forward(const Variable& x) override;

 protected:
  // A network with the given stem convolution (built without bias, He-normal initialised) and its batch
  // normalization configured by stem_bn, whether a max pooling follows it, the stages in order, and a
  // classifier from `features` to n_classes.
  ResidualNetwork(Convolution2DOptions stem, const NormalizationConfig& stem_bn, bool stem_max_pool,
                  const std::vector<std::shared_ptr<Sequential>>& stages, int64_t features, int64_t n_classes);
  ResidualNetwork(const ResidualNetwork&) = default;
  std::string type_name() const override { return "ResidualNetwork"; }

 private:
  std::shared_ptr<Convolution2D> conv1_;
  std::shared_ptr<BatchNormalization> bn1_;
  std::shared_ptr<Linear> fc_;
  std::vector<std::string> stage_names_;
  bool stem_max_pool_;
};

}  // namespace kusari::links::models

#pragma once
// AlexNetBase: the convolutions and fully connected layers shared by AlexNet and AlexNet-BN.

#include <array>
#include <cstdint>
#include <memory>

#include <kusari/core/api.h>
#include <kusari/links/chain.h>
#include <kusari/links/convolution_2d.h>
#include <kusari/links/linear.h>

namespace kusari::links::models {

// Krizhevsky et al. (2012) without the two-GPU split: conv1 96 11x11/4, conv2 256 5x5 pad 2, conv3 384,
// conv4 384 and conv5 256 3x3 pad 1, 3x3/2 max pooling after the (normalised) conv1, conv2 and conv5,
// fc6 9216 -> 4096, fc7 4096 -> 4096 and fc8 4096 -> n_classes, with dropout 0.5 after fc6 and fc7 in
// training. The input is (N, 3, 227, 227) (224 works too: both give 6x6 maps before fc6); fc6 takes its
// input size from the first forward, as Chainer's Linear(None, 4096), so smaller images (a 64 x 64 crop
// gives 1x1 maps, fc6 256 -> 4096) train too.
class KUSARI_API AlexNetBase : public Chain {
 public:
  // The logits (N, n_classes).
  Variable forward(const Variable& x) override;

 protected:
  // The layers above; the convolutions have biases when conv_bias.
  AlexNetBase(int64_t n_classes, bool conv_bias);
  AlexNetBase(const AlexNetBase&) = default;
  // The activation that follows convolution `index` (0 ... 4): ReLU plus the variant's normalisation.
  virtual Variable activate(int64_t index, const Variable& conv_output) = 0;
  // Applied to the output of the last max pooling (identity unless overridden).
  virtual Variable after_pool5(const Variable& h) { return h; }

 private:
  std::array<std::shared_ptr<Convolution2D>, 5> convs_;
  std::shared_ptr<Linear> fc6_, fc7_, fc8_;
};

}  // namespace kusari::links::models

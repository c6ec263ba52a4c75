#include <kusari/links/models/alexnet_base.h>

#include <kusari/functions/activation.h>
#include <kusari/functions/noise.h>
#include <kusari/functions/pooling.h>
#include <kusari/links/training_mode.h>

namespace kusari::links::models {

AlexNetBase::AlexNetBase(int64_t n_classes, bool conv_bias) {
  struct Spec {
    int64_t in, out, ksize, stride, pad;
  };
  constexpr std::array<Spec, 5> specs{
      {{3, 96, 11, 4, 0}, {96, 256, 5, 1, 2}, {256, 384, 3, 1, 1}, {384, 384, 3, 1, 1}, {384, 256, 3, 1, 1}}};
  for (size_t i = 0; i < specs.size(); ++i) {
    const Spec& s = specs[i];
    convs_[i] = std::make_shared<Convolution2D>(
        Convolution2DOptions(s.in, s.out, s.ksize).stride(s.stride).pad(s.pad).nobias(!conv_bias));
    add_link("conv" + std::to_string(i + 1), convs_[i]);
  }
  fc6_ = std::make_shared<Linear>(LinearOptions(4096));  // its input size from the first images (Chainer's None)
  fc7_ = std::make_shared<Linear>(4096, 4096);
  fc8_ = std::make_shared<Linear>(4096, n_classes);
  add_link("fc6", fc6_);
  add_link("fc7", fc7_);
  add_link("fc8", fc8_);
}

Variable AlexNetBase::forward(const Variable& x) {
  const auto pool = [](const Variable& h) { return functions::max_pooling_2d(h, 3, 2); };
  const auto dropout = [this](const Variable& h) { return in_training(*this) ? functions::dropout(h, 0.5) : h; };
  Variable h = pool(activate(0, convs_[0]->forward(x)));
  h = pool(activate(1, convs_[1]->forward(h)));
  h = activate(2, convs_[2]->forward(h));
  h = activate(3, convs_[3]->forward(h));
  h = after_pool5(pool(activate(4, convs_[4]->forward(h))));
  h = dropout(functions::relu(fc6_->forward(h)));
  h = dropout(functions::relu(fc7_->forward(h)));
  return fc8_->forward(h);
}

}  // namespace kusari::links::models

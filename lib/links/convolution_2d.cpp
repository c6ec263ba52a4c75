#include <kusari/links/convolution_2d.h>

#include <kusari/links/initializers.h>
#include <kusari/links/lazy_param.h>

namespace kusari::links {

Convolution2D::Convolution2D(const Convolution2DOptions& options)
    : out_channels_(options.out_channels_), ksize_(options.ksize_), params_(options.params_) {
  if (options.in_channels_ < 0 || out_channels_ < 1 || ksize_.h < 1 || ksize_.w < 1 || params_.groups < 1) {
    throw ValueError(cat("Convolution2D: expected in_channels >= 0 (0: inferred), out_channels, ksize and groups >= 1, "
                         "got in_channels ", options.in_channels_, ", out_channels ", out_channels_, ", ksize ", ksize_,
                         ", groups ", params_.groups));
  }
  if (out_channels_ % params_.groups != 0) {
    throw ValueError(cat("Convolution2D: expected out_channels divisible by groups ", params_.groups, ", got ",
                         out_channels_));
  }
  add_uninitialized_param("W", options.initial_w_ ? options.initial_w_ : initializers::LeCunNormal());
  if (options.in_channels_ > 0) initialize_param("W", weight_shape(options.in_channels_));
  if (!options.nobias_) {
    add_param("b", {out_channels_}, options.initial_bias_ ? options.initial_bias_ : initializers::Zero());
  }
}

Shape Convolution2D::weight_shape(int64_t in_channels) const {
  if (in_channels % params_.groups != 0) {
    throw ShapeError(cat("Convolution2D: expected input channels divisible by groups ", params_.groups, ", got ",
                         in_channels));
  }
  return {out_channels_, in_channels / params_.groups, ksize_.h, ksize_.w};
}

Variable Convolution2D::forward(const Variable& x) {
  if (!is_initialized("W")) {
    if (x.ndim() != 4) throw ShapeError(cat("Convolution2D: expected an input of shape (N, C, H, W), got ", x.shape()));
    initialize_lazy_param(*this, "W", weight_shape(x.shape()[1]), x);
  }
  return functions::convolution_2d(x, param("W"), is_initialized("b") ? param("b") : Variable(), params_);
}

}  // namespace kusari::links

#pragma once
// Convolution2D: a 2-D convolution layer over NCHW inputs.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/functions/convolution_2d.h>
#include <kusari/links/link.h>

namespace kusari::links {

class Convolution2D;

// Options of Convolution2D, set fluently: Convolution2DOptions(3, 64, 7).stride(2).pad(3).nobias().
class KUSARI_API Convolution2DOptions {
 public:
  // A layer with out_channels filters of ksize whose input channels are inferred at the first forward.
  Convolution2DOptions(int64_t out_channels, functions::Int2 ksize) : Convolution2DOptions(0, out_channels, ksize) {}
  // A layer from in_channels to out_channels with ksize filters; in_channels 0 means inferred.
  Convolution2DOptions(int64_t in_channels, int64_t out_channels, functions::Int2 ksize)
      : in_channels_(in_channels), out_channels_(out_channels), ksize_(ksize) {}
  // Step of the window (default 1).
  Convolution2DOptions& stride(functions::Int2 value) { params_.stride = value; return *this; }
  // Zeros added on both sides of the input (default 0).
  Convolution2DOptions& pad(functions::Int2 value) { params_.pad = value; return *this; }
  // Distance between kernel taps (default 1).
  Convolution2DOptions& dilation(functions::Int2 value) { params_.dilation = value; return *this; }
  // Channel groups convolved independently (default 1).
  Convolution2DOptions& groups(int64_t value) { params_.groups = value; return *this; }
  // Whether a last window covers input left over by the stride (default false).
  Convolution2DOptions& cover_all(bool value) { params_.cover_all = value; return *this; }
  // Leaves out the bias (or keeps it with false).
  Convolution2DOptions& nobias(bool value = true) { nobias_ = value; return *this; }
  // Initializer of W (default LeCunNormal).
  Convolution2DOptions& initial_w(Initializer init) { initial_w_ = std::move(init); return *this; }
  // Initializer of b (default zeros).
  Convolution2DOptions& initial_bias(Initializer init) { initial_bias_ = std::move(init); return *this; }

 private:
  friend class Convolution2D;
  int64_t in_channels_;
  int64_t out_channels_;
  functions::Int2 ksize_;
  functions::Convolution2DParams params_;
  bool nobias_ = false;
  Initializer initial_w_;
  Initializer initial_bias_;
};

// Parameters W (out_channels, in_channels / groups, kh, kw) and b (out_channels); forward is
// F::convolution_2d with the options' stride, pad, dilation, groups and cover_all.
class KUSARI_API Convolution2D : public Cloneable<Convolution2D, Link> {
 public:
  // A layer configured by options.
  explicit Convolution2D(const Convolution2DOptions& options);
  // The convolution of x (N, C, H, W); initialises W from x on the first call when C was left open.
  Variable forward(const Variable& x) override;
  // Number of filters.
  int64_t out_channels() const { return out_channels_; }
  // Stride, padding, dilation, groups and cover_all passed to F::convolution_2d.
  const functions::Convolution2DParams& conv_params() const { return params_; }

 protected:
  std::string type_name() const override { return "Convolution2D"; }

 private:
  // The shape of W for in_channels inputs.
  Shape weight_shape(int64_t in_channels) const;

  int64_t out_channels_;
  functions::Int2 ksize_;
  functions::Convolution2DParams params_;
};

}  // namespace kusari::links

#include <kusari/data/plane_sampler.h>

#include <algorithm>
#include <vector>

namespace kusari::data {
namespace {

// Y, Cb, Cr (in place in the three planes) to normalised R, G, B, or to normalised luminance in plane 0.
void ycbcr_to_rgb(float* y, float* cb, float* cr, int64_t count, const ImageOptions& options) {
  float scale[3], shift[3];
  for (size_t c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * options.stddev[c]);
    shift[c] = options.mean[c] / options.stddev[c];
  }
  const bool luminance = options.channels == 1;
  for (int64_t i = 0; i < count; ++i) {
    const float u = cb[i] - 128.0f, v = cr[i] - 128.0f;
    const float r = std::clamp(y[i] + 1.402f * v, 0.0f, 255.0f);
    const float g = std::clamp(y[i] - 0.344136f * u - 0.714136f * v, 0.0f, 255.0f);
    const float b = std::clamp(y[i] + 1.772f * u, 0.0f, 255.0f);
    if (luminance) {
      y[i] = (0.299f * r + 0.587f * g + 0.114f * b) * scale[0] - shift[0];
    } else {
      y[i] = r * scale[0] - shift[0];
      cb[i] = g * scale[1] - shift[1];
      cr[i] = b * scale[2] - shift[2];
    }
  }
}

// Gray (Y alone) in plane 0 to normalised channels (R = G = B = Y).
void gray_to_rgb(float* planes, int64_t count, const ImageOptions& options) {
  for (int64_t c = options.channels - 1; c >= 0; --c) {
    const auto k = static_cast<size_t>(c);
    const float scale = 1.0f / (255.0f * options.stddev[k]), shift = options.mean[k] / options.stddev[k];
    for (int64_t i = 0; i < count; ++i) planes[c * count + i] = planes[i] * scale - shift;
  }
}

}  // namespace

Array sample_jpeg_planes(const JpegPlanes& image, const Region& region, int64_t out_height, int64_t out_width,
                         bool mirror, const ImageOptions& options) {
  const int64_t count = out_height * out_width;
  Array out = Array::empty({options.channels, out_height, out_width}, Dtype::float32, Device::cpu());
  // Chroma goes to the output's planes 1 and 2, or for luminance output to scratch planes; a gray image
  // has none.
  thread_local std::vector<float> scratch;
  const bool gray = image.planes.size() == 1, luminance = options.channels == 1;
  float* planes[3] = {out.data<float>(), nullptr, nullptr};
  if (!gray && luminance) {
    scratch.resize(static_cast<size_t>(2 * count));
    planes[1] = scratch.data();
    planes[2] = scratch.data() + count;
  } else if (!gray) {
    planes[1] = out.data<float>() + count;
    planes[2] = out.data<float>() + 2 * count;
  }
  const float one = 1, zero = 0;
  for (size_t p = 0; p < image.planes.size(); ++p) {
    const Plane& plane = image.planes[p];
    const Region scaled{region.top * plane.factor_y, region.left * plane.factor_x, region.height * plane.factor_y,
                        region.width * plane.factor_x};
    sample_planar(plane.pixels.data(), plane.height, plane.width, 1, scaled, out_height, out_width, mirror, false,
                  &one, &zero, planes[p]);
  }
  if (gray) {
    gray_to_rgb(planes[0], count, options);
  } else {
    ycbcr_to_rgb(planes[0], planes[1], planes[2], count, options);
  }
  return out;
}

}  // namespace kusari::data

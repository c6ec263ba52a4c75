#include <kusari/data/image_pipeline.h>

#include <algorithm>
#include <cmath>

#include <kusari/core/error.h>
#include <kusari/data/jpeg.h>
#include <kusari/data/jpeg_planes.h>
#include <kusari/data/plane_sampler.h>
#include <kusari/data/random_resized_crop.h>

namespace kusari::data {
namespace {

ImagePlan plan_random_resized_crop(ImageSize size, const ImageOptions& options, int64_t index, int64_t epoch) {
  const CropBox box = random_resized_crop_box(size.height, size.width, options, index, epoch);
  const bool mirror = place_crop(1, 1, 1, 1, options, index, epoch).mirror;
  return {{static_cast<double>(box.top), static_cast<double>(box.left), static_cast<double>(box.height),
           static_cast<double>(box.width)},
          options.crop_height, options.crop_width, mirror};
}

ImagePlan plan_shorter_side(ImageSize size, const ImageOptions& options, int64_t index, int64_t epoch,
                            const std::string& name) {
  const ImageSize resized = shorter_side_size(size, options.resize_shorter);
  const int64_t height = options.crop_height ? options.crop_height : resized.height;
  const int64_t width = options.crop_width ? options.crop_width : resized.width;
  if (height > resized.height || width > resized.width) {
    throw ShapeError(cat(name, ": cannot crop ", height, " x ", width, " from an image of ", size.height, " x ",
                         size.width, " resized to ", resized.height, " x ", resized.width));
  }
  const CropPlacement at = place_crop(resized.height, resized.width, height, width, options, index, epoch);
  const double sy = static_cast<double>(size.height) / static_cast<double>(resized.height);
  const double sx = static_cast<double>(size.width) / static_cast<double>(resized.width);
  return {{static_cast<double>(at.top) * sy, static_cast<double>(at.left) * sx, static_cast<double>(height) * sy,
           static_cast<double>(width) * sx},
          height, width, at.mirror};
}

// `region` of the full-size image on the image decoded at `factor`.
Region rescale(const Region& region, double factor) {
  return {region.top * factor, region.left * factor, region.height * factor, region.width * factor};
}

// The fewest full-image pixels per side that keep `plan`'s region at least its output size.
int64_t needed(int64_t side, double covered, int64_t out) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(side) * static_cast<double>(out) / covered - 1e-9));
}

void check_size(ImageSize size, const std::string& name) {
  if (size.height <= 0 || size.width <= 0) {
    throw IOError(cat(name, ": expected an image of positive size, got ", size.height, " x ", size.width));
  }
}

}  // namespace

bool samples_regions(const ImageOptions& options) { return options.random_resized_crop || options.resize_shorter > 0; }

ImageSize shorter_side_size(ImageSize size, int64_t shorter) {
  if (size.height <= size.width) return {shorter, std::max<int64_t>(1, shorter * size.width / size.height)};
  return {std::max<int64_t>(1, shorter * size.height / size.width), shorter};
}

ImagePlan plan_image(ImageSize size, const ImageOptions& options, int64_t index, int64_t epoch,
                     const std::string& name) {
  check_size(size, name);
  if (options.random_resized_crop) return plan_random_resized_crop(size, options, index, epoch);
  return plan_shorter_side(size, options, index, epoch, name);
}

Array transform_image(const Image& image, const ImageOptions& options, int64_t index, int64_t epoch,
                      const std::string& name) {
  if (!samples_regions(options)) return augment_image(resize_image(image, options), options, index, epoch, name);
  const ImagePlan plan = plan_image({image.height, image.width}, options, index, epoch, name);
  return sample_region(image, plan.region, plan.height, plan.width, plan.mirror, options);
}

Array transform_image_bytes(const std::vector<uint8_t>& bytes, const std::string& name,
                            const ImageOptions& options, int64_t index, int64_t epoch) {
  if (!samples_regions(options)) return transform_image(decode_image(bytes, name), options, index, epoch, name);
  const ImageSize size = image_size(bytes, name);
  const ImagePlan plan = plan_image(size, options, index, epoch, name);
  const int64_t min_height = needed(size.height, plan.region.height, plan.height);
  const int64_t min_width = needed(size.width, plan.region.width, plan.width);
  // Each thread keeps its planes' buffers for the next image, unless they grew past 4 Mpixels.
  thread_local JpegPlanes planes;
  if (is_jpeg(bytes) && decode_jpeg_planes(bytes, name, min_height, min_width, planes)) {
    Array out = sample_jpeg_planes(planes, rescale(plan.region, planes.scale), plan.height, plan.width, plan.mirror,
                                   options);
    if (planes.height * planes.width > (int64_t{1} << 22)) planes = JpegPlanes();
    return out;
  }
  const Image image = decode_image(bytes, name, min_height, min_width);
  check_size({image.height, image.width}, name);
  const double factor = decode_factor(bytes, size, min_height, min_width);
  return sample_region(image, rescale(plan.region, factor), plan.height, plan.width, plan.mirror, options);
}

}  // namespace kusari::data

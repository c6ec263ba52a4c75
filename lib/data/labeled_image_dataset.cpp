#include <kusari/data/labeled_image_dataset.h>

#include <utility>

#include <kusari/data/bad_image.h>
#include <kusari/data/binary_file.h>
#include <kusari/data/image_pipeline.h>

namespace kusari::data {

Example labeled_example(const Image& image, int32_t label, const ImageOptions& options, int64_t index, int64_t epoch,
                        const std::string& name) {
  return {augment_image(image, options, index, epoch, name), Array::scalar(label, Dtype::int32, Device::cpu())};
}

Example labeled_file_example(const std::vector<uint8_t>& bytes, const LabeledPath& entry, const ImageOptions& options,
                             int64_t index, int64_t epoch) {
  return {transform_image_bytes(bytes, entry.path, options, index, epoch), Array::scalar(entry.label, Dtype::int32, Device::cpu())};
}

LabeledImageDataset::LabeledImageDataset(const std::string& list_file, const std::string& root, ImageOptions options)
    : LabeledImageDataset(read_label_list(list_file, root), options) {}

LabeledImageDataset::LabeledImageDataset(std::vector<LabeledPath> entries, ImageOptions options)
    : entries_(std::move(entries)), options_(options) {
  check_image_options(options_);
}

Example LabeledImageDataset::get_example(int64_t index, int64_t epoch) const {
  const auto load = [&](int64_t i) {
    const LabeledPath& entry = entries_[static_cast<size_t>(i)];
    return labeled_file_example(read_file(entry.path), entry, options_, index, epoch);
  };
  return load_or_skip(index, entries_, options_.on_bad_image, load);
}

}  // namespace kusari::data

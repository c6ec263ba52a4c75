#include <kusari/data/labeled_image_dataset.h>

#include <utility>

#include <kusari/data/bad_image.h>
#include <kusari/data/binary_file.h>
#include <kusari/data/image_pipeline.h>

namespace kusari::data {

Example labeled_example(const Image& image, int32_t label, const ImageOptions& options, int64_t index, int64_t epoch,
                        const std::string& name) {
  return {augment_image(image, options, index, epoch, name), Array::scalar(label, Dtype::int32)};
}

LabeledImageDataset::LabeledImageDataset(const std::string& list_file, const std::string& root, ImageOptions options)
    : LabeledImageDataset(read_label_list(list_file, root), options) {}

LabeledImageDataset::LabeledImageDataset(std::vector<LabeledPath> entries, ImageOptions options)
    : entries_(std::move(entries)), options_(options) {
  check_image_options(options_);
}

Example LabeledImageDataset::get_example(int64_t index, int64_t epoch) const {
  const auto load = [&](int64_t i) -> Example {
    const LabeledPath& entry = entries_[static_cast<size_t>(i)];
    return {transform_image_bytes(read_file(entry.path), entry.path, options_, index, epoch),
            Array::scalar(entry.label, Dtype::int32)};
  };
  const auto path_of = [&](int64_t i) { return entries_[static_cast<size_t>(i)].path; };
  return load_or_skip(index, size(), options_.on_bad_image, load, path_of);
}

}  // namespace kusari::data

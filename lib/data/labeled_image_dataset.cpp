#include <kusari/data/labeled_image_dataset.h>

#include <kusari/data/jpeg.h>

namespace kusari::data {

Example labeled_example(const Image& image, int32_t label, const ImageOptions& options, int64_t index, int64_t epoch,
                        const std::string& name) {
  return {augment_image(image, options, index, epoch, name), Array::scalar(label, Dtype::int32)};
}

LabeledImageDataset::LabeledImageDataset(const std::string& list_file, const std::string& root, ImageOptions options)
    : entries_(read_label_list(list_file, root)), options_(options) {
  check_image_options(options_);
}

Example LabeledImageDataset::get_example(int64_t index, int64_t epoch) const {
  const LabeledPath& entry = entries_[static_cast<size_t>(index)];
  return labeled_example(resize_image(read_jpeg(entry.path), options_), entry.label, options_, index, epoch,
                         entry.path);
}

}  // namespace kusari::data

#pragma once
// InMemoryLabeledImageDataset: decodes and resizes every listed JPEG once and keeps the 8-bit pixels in
// memory; crop, flip and normalisation still happen on every get().

#include <string>
#include <vector>

#include <kusari/data/dataset.h>
#include <kusari/data/image.h>
#include <kusari/data/image_transform.h>
#include <kusari/data/label_list.h>

namespace kusari::data {

// The same examples as LabeledImageDataset with the same options, without decoding on each get().
class InMemoryLabeledImageDataset : public Dataset {
 public:
  // Reads the list and decodes every image (in parallel); throws IOError naming the first bad file.
  InMemoryLabeledImageDataset(const std::string& list_file, const std::string& root, ImageOptions options = {});
  // Number of images.
  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  // Bytes of pixels held.
  int64_t nbytes() const;

 protected:
  Example get_example(int64_t index, int64_t epoch) const override;

 private:
  std::vector<LabeledPath> entries_;
  std::vector<Image> images_;
  ImageOptions options_;
};

}  // namespace kusari::data

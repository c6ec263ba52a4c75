#pragma once
// LabeledImageDataset: JPEG files listed with their labels, decoded and augmented on every get().

#include <string>
#include <vector>

#include <kusari/data/dataset.h>
#include <kusari/data/image_transform.h>
#include <kusari/data/label_list.h>

namespace kusari::data {

// Example i is {float32 image (3, H, W), int32 label ()} for line i of the list file.
class LabeledImageDataset : public Dataset {
 public:
  // Reads the list (paths relative to `root`); images are read only when fetched.
  LabeledImageDataset(const std::string& list_file, const std::string& root, ImageOptions options = {});
  // Number of listed images.
  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  // The listed paths and labels.
  const std::vector<LabeledPath>& entries() const { return entries_; }

 protected:
  // Decodes, resizes and augments the image (IOError naming the file when it cannot be decoded).
  Example get_example(int64_t index, int64_t epoch) const override;

 private:
  std::vector<LabeledPath> entries_;
  ImageOptions options_;
};

// A labeled example: the augmented image and its int32 label as a 0-dimensional array.
Example labeled_example(const Image& image, int32_t label, const ImageOptions& options, int64_t index, int64_t epoch,
                        const std::string& name);

}  // namespace kusari::data

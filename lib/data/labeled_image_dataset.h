#pragma once
// LabeledImageDataset: JPEG (or PNG) files listed with their labels, decoded and augmented on every get().

#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/dataset.h>
#include <kusari/data/image_transform.h>
#include <kusari/data/label_list.h>

namespace kusari::data {

// Example i is {float32 image (channels, H, W), int32 label ()} for line i of the list file.
class KUSARI_API LabeledImageDataset : public Dataset {
 public:
  // Reads the list (paths relative to `root`); images are read only when fetched.
  LabeledImageDataset(const std::string& list_file, const std::string& root, ImageOptions options = {});
  // The images of `entries` (a rank's shard_entries, say); nothing is read until fetched.
  explicit LabeledImageDataset(std::vector<LabeledPath> entries, ImageOptions options = {});
  // Number of listed images.
  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  // The listed paths and labels.
  const std::vector<LabeledPath>& entries() const { return entries_; }

 protected:
  // Reads, decodes (at a reduced JPEG scale where the options allow) and augments the image; IOError
  // naming the file when it cannot be decoded, or the next decodable example under BadImagePolicy::skip.
  Example get_example(int64_t index, int64_t epoch) const override;

 private:
  std::vector<LabeledPath> entries_;
  ImageOptions options_;
};

// A labeled example: the augmented image and its int32 label as a 0-dimensional array.
KUSARI_API Example labeled_example(const Image& image, int32_t label, const ImageOptions& options, int64_t index, int64_t epoch,
                                   const std::string& name);
// A labeled example from an image file's bytes: transform_image_bytes's image (named by entry.path)
// and entry.label as a 0-dimensional int32 array.
KUSARI_API Example labeled_file_example(const std::vector<uint8_t>& bytes, const LabeledPath& entry, const ImageOptions& options,
                                        int64_t index, int64_t epoch);

}  // namespace kusari::data

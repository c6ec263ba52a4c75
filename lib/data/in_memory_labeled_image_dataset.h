#pragma once
// InMemoryLabeledImageDataset: loads every listed image once (Kumar et al. 2017 kept each rank's
// ImageNet shard in memory) either as the file bytes, decoded on every get(), or as 8-bit pixels;
// crop, flip and normalisation still happen on every get().

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/dataset.h>
#include <kusari/data/image.h>
#include <kusari/data/image_transform.h>
#include <kusari/data/label_list.h>

namespace kusari::data {

// What an in-memory data set keeps of each image.
enum class ImageStorage {
  decoded,     // 8-bit RGB pixels (ImageNet's training set at shorter side 256: ~330 GB / P)
  compressed,  // the file's JPEG or PNG bytes, decoded on get() (ImageNet: ~140 GB / P)
};

// How an in-memory data set stores its images and how much memory it may take.
struct KUSARI_API InMemoryOptions {
  ImageStorage storage = ImageStorage::decoded;  // pixels or file bytes
  int64_t shorter_side = 0;       // decoded: keep pixels resized so the shorter side has this length
                                  // (decoded at the smallest JPEG scale that covers it); 0 keeps the
                                  // image as resize_image leaves it
  int64_t available_bytes = -1;   // the memory the data set may fill; -1 reads MemAvailable
  int64_t estimated_bytes = -1;   // estimate_bytes' result when the caller has it (saves reading every
                                  // header twice); -1 has the constructor compute it
};

// The same examples as LabeledImageDataset with the same options (decoded storage without
// shorter_side gives them bit for bit), without reading files on each get().
class KUSARI_API InMemoryLabeledImageDataset : public Dataset {
 public:
  // Reads the list and loads every image (in parallel). Throws ValueError naming the estimate and the
  // memory available when estimate_bytes exceeds it, and IOError naming the first bad file (with
  // BadImagePolicy::error). Prints nothing.
  InMemoryLabeledImageDataset(const std::string& list_file, const std::string& root, ImageOptions options = {},
                              InMemoryOptions memory = {});
  // Loads the images of `entries` only (a rank's shard_entries, say), as above.
  explicit InMemoryLabeledImageDataset(std::vector<LabeledPath> entries, ImageOptions options = {},
                                       InMemoryOptions memory = {});
  // The bytes the images of `entries` will take, without loading them: file sizes for compressed
  // storage, 3 bytes a pixel of the stored size (from each file's header alone) for decoded.
  static int64_t estimate_bytes(const std::vector<LabeledPath>& entries, const ImageOptions& options,
                                const InMemoryOptions& memory = {});
  // Number of images.
  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  // Bytes of pixels or file data held.
  int64_t nbytes() const;
  // The listed paths and labels.
  const std::vector<LabeledPath>& entries() const { return entries_; }

 protected:
  Example get_example(int64_t index, int64_t epoch) const override;

 private:
  void load();
  Example load_example(int64_t stored, int64_t index, int64_t epoch) const;

  std::vector<LabeledPath> entries_;
  ImageOptions options_;
  InMemoryOptions memory_;
  std::vector<Image> images_;                      // decoded storage
  std::vector<std::vector<uint8_t>> files_;        // compressed storage
  std::unordered_map<int64_t, std::string> bad_;   // skipped at load: index -> reason
};

}  // namespace kusari::data

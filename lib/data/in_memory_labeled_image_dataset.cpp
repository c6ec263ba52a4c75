#include <kusari/data/in_memory_labeled_image_dataset.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <utility>

#include <kusari/core/error.h>
#include <kusari/data/bad_image.h>
#include <kusari/data/binary_file.h>
#include <kusari/data/image_decode.h>
#include <kusari/data/image_pipeline.h>
#include <kusari/data/labeled_image_dataset.h>
#include <kusari/data/memory_info.h>
#include <kusari/data/parallel_each.h>

namespace kusari::data {
namespace {

// The size decoded storage keeps of an image of `size`.
ImageSize stored_size(ImageSize size, const ImageOptions& options, const InMemoryOptions& memory) {
  if (memory.shorter_side > 0) return shorter_side_size(size, memory.shorter_side);
  if (options.resize_height > 0 && !samples_regions(options)) return {options.resize_height, options.resize_width};
  return size;
}

// The pixels decoded storage keeps of one file.
Image decode_for_storage(const std::vector<uint8_t>& bytes, const std::string& name, const ImageOptions& options,
                         const InMemoryOptions& memory) {
  if (memory.shorter_side == 0) {
    const Image image = decode_image(bytes, name);
    return samples_regions(options) ? image : resize_image(image, options);
  }
  const ImageSize target = shorter_side_size(image_size(bytes, name), memory.shorter_side);
  return resize_bilinear(decode_image(bytes, name, target.height, target.width), target.height, target.width);
}

int64_t entry_bytes(const LabeledPath& entry, const ImageOptions& options, const InMemoryOptions& memory) {
  if (memory.storage == ImageStorage::compressed) {
    std::error_code error;
    const auto bytes = std::filesystem::file_size(entry.path, error);
    if (error) throw IOError(cat(entry.path, ": cannot read the file size (", error.message(), ")"));
    return static_cast<int64_t>(bytes);
  }
  const ImageSize size = stored_size(read_image_size(entry.path), options, memory);
  return size.height * size.width * 3;
}

void check_memory_options(const InMemoryOptions& memory) {
  if (memory.shorter_side < 0) {
    throw ValueError(cat("InMemoryLabeledImageDataset: expected shorter_side >= 0, got ", memory.shorter_side));
  }
}

void check_memory(int64_t estimate, size_t count, const InMemoryOptions& memory) {
  const bool measured = memory.available_bytes < 0;
  const int64_t available = measured ? available_memory_bytes() : memory.available_bytes;
  if (estimate <= available) return;
  throw ValueError(cat("InMemoryLabeledImageDataset: the ", count, " images need an estimated ", estimate, " bytes (",
                       format_bytes(estimate), "), more than the ", available, " bytes (", format_bytes(available),
                       ") available (", measured ? "MemAvailable in /proc/meminfo" : "InMemoryOptions::available_bytes",
                       ")"));
}

}  // namespace

InMemoryLabeledImageDataset::InMemoryLabeledImageDataset(const std::string& list_file, const std::string& root,
                                                         ImageOptions options, InMemoryOptions memory)
    : InMemoryLabeledImageDataset(read_label_list(list_file, root), options, memory) {}

InMemoryLabeledImageDataset::InMemoryLabeledImageDataset(std::vector<LabeledPath> entries, ImageOptions options,
                                                         InMemoryOptions memory)
    : entries_(std::move(entries)), options_(options), memory_(memory) {
  check_image_options(options_);
  check_memory_options(memory_);
  const int64_t estimate =
      memory_.estimated_bytes >= 0 ? memory_.estimated_bytes : estimate_bytes(entries_, options_, memory_);
  check_memory(estimate, entries_.size(), memory_);
  load();
}

int64_t InMemoryLabeledImageDataset::estimate_bytes(const std::vector<LabeledPath>& entries,
                                                    const ImageOptions& options, const InMemoryOptions& memory) {
  check_memory_options(memory);
  std::atomic<int64_t> total{0};
  parallel_each(static_cast<int64_t>(entries.size()), [&](int64_t i) {
    const LabeledPath& entry = entries[static_cast<size_t>(i)];
    try {
      total += entry_bytes(entry, options, memory);
    } catch (const IOError&) {
      if (options.on_bad_image == BadImagePolicy::error) throw;  // a skipped file takes nothing
    }
  });
  return total;
}

void InMemoryLabeledImageDataset::load() {
  const bool decoded = memory_.storage == ImageStorage::decoded;
  if (decoded) images_.resize(entries_.size());
  if (!decoded) files_.resize(entries_.size());
  std::mutex mutex;
  parallel_each(size(), [&](int64_t i) {
    const std::string& path = entries_[static_cast<size_t>(i)].path;
    try {
      std::vector<uint8_t> bytes = read_file(path);
      if (decoded) {
        images_[static_cast<size_t>(i)] = decode_for_storage(bytes, path, options_, memory_);
      } else {
        files_[static_cast<size_t>(i)] = std::move(bytes);
      }
    } catch (const IOError& e) {
      if (options_.on_bad_image == BadImagePolicy::error) throw;
      report_bad_image(path, e.what());
      std::lock_guard lock(mutex);
      bad_[i] = e.what();
    }
  });
}

int64_t InMemoryLabeledImageDataset::nbytes() const {
  int64_t total = 0;
  for (const Image& image : images_) total += static_cast<int64_t>(image.pixels.size());
  for (const std::vector<uint8_t>& file : files_) total += static_cast<int64_t>(file.size());
  return total;
}

Example InMemoryLabeledImageDataset::load_example(int64_t stored, int64_t index, int64_t epoch) const {
  const auto i = static_cast<size_t>(stored);
  const LabeledPath& entry = entries_[i];
  if (const auto bad = bad_.find(stored); bad != bad_.end()) throw IOError(bad->second);
  if (memory_.storage == ImageStorage::compressed) {
    return labeled_file_example(files_[i], entry, options_, index, epoch);
  }
  if (memory_.shorter_side == 0 && !samples_regions(options_)) {
    return labeled_example(images_[i], entry.label, options_, index, epoch, entry.path);
  }
  return {transform_image(images_[i], options_, index, epoch, entry.path), Array::scalar(entry.label, Dtype::int32, Device::cpu())};
}

Example InMemoryLabeledImageDataset::get_example(int64_t index, int64_t epoch) const {
  const auto load = [&](int64_t stored) { return load_example(stored, index, epoch); };
  return load_or_skip(index, entries_, options_.on_bad_image, load);
}

}  // namespace kusari::data

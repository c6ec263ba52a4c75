#include <kusari/data/in_memory_labeled_image_dataset.h>

#include <exception>
#include <mutex>

#include <kusari/core/parallel.h>
#include <kusari/data/jpeg.h>
#include <kusari/data/labeled_image_dataset.h>

namespace kusari::data {

InMemoryLabeledImageDataset::InMemoryLabeledImageDataset(const std::string& list_file, const std::string& root,
                                                         ImageOptions options)
    : entries_(read_label_list(list_file, root)), images_(entries_.size()), options_(options) {
  check_image_options(options_);
  // Exceptions must not leave a parallel region: keep the one of the lowest failing index and rethrow it.
  std::mutex mutex;
  int64_t failed_index = size();
  std::exception_ptr failure;
  parallel_for(size(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      try {
        images_[static_cast<size_t>(i)] = resize_image(read_jpeg(entries_[static_cast<size_t>(i)].path), options_);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (i < failed_index) {
          failed_index = i;
          failure = std::current_exception();
        }
        return;
      }
    }
  });
  if (failure) std::rethrow_exception(failure);
}

int64_t InMemoryLabeledImageDataset::nbytes() const {
  int64_t total = 0;
  for (const Image& image : images_) total += static_cast<int64_t>(image.pixels.size());
  return total;
}

Example InMemoryLabeledImageDataset::get_example(int64_t index, int64_t epoch) const {
  const auto i = static_cast<size_t>(index);
  return labeled_example(images_[i], entries_[i].label, options_, index, epoch, entries_[i].path);
}

}  // namespace kusari::data

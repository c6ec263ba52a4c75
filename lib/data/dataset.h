#pragma once
// Dataset: a random-access collection of examples, each a short list of arrays ({image, label}).

#include <cstdint>
#include <memory>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari::data {

// One example: its components in a fixed order, e.g. {image, label}.
using Example = std::vector<Array>;

// A random-access data set; get() may be called from several threads at once.
class KUSARI_API Dataset {
 public:
  virtual ~Dataset() = default;
  // Number of examples.
  virtual int64_t size() const = 0;
  // Example `index` (throws IndexError outside [0, size())); `epoch` seeds random augmentation where a
  // data set has any, so the same (index, epoch) always gives the same example.
  Example get(int64_t index, int64_t epoch = 0) const;

 protected:
  // Example `index`, already checked to lie in [0, size()).
  virtual Example get_example(int64_t index, int64_t epoch) const = 0;
};

// Data sets are shared between views, iterators and worker threads.
using DatasetPtr = std::shared_ptr<const Dataset>;

}  // namespace kusari::data

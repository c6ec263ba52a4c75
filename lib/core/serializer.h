#pragma once
// The visitor that saves or loads state: links, optimizers and trainers describe what they hold by
// calling it, and one implementation (NPZ, ...) writes or reads it.

#include <cstdint>
#include <string>
#include <string_view>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// Saves or loads named values under hierarchical keys ("predictor/conv1/W").
class KUSARI_API Serializer {
 public:
  virtual ~Serializer() = default;
  // The serializer of the child scope `name` (owned by this one).
  virtual Serializer& operator[](const std::string& name) = 0;
  // Saves `value`, or loads into it (into its existing storage when defined, else a new array).
  virtual void operator()(const std::string& key, Array& value) = 0;
  // Saves or loads a floating scalar.
  virtual void operator()(const std::string& key, double& value) = 0;
  // Saves or loads an integer scalar.
  virtual void operator()(const std::string& key, int64_t& value) = 0;
  // True for a reader, false for a writer.
  virtual bool is_loading() const = 0;
};

// Saves or loads a count (an iteration, an epoch, a step number) under `key`; a loaded count below 0 or
// above 2^53 throws ValueError naming `owner`, the key and the value, before the count changes.
KUSARI_API void serialize_count(Serializer& serializer, const std::string& key, int64_t& count, std::string_view owner);
// Saves or loads a quantity that is finite and at least `minimum` (a time, a scale); a loaded one
// outside that throws ValueError naming `owner`, the key and the value, before the quantity changes.
KUSARI_API void serialize_at_least(Serializer& serializer, const std::string& key, double& value, double minimum,
                                   std::string_view owner);

}  // namespace kusari

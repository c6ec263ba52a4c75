#pragma once
// In-memory serialization: what a serialize() walk saves, held by full key ("updater/iterator:main/
// epoch") instead of written to a file, and turned into bytes and back, so state can travel between
// processes (a rank's iterator position, an evaluator's sums).

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::serializers {

// Values by full key; scalars are 0-d float64 or int64 arrays, as in an NPZ archive.
using ArrayDict = std::map<std::string, Array>;

// Records what a walk saves into an ArrayDict (arrays as copies taken when recorded).
class KUSARI_API DictSerializer : public Serializer {
 public:
  // An empty collection at the root scope.
  DictSerializer();
  // The child scope `name` (its keys are prefixed with "name/").
  Serializer& operator[](const std::string& name) override;
  // Records a copy of `value` (an undefined array stays undefined); a key recorded twice throws ValueError.
  void operator()(const std::string& key, Array& value) override;
  // Records a 0-d float64 array.
  void operator()(const std::string& key, double& value) override;
  // Records a 0-d int64 array.
  void operator()(const std::string& key, int64_t& value) override;
  // False: this serializer saves.
  bool is_loading() const override { return false; }
  // Everything recorded in the whole tree.
  const ArrayDict& values() const { return *values_; }

 private:
  DictSerializer(std::shared_ptr<ArrayDict> values, std::string prefix);
  // Stores `value` under prefix + key.
  void record(const std::string& key, Array value);

  std::shared_ptr<ArrayDict> values_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<DictSerializer>> children_;
};

// Loads a walk from an ArrayDict. A missing key throws ValueError naming it; a defined target must
// have the stored shape (ShapeError naming both) and keeps its dtype and device.
class KUSARI_API DictDeserializer : public Serializer {
 public:
  // Reads from `values` (held by this object) at the root scope.
  explicit DictDeserializer(ArrayDict values);
  // The child scope `name`.
  Serializer& operator[](const std::string& name) override;
  // Loads into `value` (an undefined target becomes the stored array).
  void operator()(const std::string& key, Array& value) override;
  // Loads a 0-d array as a floating scalar.
  void operator()(const std::string& key, double& value) override;
  // Loads a 0-d array as an integer scalar.
  void operator()(const std::string& key, int64_t& value) override;
  // True: this serializer loads.
  bool is_loading() const override { return true; }

 private:
  DictDeserializer(std::shared_ptr<const ArrayDict> values, std::string prefix);
  // The array stored under prefix + key.
  const Array& fetch(const std::string& key) const;
  // Loads a 0-d array into a C++ scalar.
  template <class T>
  void load_scalar(const std::string& key, T& value) const;

  std::shared_ptr<const ArrayDict> values_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<DictDeserializer>> children_;
};

// The bytes of `values`: per entry its key, its dtype name ("undefined" for an undefined array) and
// its elements as a .npy file.
KUSARI_API std::string pack_array_dict(const ArrayDict& values);
// The ArrayDict packed in `bytes`; malformed bytes throw IOError naming `source`.
KUSARI_API ArrayDict unpack_array_dict(std::string_view bytes, const std::string& source);

}  // namespace kusari::serializers

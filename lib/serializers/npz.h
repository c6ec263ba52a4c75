#pragma once
// NPZ checkpoints. NpzSerializer and NpzDeserializer implement the Serializer visitor over NumPy's .npz
// format with Chainer's key layout (serializer["predictor"]["conv1"]("W", a) is the entry
// "predictor/conv1/W"); save_npz and load_npz save or load anything that has serialize(Serializer&).
//
// Scalars are 0-d arrays (float64, int64). Where NumPy has no dtype for an array the archive holds a
// second entry "<key>.__kusari_dtype__", a 0-d byte string naming it: "bfloat16" (the data entry holds
// the bit patterns as '<u2'), or "undefined" for an undefined array (which has no data entry).

#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::serializers {

// Walks some state through a serializer (a link's serialize, an optimizer's, a lambda).
using SerializeFunction = std::function<void(Serializer&)>;

// Anything with a serialize(Serializer&) member: links, optimizers, trainers.
template <class T>
concept Serializable = requires(T& target, Serializer& serializer) { target.serialize(serializer); };

// Collects values under hierarchical keys, then writes them as one .npz archive that NumPy can open.
class KUSARI_API NpzSerializer : public Serializer {
 public:
  // An empty collection at the root scope.
  NpzSerializer();
  // The child scope `name` (its keys are prefixed with "name/").
  Serializer& operator[](const std::string& name) override;
  // Records the array handle (save() writes its elements as they are then); a key recorded twice throws
  // ValueError.
  void operator()(const std::string& key, Array& value) override;
  // Records a 0-d float64 array.
  void operator()(const std::string& key, double& value) override;
  // Records a 0-d int64 array.
  void operator()(const std::string& key, int64_t& value) override;
  // False: this serializer writes.
  bool is_loading() const override { return false; }
  // Writes everything recorded in the whole tree to `path` (deflated when `compress`); the file appears
  // complete or not at all.
  void save(const std::string& path, bool compress = false) const;

 private:
  struct State;
  NpzSerializer(std::shared_ptr<State> state, std::string prefix);
  // Stores `value` under prefix + key.
  void record(const std::string& key, Array value);

  std::shared_ptr<State> state_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<NpzSerializer>> children_;
};

// Reads values from an .npz archive (written by kusari, numpy.savez or numpy.savez_compressed).
class KUSARI_API NpzDeserializer : public Serializer {
 public:
  // Opens `path` (IOError when it is not a readable zip archive); keys are looked up under `prefix`
  // (e.g. "updater/model:main/" to load a model out of a trainer snapshot). When strict, a key missing
  // from the archive throws ValueError; otherwise the value is left as it is.
  explicit NpzDeserializer(const std::string& path, bool strict = true, const std::string& prefix = "");
  // The child scope `name`.
  Serializer& operator[](const std::string& name) override;
  // Loads into `value`: a defined value must have the stored shape (ShapeError naming both) and keeps
  // its dtype and device; an undefined one becomes a new host array of the stored dtype.
  void operator()(const std::string& key, Array& value) override;
  // Loads a 0-d array as a floating scalar.
  void operator()(const std::string& key, double& value) override;
  // Loads a 0-d array as an integer scalar.
  void operator()(const std::string& key, int64_t& value) override;
  // True: this serializer reads.
  bool is_loading() const override { return true; }
  // In a dry run (for the whole tree) every call reads and checks its entry and changes nothing; load_npz
  // makes a dry pass first, so a missing key, a wrong shape or a corrupt entry leaves the target untouched.
  void set_dry_run(bool dry_run);

 private:
  struct State;
  NpzDeserializer(std::shared_ptr<State> state, std::string prefix);
  // The array stored under prefix + key (undefined when stored so); nullopt when absent and not strict.
  std::optional<Array> fetch(const std::string& key);
  // "key '<full key>' in '<path>'" for messages.
  std::string describe(const std::string& key) const;
  // Loads a 0-d array into a C++ scalar.
  template <class T>
  void load_scalar(const std::string& key, T& value);

  std::shared_ptr<State> state_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<NpzDeserializer>> children_;
};

// Saves what `visit` serializes to the .npz file `path` (written to a temporary file beside it, then
// renamed, so no half-written file ever appears at `path`).
KUSARI_API void save_npz(const std::string& path, const SerializeFunction& visit, bool compress = false);

// Saves `target` (a link, an optimizer, ...) to `path`.
template <Serializable T>
void save_npz(const std::string& path, T& target, bool compress = false) {
  save_npz(path, SerializeFunction([&target](Serializer& serializer) { target.serialize(serializer); }), compress);
}

// Loads what `visit` serializes from `path`: a first pass reads and checks every value, a second assigns
// them, so on any error (missing key when strict, shape mismatch, corrupt file) nothing has changed.
// `visit` must ask for the same keys in both passes.
KUSARI_API void load_npz(const std::string& path, const SerializeFunction& visit, bool strict = true,
                         const std::string& prefix = "");

// Loads `target` (a link, an optimizer, ...) from `path`; see the overload above.
template <Serializable T>
void load_npz(const std::string& path, T& target, bool strict = true, const std::string& prefix = "") {
  load_npz(path, SerializeFunction([&target](Serializer& serializer) { target.serialize(serializer); }), strict,
           prefix);
}

}  // namespace kusari::serializers

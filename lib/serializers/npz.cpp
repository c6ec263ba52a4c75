#include <kusari/serializers/npz.h>

#include <kusari/serializers/npy.h>
#include <kusari/serializers/zip.h>

namespace kusari::serializers {
namespace {

constexpr const char* kDtypeSuffix = ".__kusari_dtype__";
constexpr const char* kUndefined = "undefined";

// The zip entry name of a key: NumPy appends ".npy" and numpy.load strips it again.
std::string entry_name(const std::string& key) { return key + ".npy"; }

// The entry naming the real dtype of `key` where NumPy has none.
std::string dtype_entry_name(const std::string& key) { return entry_name(key + kDtypeSuffix); }

}  // namespace

struct NpzSerializer::State {
  std::map<std::string, Array> values;  // by full key; sorted, so archives are deterministic
};

NpzSerializer::NpzSerializer() : state_(std::make_shared<State>()) {}

NpzSerializer::NpzSerializer(std::shared_ptr<State> state, std::string prefix)
    : state_(std::move(state)), prefix_(std::move(prefix)) {}

Serializer& NpzSerializer::operator[](const std::string& name) {
  auto& child = children_[name];
  if (!child) child.reset(new NpzSerializer(state_, prefix_ + name + "/"));
  return *child;
}

void NpzSerializer::record(const std::string& key, Array value) {
  const std::string full = prefix_ + key;
  if (!state_->values.emplace(full, std::move(value)).second) {
    throw ValueError(cat("NpzSerializer: key '", full, "' is saved twice"));
  }
}

void NpzSerializer::operator()(const std::string& key, Array& value) { record(key, value); }

void NpzSerializer::operator()(const std::string& key, double& value) {
  record(key, Array::scalar(value, Dtype::float64, Device::cpu()));
}

void NpzSerializer::operator()(const std::string& key, int64_t& value) {
  record(key, Array::from_vector(std::vector<int64_t>{value}, Shape{}, {}, Device::cpu()));
}

void NpzSerializer::save(const std::string& path, bool compress) const {
  ZipWriter zip(path);
  for (const auto& [key, value] : state_->values) {
    if (!value.defined()) {
      zip.add(dtype_entry_name(key), text_to_npy(kUndefined), compress);
      continue;
    }
    if (value.dtype() == Dtype::bfloat16) {  // the one dtype NumPy lacks
      zip.add(dtype_entry_name(key), text_to_npy(dtype_name(value.dtype())), compress);
    }
    zip.add(entry_name(key), to_npy(value), compress);
  }
  zip.finish();
}

struct NpzDeserializer::State {
  State(const std::string& path, bool strict) : archive(path), strict(strict) {}
  ZipReader archive;
  bool strict;
  bool dry_run = false;
  std::map<std::string, Array> staged;  // read in the dry run, handed out by the next pass
};

NpzDeserializer::NpzDeserializer(const std::string& path, bool strict, const std::string& prefix)
    : state_(std::make_shared<State>(path, strict)), prefix_(prefix) {}

NpzDeserializer::NpzDeserializer(std::shared_ptr<State> state, std::string prefix)
    : state_(std::move(state)), prefix_(std::move(prefix)) {}

Serializer& NpzDeserializer::operator[](const std::string& name) {
  auto& child = children_[name];
  if (!child) child.reset(new NpzDeserializer(state_, prefix_ + name + "/"));
  return *child;
}

void NpzDeserializer::set_dry_run(bool dry_run) { state_->dry_run = dry_run; }

std::string NpzDeserializer::describe(const std::string& key) const {
  return cat("key '", prefix_, key, "' in '", state_->archive.path(), "'");
}

std::optional<Array> NpzDeserializer::fetch(const std::string& key) {
  State& state = *state_;
  const std::string full = prefix_ + key;
  if (auto it = state.staged.find(full); it != state.staged.end()) {
    Array value = it->second;
    if (!state.dry_run) state.staged.erase(it);
    return value;
  }
  const std::string entry = entry_name(full), dtype_entry = dtype_entry_name(full);
  std::optional<Dtype> stored_as;
  bool undefined = false;
  if (state.archive.contains(dtype_entry)) {
    const std::string name =
        text_from_npy(state.archive.read(dtype_entry), cat(state.archive.path(), ": entry '", dtype_entry, "'"));
    undefined = name == kUndefined;
    try {
      if (!undefined) stored_as = dtype_from_name(name);
    } catch (const DtypeError&) {
      throw IOError(cat(state.archive.path(), ": entry '", dtype_entry, "' names an unknown dtype '", name, "'"));
    }
  }
  if (!undefined && !state.archive.contains(entry)) {
    if (state.strict) throw ValueError(cat("NpzDeserializer: ", describe(key), " not found"));
    return std::nullopt;
  }
  Array value =
      undefined ? Array()
                : from_npy(state.archive.read(entry), cat(state.archive.path(), ": entry '", entry, "'"), stored_as);
  if (state.dry_run) state.staged[full] = value;
  return value;
}

void NpzDeserializer::operator()(const std::string& key, Array& value) {
  const std::optional<Array> loaded = fetch(key);
  if (!loaded) return;
  if (value.defined() && loaded->defined() && loaded->shape() != value.shape()) {
    throw ShapeError(cat("NpzDeserializer: shape mismatch for ", describe(key), ": the target has shape ",
                         value.shape(), ", the file holds shape ", loaded->shape()));
  }
  if (state_->dry_run) return;
  if (value.defined() && loaded->defined()) {
    value.assign(loaded->to(value.device()));
  } else {
    value = *loaded;
  }
}

template <class T>
void NpzDeserializer::load_scalar(const std::string& key, T& value) {
  const std::optional<Array> loaded = fetch(key);
  if (!loaded) return;
  if (!loaded->defined() || loaded->ndim() != 0) {
    throw ShapeError(cat("NpzDeserializer: ", describe(key), ": expected a scalar (shape ()), the file holds ",
                         loaded->defined() ? cat("shape ", loaded->shape()) : "an undefined array"));
  }
  if (!state_->dry_run) value = loaded->item<T>();
}

void NpzDeserializer::operator()(const std::string& key, double& value) { load_scalar(key, value); }

void NpzDeserializer::operator()(const std::string& key, int64_t& value) { load_scalar(key, value); }

void save_npz(const std::string& path, const SerializeFunction& visit, bool compress) {
  NpzSerializer serializer;
  visit(serializer);
  serializer.save(path, compress);
}

void load_npz(const std::string& path, const SerializeFunction& visit, bool strict, const std::string& prefix) {
  NpzDeserializer deserializer(path, strict, prefix);
  deserializer.set_dry_run(true);
  visit(deserializer);
  deserializer.set_dry_run(false);
  visit(deserializer);
}

}  // namespace kusari::serializers

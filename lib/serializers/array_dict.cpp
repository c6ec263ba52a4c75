#include <kusari/serializers/array_dict.h>

#include <kusari/serializers/detail/byte_io.h>
#include <kusari/serializers/npy.h>

namespace kusari::serializers {
namespace {

constexpr const char* kUndefined = "undefined";

// Appends a length-prefixed byte run.
void put_run(std::string& out, std::string_view run) {
  detail::put_le<uint64_t>(out, run.size());
  out.append(run);
}

// Reads a length-prefixed byte run.
std::string_view take_run(detail::ByteReader& reader) {
  return reader.take(static_cast<size_t>(reader.get<uint64_t>()));
}

}  // namespace

DictSerializer::DictSerializer() : values_(std::make_shared<ArrayDict>()) {}

DictSerializer::DictSerializer(std::shared_ptr<ArrayDict> values, std::string prefix)
    : values_(std::move(values)), prefix_(std::move(prefix)) {}

Serializer& DictSerializer::operator[](const std::string& name) {
  auto& child = children_[name];
  if (!child) child.reset(new DictSerializer(values_, prefix_ + name + "/"));
  return *child;
}

void DictSerializer::record(const std::string& key, Array value) {
  const std::string full = prefix_ + key;
  if (!values_->emplace(full, std::move(value)).second) {
    throw ValueError(cat("DictSerializer: key '", full, "' is saved twice"));
  }
}

void DictSerializer::operator()(const std::string& key, Array& value) {
  record(key, value.defined() ? value.copy() : Array());
}

void DictSerializer::operator()(const std::string& key, double& value) {
  record(key, Array::scalar(value, Dtype::float64, Device::cpu()));
}

void DictSerializer::operator()(const std::string& key, int64_t& value) {
  record(key, Array::from_vector(std::vector<int64_t>{value}, Shape{}, {}, Device::cpu()));
}

DictDeserializer::DictDeserializer(ArrayDict values)
    : values_(std::make_shared<const ArrayDict>(std::move(values))) {}

DictDeserializer::DictDeserializer(std::shared_ptr<const ArrayDict> values, std::string prefix)
    : values_(std::move(values)), prefix_(std::move(prefix)) {}

Serializer& DictDeserializer::operator[](const std::string& name) {
  auto& child = children_[name];
  if (!child) child.reset(new DictDeserializer(values_, prefix_ + name + "/"));
  return *child;
}

const Array& DictDeserializer::fetch(const std::string& key) const {
  const auto it = values_->find(prefix_ + key);
  if (it == values_->end()) throw ValueError(cat("DictDeserializer: key '", prefix_, key, "' not found"));
  return it->second;
}

void DictDeserializer::operator()(const std::string& key, Array& value) {
  const Array& loaded = fetch(key);
  if (!value.defined() || !loaded.defined()) {
    value = loaded.defined() ? loaded.copy() : Array();
    return;
  }
  if (loaded.shape() != value.shape()) {
    throw ShapeError(cat("DictDeserializer: shape mismatch for key '", prefix_, key, "': the target has shape ",
                         value.shape(), ", the stored value has shape ", loaded.shape()));
  }
  value.assign(loaded.to(value.device()));
}

template <class T>
void DictDeserializer::load_scalar(const std::string& key, T& value) const {
  const Array& loaded = fetch(key);
  if (!loaded.defined() || loaded.ndim() != 0) {
    throw ShapeError(cat("DictDeserializer: key '", prefix_, key, "': expected a scalar (shape ()), got ",
                         loaded.defined() ? cat("shape ", loaded.shape()) : "an undefined array"));
  }
  value = loaded.item<T>();
}

void DictDeserializer::operator()(const std::string& key, double& value) { load_scalar(key, value); }

void DictDeserializer::operator()(const std::string& key, int64_t& value) { load_scalar(key, value); }

std::string pack_array_dict(const ArrayDict& values) {
  std::string out;
  detail::put_le<uint64_t>(out, values.size());
  for (const auto& [key, value] : values) {
    put_run(out, key);
    put_run(out, value.defined() ? dtype_name(value.dtype()) : kUndefined);
    put_run(out, value.defined() ? to_npy(value) : std::string());
  }
  return out;
}

ArrayDict unpack_array_dict(std::string_view bytes, const std::string& source) {
  detail::ByteReader reader(bytes, source);
  ArrayDict values;
  const auto count = reader.get<uint64_t>();
  for (uint64_t i = 0; i < count; ++i) {
    std::string key(take_run(reader));
    const std::string dtype(take_run(reader));
    const std::string_view npy = take_run(reader);
    if (dtype == kUndefined) {
      values[key] = Array();
      continue;
    }
    try {
      values[key] = from_npy(npy, cat(source, ": '", key, "'"), dtype_from_name(dtype));
    } catch (const DtypeError&) {
      throw IOError(cat(source, ": '", key, "' names an unknown dtype '", dtype, "'"));
    }
  }
  if (reader.position() != bytes.size()) {
    throw IOError(cat(source, ": ", bytes.size() - reader.position(), " bytes follow the last entry"));
  }
  return values;
}

}  // namespace kusari::serializers

#include <kusari/training/serialize_values.h>

#include <kusari/core/error.h>

namespace kusari::training {
namespace {

// Saves `values` as a 1-d array, or replaces them by the loaded array's elements.
template <class T>
void serialize_elements(Serializer& serializer, const std::string& key, std::vector<T>& values) {
  Array array;
  if (!serializer.is_loading()) array = Array::from_vector(values, {static_cast<int64_t>(values.size())}, {}, Device::cpu());
  serializer(key, array);
  if (!serializer.is_loading() || !array.defined()) return;
  if (array.ndim() != 1) {
    throw ShapeError(cat("serialize '", key, "': expected a 1-d array, got shape ", array.shape()));
  }
  values = array.to_vector<T>();
}

}  // namespace

void serialize_vector(Serializer& serializer, const std::string& key, std::vector<double>& values) {
  serialize_elements(serializer, key, values);
}

void serialize_vector(Serializer& serializer, const std::string& key, std::vector<int64_t>& values) {
  serialize_elements(serializer, key, values);
}

void serialize_strings(Serializer& serializer, const std::string& key, std::vector<std::string>& values) {
  std::vector<uint8_t> bytes;
  for (const std::string& value : values) {
    if (value.find('\n') != std::string::npos) {
      throw ValueError(cat("serialize '", key, "': the string '", value, "' contains a newline"));
    }
    bytes.insert(bytes.end(), value.begin(), value.end());
    bytes.push_back('\n');
  }
  serialize_elements(serializer, key, bytes);
  if (!serializer.is_loading()) return;
  if (!bytes.empty() && bytes.back() != '\n') {
    throw ValueError(cat("serialize '", key, "': the stored strings do not end with a newline"));
  }
  std::vector<std::string> loaded(1);
  for (uint8_t byte : bytes) {
    if (byte == '\n') {
      loaded.emplace_back();
    } else {
      loaded.back().push_back(static_cast<char>(byte));
    }
  }
  loaded.pop_back();  // the empty string after the last newline
  values = std::move(loaded);
}

void serialize_flag(Serializer& serializer, const std::string& key, bool& value) {
  int64_t stored = value ? 1 : 0;
  serializer(key, stored);
  value = stored != 0;
}

}  // namespace kusari::training

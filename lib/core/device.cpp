#include <kusari/core/device.h>

#include <optional>
#include <ostream>

#include <kusari/core/error.h>

namespace kusari {

namespace {

// The ordinal after `prefix` ("cuda:", "loopback:") when text is prefix followed by 1-9 digits.
std::optional<int> ordinal_after(const std::string& text, const std::string& prefix) {
  if (text.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string digits = text.substr(prefix.size());
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

thread_local Device this_thread_default = Device::cpu();

}  // namespace

Device Device::parse(const std::string& text) {
  if (text == "cpu") return cpu();
  if (const auto n = ordinal_after(text, "cuda:")) return cuda(*n);
  if (const auto n = ordinal_after(text, "loopback:")) return loopback(*n);
  throw ValueError(cat("Device::parse: expected 'cpu', 'cuda:N' or 'loopback:N', got '", text, "'"));
}

std::string Device::to_string() const {
  switch (type) {
    case DeviceType::cpu: return "cpu";
    case DeviceType::cuda: return cat("cuda:", index);
    case DeviceType::loopback: return cat("loopback:", index);
  }
  return cat("device type ", static_cast<int>(type), ":", index);
}

Device default_device() { return this_thread_default; }

DeviceScope::DeviceScope(const Device& device) : previous_(this_thread_default) { this_thread_default = device; }

DeviceScope::~DeviceScope() { this_thread_default = previous_; }

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << device.to_string(); }

}  // namespace kusari

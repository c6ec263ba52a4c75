#include <kusari/core/device.h>

#include <ostream>

#include <kusari/core/error.h>

namespace kusari {

Device Device::parse(const std::string& text) {
  if (text == "cpu") return cpu();
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.find_first_not_of("0123456789", 5) == std::string::npos) {
    return cuda(std::stoi(text.substr(5)));
  }
  throw ValueError(cat("Device::parse: expected 'cpu' or 'cuda:N', got '", text, "'"));
}

std::string Device::to_string() const {
  return type == DeviceType::cpu ? std::string("cpu") : cat("cuda:", index);
}

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << device.to_string(); }

}  // namespace kusari

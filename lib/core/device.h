#pragma once
// Where an array's memory lives.

#include <iosfwd>
#include <string>

#include <kusari/core/api.h>

namespace kusari {

// The kinds of device kusari dispatches kernels for.
enum class DeviceType : int { cpu = 0, cuda = 1 };
// Number of DeviceType values (the size of every dispatch table).
inline constexpr int kDeviceTypeCount = 2;

// A device: its type and index ("cpu", "cuda:0").
struct KUSARI_API Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;

  // The host.
  static Device cpu() { return {DeviceType::cpu, 0}; }
  // The CUDA device with the given ordinal.
  static Device cuda(int index) { return {DeviceType::cuda, index}; }
  // Parses "cpu" or "cuda:N"; throws ValueError otherwise.
  static Device parse(const std::string& text);
  // "cpu" or "cuda:N".
  std::string to_string() const;
  bool operator==(const Device& other) const = default;
};

// Prints the device as "cpu" or "cuda:N".
KUSARI_API std::ostream& operator<<(std::ostream& out, const Device& device);

}  // namespace kusari

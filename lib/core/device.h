#pragma once
// Where an array's memory lives.

#include <iosfwd>
#include <string>

#include <kusari/core/api.h>

namespace kusari {

// The kinds of device kusari dispatches kernels for.
// loopback is host memory behind a device's rules (its own allocator, kernels that refuse other
// devices' operands, no host access without a transfer): it runs the suite through the seam a GPU uses.
enum class DeviceType : int { cpu = 0, cuda = 1, loopback = 2 };
// Number of DeviceType values (the size of every dispatch table).
inline constexpr int kDeviceTypeCount = 3;

// A device: its type and index ("cpu", "cuda:0", "loopback:0").
struct KUSARI_API Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;

  // The host.
  static Device cpu() { return {DeviceType::cpu, 0}; }
  // The CUDA device with the given ordinal.
  static Device cuda(int index) { return {DeviceType::cuda, index}; }
  // The loopback device with the given ordinal.
  static Device loopback(int index) { return {DeviceType::loopback, index}; }
  // Parses "cpu", "cuda:N" or "loopback:N"; throws ValueError otherwise.
  static Device parse(const std::string& text);
  // "cpu", "cuda:N" or "loopback:N".
  std::string to_string() const;
  bool operator==(const Device& other) const = default;
};

// Prints the device as Device::to_string does.
KUSARI_API std::ostream& operator<<(std::ostream& out, const Device& device);

// The device that array factories use when none is named: the innermost DeviceScope of this thread,
// else the CPU.
KUSARI_API Device default_device();

// Makes `device` this thread's default device while it lives (scopes nest), as chainerx.using_device
// or `with torch.device(...)`: arrays, parameters and models created without a device go there.
class KUSARI_API DeviceScope {
 public:
  explicit DeviceScope(const Device& device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device previous_;
};

}  // namespace kusari

// The doctest entry point shared by every suite. KUSARI_TEST_DEVICE (e.g. loopback:0) makes that device
// the default of every array, parameter and model the suite creates without naming a device, so that a
// suite written for the host runs through another backend unchanged. Each case's outcome is printed on a
// line of its own (case_report.h).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>

#include <kusari/core/device.h>

#include "case_report.h"

REGISTER_LISTENER("kusari_cases", 1, kusari::testing::CaseReport);

int main(int argc, char** argv) {
  kusari::testing::set_case_program(argv[0]);
  std::optional<kusari::DeviceScope> device;
  if (const char* name = std::getenv("KUSARI_TEST_DEVICE"); name && *name) device.emplace(kusari::Device::parse(name));
  doctest::Context context(argc, argv);
  return context.run();
}

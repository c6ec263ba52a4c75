// libFuzzer target: NPY arrays (the entries of NPZ files), through serializers::from_npy.

#include <string_view>

#include <kusari/serializers/npy.h>

#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kusari::fuzz::expect_kusari_error_or_success([&] { kusari::serializers::from_npy(bytes, "input.npy"); });
  return 0;
}

// libFuzzer target: IDX files (MNIST-style), plain or gzip-compressed, through data::read_idx.

#include <kusari/data/idx_file.h>

#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // gzip input is recognised by its magic bytes whatever the name, so one file name serves both.
  const std::string path = kusari::fuzz::input_file(data, size, "input-idx3-ubyte");
  kusari::fuzz::expect_kusari_error_or_success([&] { kusari::data::read_idx(path); });
  return 0;
}

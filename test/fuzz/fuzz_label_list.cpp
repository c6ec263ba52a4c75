// libFuzzer target: the list files of labeled image data sets ("relative/path label" per line).

#include <kusari/data/label_list.h>

#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kusari::fuzz::input_file(data, size, "train.txt");
  kusari::fuzz::expect_kusari_error_or_success([&] { kusari::data::read_label_list(path, "/images"); });
  return 0;
}

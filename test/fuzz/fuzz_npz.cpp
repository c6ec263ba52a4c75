// libFuzzer target: NPZ archives (ZIP, stored or deflated, ZIP64 included), read into a link's
// parameters and into whatever keys the archive holds, through serializers::load_npz.

#include <kusari/kusari.h>

#include "fuzz_input.h"

using namespace kusari;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::input_file(data, size, "input.npz");
  // A fixed link (the seeds are its saved state): strict loading checks every key, shape and dtype.
  L::Linear linear(3, 2);
  fuzz::expect_kusari_error_or_success([&] { serializers::load_npz(path, linear); });
  // And loose loading of keys the archive may or may not hold, into undefined arrays and scalars.
  fuzz::expect_kusari_error_or_success([&] {
    Array a, b;
    double x = 0;
    int64_t n = 0;
    serializers::load_npz(path, serializers::SerializeFunction([&](Serializer& s) {
                            s("a", a);
                            s["child"]("b", b);
                            s("x", x);
                            s("n", n);
                          }),
                          false);
  });
  return 0;
}

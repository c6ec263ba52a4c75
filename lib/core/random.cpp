#include <kusari/core/random.h>

#include <kusari/core/detail/philox.h>

namespace kusari {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  return detail::philox_rounds(c, k);
}

Generator& default_generator() {
  static Generator generator(0);
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().set_state(seed, 0); }

std::array<double, 2> uniform_pair(uint64_t seed, uint64_t pair) { return detail::uniform_pair_of(seed, pair); }

std::array<double, 2> normal_pair(uint64_t seed, uint64_t pair) { return detail::normal_pair_of(seed, pair); }

double uniform_at(uint64_t seed, uint64_t index) { return uniform_pair(seed, index >> 1)[index & 1]; }

double normal_at(uint64_t seed, uint64_t index) { return normal_pair(seed, index >> 1)[index & 1]; }

}  // namespace kusari

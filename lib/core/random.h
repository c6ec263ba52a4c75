#pragma once
// Counter-based random numbers (Philox4x32-10): element i of a draw depends only on the seed and
// the generator's position, never on thread count, device or rank.

#include <array>
#include <cstdint>

#include <kusari/core/api.h>

namespace kusari {

// Philox4x32-10 applied to one counter under one key.
KUSARI_API std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// A seeded stream; each draw of n numbers consumes n counters, so later draws differ from earlier ones.
class KUSARI_API Generator {
 public:
  // A stream with the given seed, at position 0.
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  // Reserves n consecutive counters and returns the first.
  uint64_t advance(uint64_t n) {
    const uint64_t start = offset_;
    offset_ += n;
    return start;
  }
  // The seed this stream was made with.
  uint64_t seed() const { return seed_; }
  // The next counter a draw will use.
  uint64_t offset() const { return offset_; }
  // Restores a saved position (for resuming training).
  void set_state(uint64_t seed, uint64_t offset) {
    seed_ = seed;
    offset_ = offset;
  }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process's default stream (used by dropout and by creation functions given no seed).
KUSARI_API Generator& default_generator();
// Reseeds the default stream and rewinds it to position 0.
KUSARI_API void manual_seed(uint64_t seed);

// Draws 2k and 2k+1 of a stream come from one Philox block: a pair of uniforms, or the two normals
// Box-Muller makes of them, so filling an array costs one block per two elements.

// The uniforms in [0, 1) at indices 2 * pair and 2 * pair + 1 of the stream `seed`.
KUSARI_API std::array<double, 2> uniform_pair(uint64_t seed, uint64_t pair);
// The standard normals at indices 2 * pair and 2 * pair + 1 of the stream `seed`.
KUSARI_API std::array<double, 2> normal_pair(uint64_t seed, uint64_t pair);
// The uniform number in [0, 1) at `index` of the stream `seed`.
KUSARI_API double uniform_at(uint64_t seed, uint64_t index);
// The standard normal number at `index` of the stream `seed`.
KUSARI_API double normal_at(uint64_t seed, uint64_t index);

}  // namespace kusari

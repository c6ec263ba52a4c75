#pragma once
// Counter-based draws for data pipelines: a value depends only on (seed, a, b), never on the order in
// which threads ask for it, so shuffles and augmentations are reproducible.

#include <cstdint>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::data {

// 64 random bits at position (a, b) of the stream `seed` (one Philox block on the counter (a, b)).
KUSARI_API uint64_t random_bits(uint64_t seed, uint64_t a, uint64_t b);
// A uniformly drawn integer in [0, n) at position (a, b) of the stream `seed` (n > 0).
KUSARI_API uint64_t random_below(uint64_t n, uint64_t seed, uint64_t a, uint64_t b);
// A random permutation of 0..n-1, the same for the same (seed, stream): Fisher-Yates on counter draws.
KUSARI_API std::vector<int64_t> random_permutation(int64_t n, uint64_t seed, uint64_t stream = 0);

}  // namespace kusari::data

#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: how the
// per-channel kernels (normalization.cu) cover a dense array of `outer` × `channels` × `inner` elements
// (row-major (N, C, ...): inner is the product of the axes after C; channels-last, or any array whose
// channels are innermost: inner 1, outer the rest) in loads of `vector` elements, with every block's
// channels fixed so that its sums stay in registers and no element index is ever divided.
//   Channels innermost: the array is rows of C; block (x, y) takes channel tile x and row group y, its
//   threads (x, y) the vector of channels x and every (grid_y · threads_y)-th row from row y.
//   Planes (inner > 1): block (x, y) takes channel x and slice y of that channel's outer · inner
//   elements; its threads take every threads_x-th vector of the slice.

#include <algorithm>
#include <cstdint>
#include <optional>

#include <kusari/core/array.h>
#include <kusari/core/detail/host_device.h>

namespace kusari::kernels::cuda {

// The threads per block of the per-channel kernels.
inline constexpr int kChannelThreads = 256;

// A launch of a per-channel kernel over a dense (outer, channels, inner) array.
struct ChannelPlan {
  int64_t outer = 0, channels = 0, inner = 0;
  int vector = 1;  // elements per load; all of one channel (planes) or consecutive channels (innermost)
  unsigned grid_x = 1, grid_y = 1, threads_x = 1, threads_y = 1;

  // Whether the channels are the innermost axis (inner == 1).
  KUSARI_HOST_DEVICE bool channels_innermost() const { return inner == 1; }
};

// An array seen as dense (outer, channels, inner).
struct ChannelExtents {
  int64_t outer = 0, inner = 0;
};

// How a non-empty (N, C, ...) array is dense: row-major (N, product of the axes after C; inner 1 when
// that product is 1), or channels-last (size / C, 1); none for any other strides.
std::optional<ChannelExtents> dense_channel_extents(const Array& array);

// The smallest power of two at least n (n >= 1).
inline int64_t power_of_two_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// The plan for an array of these extents, loading `vector` elements at a time where its layout allows
// (channels % vector == 0 with channels innermost, inner % vector == 0 otherwise; else one element).
inline ChannelPlan plan_channels(int64_t outer, int64_t channels, int64_t inner, int vector) {
  ChannelPlan p;
  p.outer = outer;
  p.channels = channels;
  p.inner = inner;
  p.vector = (inner == 1 ? channels % vector : inner % vector) == 0 ? vector : 1;
  // Each thread takes about 8 loads; at most 1024 row groups or slices (the partial sums' rows).
  constexpr int64_t kLoadsPerThread = 8, kMostGroups = 1024;
  if (p.channels_innermost()) {
    const int64_t vectors_per_row = channels / p.vector;
    p.threads_x = static_cast<unsigned>(std::min<int64_t>(32, power_of_two_at_least(vectors_per_row)));
    p.threads_y = static_cast<unsigned>(kChannelThreads / p.threads_x);
    p.grid_x = static_cast<unsigned>((vectors_per_row + p.threads_x - 1) / p.threads_x);
    p.grid_y = static_cast<unsigned>(std::clamp<int64_t>(outer / (p.threads_y * kLoadsPerThread), 1, kMostGroups));
  } else {
    const int64_t vectors_per_channel = outer * inner / p.vector;
    p.threads_x = kChannelThreads;
    p.grid_x = static_cast<unsigned>(channels);
    p.grid_y = static_cast<unsigned>(
        std::clamp<int64_t>(vectors_per_channel / (kChannelThreads * kLoadsPerThread), 1, kMostGroups));
  }
  return p;
}

// The channel of the first element of every load of thread x of block x (the same at every load), or
// -1 for a thread past the last channel.
KUSARI_HOST_DEVICE inline int64_t first_channel(const ChannelPlan& p, unsigned bx, unsigned tx) {
  if (!p.channels_innermost()) return bx;
  const int64_t channel = (int64_t{bx} * p.threads_x + tx) * p.vector;
  return channel < p.channels ? channel : -1;
}

// Calls visit(offset, channel) for each load of thread (tx, ty) of block (bx, by): offset is its first
// element's index in the dense array, channel its first element's channel (the others' are the next ones
// with channels innermost, the same one otherwise). No division inside the loop.
template <class Visit>
KUSARI_HOST_DEVICE inline void for_each_channel_load(const ChannelPlan& p, unsigned bx, unsigned by, unsigned tx,
                                                     unsigned ty, Visit&& visit) {
  const int64_t channel = first_channel(p, bx, tx);
  if (channel < 0) return;
  if (p.channels_innermost()) {
    const int64_t step = int64_t{p.grid_y} * p.threads_y;
    for (int64_t row = int64_t{by} * p.threads_y + ty; row < p.outer; row += step) {
      visit(row * p.channels + channel, channel);
    }
    return;
  }
  const int64_t vectors = p.outer * p.inner / p.vector;
  const int64_t begin = vectors * by / p.grid_y, end = vectors * (by + 1) / p.grid_y;
  // Vector v of the channel is element j = v · vector of its outer × inner, at sample j / inner, place
  // j % inner: both advance by the thread step's quotient and remainder, with a carry.
  const int64_t step = int64_t{p.threads_x} * p.vector;
  const int64_t step_outer = step / p.inner, step_inner = step % p.inner;
  int64_t v = begin + tx;
  int64_t sample = v * p.vector / p.inner, place = v * p.vector % p.inner;
  for (; v < end; v += p.threads_x) {
    visit((sample * p.channels + channel) * p.inner + place, channel);
    sample += step_outer;
    place += step_inner;
    if (place >= p.inner) {
      place -= p.inner;
      ++sample;
    }
  }
}

}  // namespace kusari::kernels::cuda

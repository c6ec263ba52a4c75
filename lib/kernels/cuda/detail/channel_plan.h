#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: how the
// per-channel kernels (normalization.cu) cover a dense array of `outer` × `channels` × `inner` elements
// (row-major (N, C, ...): inner is the product of the axes after C; channels-last, or any array whose
// channels are innermost: inner 1, outer the rest) split into `groups` equal consecutive groups of its
// outer extent (ghost batch normalization's groups of samples), in loads of `vector` elements, with
// every block's group and channels fixed so that its sums stay in registers and no element index is
// ever divided. Rows y of the grid are `groups` runs of grid_y / groups, one run per group.
//   Channels innermost: the array is rows of C; block (x, y) takes channel tile x and row group y of its
//   group, its threads (x, y) the vector of channels x and every (run · threads_y)-th row of the group.
//   Planes (inner > 1): block (x, y) takes channel x and slice y of that channel's elements in its
//   group; its threads take every threads_x-th vector of the slice.

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
  int64_t outer = 0, channels = 0, inner = 0, groups = 1;
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

// The most groups one launch takes (the grid's rows).
inline constexpr int64_t kMostChannelGroups = 65535;

// The plan for an array of these extents in `groups` groups (which divide outer; at most
// kMostChannelGroups), loading `vector` elements at a time where its layout allows (channels % vector
// == 0 with channels innermost, inner % vector == 0 otherwise; else one element).
inline ChannelPlan plan_channels(int64_t outer, int64_t channels, int64_t inner, int vector, int64_t groups = 1) {
  ChannelPlan p;
  p.outer = outer;
  p.channels = channels;
  p.inner = inner;
  p.groups = groups;
  p.vector = (inner == 1 ? channels % vector : inner % vector) == 0 ? vector : 1;
  // Each thread takes about 8 loads; at most 1024 rows of partial sums in all (one a group at least).
  constexpr int64_t kLoadsPerThread = 8, kMostRows = 1024;
  const int64_t most_per_group = std::max<int64_t>(1, kMostRows / groups);
  int64_t per_group = 1;
  if (p.channels_innermost()) {
    const int64_t vectors_per_row = channels / p.vector;
    p.threads_x = static_cast<unsigned>(std::min<int64_t>(32, power_of_two_at_least(vectors_per_row)));
    p.threads_y = static_cast<unsigned>(kChannelThreads / p.threads_x);
    p.grid_x = static_cast<unsigned>((vectors_per_row + p.threads_x - 1) / p.threads_x);
    per_group = std::clamp<int64_t>(outer / groups / (p.threads_y * kLoadsPerThread), 1, most_per_group);
  } else {
    const int64_t vectors_per_channel = outer / groups * inner / p.vector;
    p.threads_x = kChannelThreads;
    p.grid_x = static_cast<unsigned>(channels);
    per_group = std::clamp<int64_t>(vectors_per_channel / (kChannelThreads * kLoadsPerThread), 1, most_per_group);
  }
  p.grid_y = static_cast<unsigned>(per_group * groups);
  return p;
}

// The grid rows of each group.
KUSARI_HOST_DEVICE inline int64_t rows_per_group(const ChannelPlan& p) { return p.grid_y / p.groups; }

// The group of block row y.
KUSARI_HOST_DEVICE inline int64_t group_of_block(const ChannelPlan& p, unsigned by) {
  return by / rows_per_group(p);
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
  const int64_t run = rows_per_group(p), group = by / run, local = by % run;
  const int64_t group_outer = p.outer / p.groups, first_outer = group * group_outer;
  if (p.channels_innermost()) {
    const int64_t step = run * p.threads_y, end = first_outer + group_outer;
    for (int64_t row = first_outer + local * p.threads_y + ty; row < end; row += step) {
      visit(row * p.channels + channel, channel);
    }
    return;
  }
  const int64_t vectors = group_outer * p.inner / p.vector;
  const int64_t begin = vectors * local / run, end = vectors * (local + 1) / run;
  // Vector v of the channel in the group is element j = v · vector of the group's outer × inner, at
  // sample j / inner after the group's first, place j % inner: both advance by the thread step's
  // quotient and remainder, with a carry.
  const int64_t step = int64_t{p.threads_x} * p.vector;
  const int64_t step_outer = step / p.inner, step_inner = step % p.inner;
  int64_t v = begin + tx;
  int64_t sample = first_outer + v * p.vector / p.inner, place = v * p.vector % p.inner;
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

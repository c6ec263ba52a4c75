#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: where the CUDA
// pooling kernels' threads are. A thread's element position becomes a plane and a position in it
// (row-major planes one after another, or channels-last), that plane's addresses in the other operand,
// its row and column, and for the backward the outputs whose windows hold it: every division by a
// divisor fixed at launch, FastDivider's where the launch's positions fit 32 bits, 64-bit division's
// otherwise. Plain C++, so that the host suite checks them against the formulas.

#include <cstdint>
#include <type_traits>

#include <kusari/core/detail/host_device.h>
#include <kusari/kernels/detail/fast_division.h>
#include <kusari/kernels/detail/pooling_functions.h>
#include <kusari/kernels/ops/pooling.h>

namespace kusari::kernels {

// Plain 64-bit division, for launches whose element positions do not fit 32 bits (FastDivider's
// interface).
class WideDivider {
 public:
  WideDivider() = default;
  explicit WideDivider(int64_t divisor) : divisor_(divisor) {}
  KUSARI_HOST_DEVICE int64_t divide(int64_t n) const { return n / divisor_; }
  KUSARI_HOST_DEVICE int64_t divisor() const { return divisor_; }

 private:
  int64_t divisor_ = 1;
};

// The position type a divider works in.
template <class Div>
using IndexOf = std::conditional_t<std::is_same_v<Div, FastDivider>, uint32_t, int64_t>;

// n / d and n % d.
template <class Div>
KUSARI_HOST_DEVICE inline void split(const Div& d, IndexOf<Div> n, IndexOf<Div>& quotient,
                                     IndexOf<Div>& remainder) {
  quotient = d.divide(n);
  remainder = n - quotient * d.divisor();
}

// The divisions a kernel makes of each thread's position, by divisors fixed at launch: the channels
// (channels-last), the elements of the planes the positions run over and of their rows, and the
// strides (the backward's outputs whose windows hold an input).
template <class Div>
struct Dividers {
  using divider = Div;
  Div channels, plane, row, stride_h, stride_w;
  bool channels_last = false;
};

// Whether FastDivider serves a launch over `elements` positions of planes of `rows` x `columns`: the
// positions, and along each axis a padded position plus a stride (covering's largest numerator; the
// strides are its divisors), fit 32 bits.
inline bool fits_fast_pooling(int64_t elements, int64_t rows, int64_t columns, const Pool2dGeometry& g) {
  return fits_fast_division(elements) && fits_fast_division(rows + g.pad_h + g.stride_h) &&
         fits_fast_division(columns + g.pad_w + g.stride_w);
}

// The dividers of positions over planes of `rows` x `columns` elements, of arrays of `channels` channels.
template <class Div>
Dividers<Div> dividers_for(int64_t channels, int64_t rows, int64_t columns, const Pool2dGeometry& g,
                           bool channels_last) {
  return {Div(channels), Div(rows * columns), Div(columns), Div(g.stride_h), Div(g.stride_w), channels_last};
}

// The outputs [first, last) along one axis whose windows (kernel k, stride s, padding pad) hold input
// position i.
struct Covering {
  int64_t first, last;
};

// The outputs whose windows hold input position i, along one axis of `outputs` outputs.
template <class Div>
KUSARI_HOST_DEVICE inline Covering covering(int64_t i, int64_t k, const Div& s, int64_t pad, int64_t outputs) {
  using I = IndexOf<Div>;
  // Output o holds i when o·s - pad <= i < o·s - pad + k.
  const int64_t low = i + pad - k + 1;
  const int64_t first = low <= 0 ? 0 : static_cast<int64_t>(s.divide(static_cast<I>(low + s.divisor() - 1)));
  const int64_t last = static_cast<int64_t>(s.divide(static_cast<I>(i + pad))) + 1;
  return {first, last < outputs ? last : outputs};
}

// A plane (n·C + c) and a position in it (y·W + x).
struct PlaneIndex {
  int64_t plane, at;
};

// The plane and position held at memory position m: planes one after another (row-major NCHW), or
// channels-last, where plane n·C + c's element `at` lies at (n·size + at)·C + c.
template <class Div>
KUSARI_HOST_DEVICE inline PlaneIndex locate(const Dividers<Div>& d, int64_t m) {
  IndexOf<Div> plane = 0, at = 0;
  if (!d.channels_last) {
    split(d.plane, static_cast<IndexOf<Div>>(m), plane, at);
    return {static_cast<int64_t>(plane), static_cast<int64_t>(at)};
  }
  IndexOf<Div> pixel = 0, channel = 0, image = 0;
  split(d.channels, static_cast<IndexOf<Div>>(m), pixel, channel);
  split(d.plane, pixel, image, at);
  return {static_cast<int64_t>(image) * d.channels.divisor() + channel, static_cast<int64_t>(at)};
}

// Where one plane's elements lie: element `at` at base + at · step.
struct PlaneAddress {
  int64_t base, step;

  KUSARI_HOST_DEVICE int64_t operator()(int64_t at) const { return base + at * step; }
};

// Where plane `plane`'s elements lie in arrays of planes of `size` elements: worked out once per
// thread, so that a window's elements cost no division.
template <class Div>
KUSARI_HOST_DEVICE inline PlaneAddress address(const Dividers<Div>& d, int64_t plane, int64_t size) {
  if (!d.channels_last) return {plane * size, 1};
  IndexOf<Div> image = 0, channel = 0;
  split(d.channels, static_cast<IndexOf<Div>>(plane), image, channel);
  const int64_t channels = d.channels.divisor();
  return {static_cast<int64_t>(image) * size * channels + static_cast<int64_t>(channel), channels};
}

// Row and column of position `at` of a plane whose rows the dividers' `row` holds.
template <class Div>
KUSARI_HOST_DEVICE inline void coordinates(const Dividers<Div>& d, int64_t at, int64_t& y, int64_t& x) {
  IndexOf<Div> row = 0, column = 0;
  split(d.row, static_cast<IndexOf<Div>>(at), row, column);
  y = static_cast<int64_t>(row);
  x = static_cast<int64_t>(column);
}

// An output element of the forward (position o): its plane and place, its window and where its plane's
// inputs lie.
struct OutputWindow {
  PlaneIndex out;
  Window window;
  PlaneAddress input;
};

template <class Div>
KUSARI_HOST_DEVICE inline OutputWindow window_of(const Dividers<Div>& d, int64_t o, const Planes& p,
                                                 const Pool2dGeometry& g) {
  const PlaneIndex out = locate(d, o);
  int64_t oy = 0, ox = 0;
  coordinates(d, out.at, oy, ox);
  return {out, window_at(g, p, oy, ox), address(d, out.plane, p.in_size())};
}

// An input element of the backward (position i): its plane and place, its row and column, the outputs
// whose windows hold it and where they lie.
struct InputCover {
  PlaneIndex in;
  int64_t y, x;
  Covering rows, columns;
  PlaneAddress output;
};

template <class Div>
KUSARI_HOST_DEVICE inline InputCover cover_of(const Dividers<Div>& d, int64_t i, const Planes& p,
                                              const Pool2dGeometry& g) {
  const PlaneIndex in = locate(d, i);
  int64_t iy = 0, ix = 0;
  coordinates(d, in.at, iy, ix);
  return {in, iy, ix, covering(iy, g.kernel_h, d.stride_h, g.pad_h, p.out_h),
          covering(ix, g.kernel_w, d.stride_w, g.pad_w, p.out_w), address(d, in.plane, p.out_size())};
}

}  // namespace kusari::kernels

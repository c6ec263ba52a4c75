// Where the CUDA pooling kernels' threads are (kernels/detail/pooling_positions.h), on the host, with
// FastDivider's 32-bit divisions and with 64-bit division: for row-major and channels-last arrays of
// several shapes, every element position becomes the plane and position the layout puts there and
// back, its row and column (also as the backward's input cover), each output's window and its plane's
// inputs, and the outputs whose windows hold an input are exactly those a search of every output finds.

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <kusari/kernels/detail/pooling_positions.h>

using namespace kusari;
using namespace kusari::kernels;

namespace {

// Arrays of N images of C planes of H x W.
struct Extents {
  int64_t n, c, h, w;
};

// Checks every position of arrays of these extents with dividers of type Div.
template <class Div>
void check_positions(const Extents& e, const Pool2dGeometry& g, bool channels_last) {
  const Dividers<Div> d = dividers_for<Div>(e.c, e.h, e.w, g, channels_last);
  const int64_t size = e.h * e.w, total = e.n * e.c * size;
  const Planes planes({e.n, e.c, e.h, e.w}, {e.n, e.c, (e.h + 2 * g.pad_h - g.kernel_h) / g.stride_h + 1,
                                             (e.w + 2 * g.pad_w - g.kernel_w) / g.stride_w + 1});
  bool located = true, addressed = true, placed = true, covered = true;
  for (int64_t m = 0; m < total; ++m) {
    const PlaneIndex p = locate(d, m);
    const int64_t plane = channels_last ? m / e.c / size * e.c + m % e.c : m / size;
    const int64_t at = channels_last ? m / e.c % size : m % size;
    located = located && p.plane == plane && p.at == at;
    addressed = addressed && address(d, p.plane, size)(p.at) == m;
    int64_t y = -1, x = -1;
    coordinates(d, p.at, y, x);
    placed = placed && y == at / e.w && x == at % e.w;
    // The backward's view of the same element: its plane, place, row and column, its plane's outputs.
    const InputCover c = cover_of(d, m, planes, g);
    covered = covered && c.in.plane == plane && c.in.at == at && c.y == y && c.x == x &&
              c.output(0) == address(d, plane, planes.out_size())(0);
  }
  // The forward's view of each output element: its plane and place, its window, its plane's inputs.
  const Dividers<Div> out = dividers_for<Div>(e.c, planes.out_h, planes.out_w, g, channels_last);
  const int64_t out_size = planes.out_size();
  bool windowed = true;
  for (int64_t o = 0; o < e.n * e.c * out_size; ++o) {
    const int64_t plane = channels_last ? o / e.c / out_size * e.c + o % e.c : o / out_size;
    const int64_t at = channels_last ? o / e.c % out_size : o % out_size;
    const OutputWindow w = window_of(out, o, planes, g);
    const Window expected = window_at(g, planes, at / planes.out_w, at % planes.out_w);
    const int64_t first_input = channels_last ? plane / e.c * size * e.c + plane % e.c : plane * size;
    windowed = windowed && w.out.plane == plane && w.out.at == at && w.window.y0 == expected.y0 &&
               w.window.y1 == expected.y1 && w.window.x0 == expected.x0 && w.window.x1 == expected.x1 &&
               w.input(0) == first_input && w.input(1) - w.input(0) == (channels_last ? e.c : 1);
  }
  CHECK(located);
  CHECK(addressed);
  CHECK(placed);
  CHECK(covered);
  CHECK(windowed);
}

// Checks covering() against every output of an axis of `inputs` positions with `outputs` windows.
template <class Div>
void check_covering(int64_t inputs, int64_t outputs, int64_t k, int64_t s, int64_t pad) {
  const Div stride(s);
  bool exact = true;
  for (int64_t i = 0; i < inputs; ++i) {
    const Covering c = covering(i, k, stride, pad, outputs);
    for (int64_t o = 0; o < outputs; ++o) {
      const bool holds = o * s - pad <= i && i < o * s - pad + k;
      exact = exact && holds == (c.first <= o && o < c.last);
    }
  }
  CHECK(exact);
}

}  // namespace

TEST_CASE("each position is its layout's plane and place, and back, with 32-bit and 64-bit division") {
  const std::vector<Extents> extents = {{2, 3, 5, 7}, {1, 64, 8, 8}, {3, 1, 1, 9}, {2, 5, 11, 1}, {4, 7, 6, 10}};
  const Pool2dGeometry g{3, 3, 2, 2, 1, 1};
  for (const Extents& e : extents) {
    for (const bool channels_last : {false, true}) {
      CAPTURE(e.n);
      CAPTURE(e.c);
      CAPTURE(e.h);
      CAPTURE(e.w);
      CAPTURE(channels_last);
      check_positions<FastDivider>(e, g, channels_last);
      check_positions<WideDivider>(e, g, channels_last);
    }
  }
}

TEST_CASE("the outputs covering an input are exactly those whose windows hold it") {
  // (inputs, outputs, kernel, stride, padding), cover_all's extra window included.
  const std::vector<std::vector<int64_t>> axes = {{112, 56, 3, 2, 1}, {7, 3, 3, 2, 0}, {7, 4, 3, 2, 1},
                                                  {10, 10, 1, 1, 0}, {9, 2, 5, 4, 2}, {5, 6, 2, 1, 1}};
  for (const auto& a : axes) {
    CAPTURE(a[0]);
    CAPTURE(a[3]);
    check_covering<FastDivider>(a[0], a[1], a[2], a[3], a[4]);
    check_covering<WideDivider>(a[0], a[1], a[2], a[3], a[4]);
  }
}

TEST_CASE("fast division serves a launch only where its positions, padded, fit 32 bits") {
  const Pool2dGeometry g{3, 3, 2, 2, 1, 1};
  CHECK(fits_fast_pooling(int64_t{256} * 64 * 56 * 56, 56, 56, g));
  CHECK_FALSE(fits_fast_pooling(int64_t{1} << 32, 56, 56, g));
  // Four rows, but a padding past 32 bits: the padded positions would wrap in 32-bit arithmetic.
  const Pool2dGeometry padded{2, 2, int64_t{UINT32_MAX}, 1, int64_t{1} << 32, 0};
  CHECK_FALSE(fits_fast_pooling(16, 4, 4, padded));
  const Pool2dGeometry wide_stride{2, 2, 1, int64_t{1} << 32, 0, 0};
  CHECK_FALSE(fits_fast_pooling(16, 4, 4, wide_stride));
  // And there 64-bit division gives the outputs a search finds.
  check_covering<WideDivider>(4, 3, 2, int64_t{UINT32_MAX}, int64_t{1} << 32);
}

#pragma once
// A self-contained SVG line plot (axes with ticks, one polyline per series, a legend), the drawing
// behind PlotReport.

#include <string>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::training {

// One line of the plot: points (xs[i], ys[i]); non-finite points are left out.
struct KUSARI_API PlotSeries {
  std::string name;
  std::vector<double> xs;
  std::vector<double> ys;
};

// The SVG document (it starts with "<svg") of `series` over an x axis labelled `x_label`.
KUSARI_API std::string svg_line_plot(const std::vector<PlotSeries>& series, const std::string& x_label);

// About `count` round tick positions covering [low, high] (steps of 1, 2 or 5 times a power of ten);
// just `low` when the range is empty, not finite, or within rounding (1e-9) of its values.
KUSARI_API std::vector<double> nice_ticks(double low, double high, int count = 5);

}  // namespace kusari::training

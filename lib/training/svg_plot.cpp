#include <kusari/training/svg_plot.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kusari::training {
namespace {

// Drawing area inside the image, in pixels.
constexpr double kWidth = 640, kHeight = 480;
constexpr double kLeft = 70, kRight = 20, kTop = 20, kBottom = 50;
// Line colours, cycled through the series.
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"};

std::string xml_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A coordinate or label with up to 6 significant digits.
std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", std::abs(value) < 1e-12 ? 0.0 : value);
  return buffer;
}

// The closed range of the finite values of one axis, widened when it is a single value.
struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double value) {
    low = std::min(low, value);
    high = std::max(high, value);
  }
  // Makes the range usable for scaling: [0, 1] when empty, ±1 (or ±|v|/10) around a single value.
  void widen() {
    if (low > high) {
      low = 0;
      high = 1;
    } else if (low == high) {
      const double margin = low == 0 ? 1 : std::abs(low) / 10;
      low -= margin;
      high += margin;
    }
  }
};

bool finite_point(double x, double y) { return std::isfinite(x) && std::isfinite(y); }

// The data ranges and their mapping to pixels.
struct Frame {
  Range x, y;
  double width = kWidth - kLeft - kRight;
  double height = kHeight - kTop - kBottom;
  double px(double value) const { return kLeft + (value - x.low) / (x.high - x.low) * width; }
  double py(double value) const { return kTop + (y.high - value) / (y.high - y.low) * height; }
};

// Grid lines with tick labels, the frame, and the x label.
std::string axes(const Frame& frame, const std::string& x_label) {
  const double bottom = kTop + frame.height, right = kLeft + frame.width;
  std::string svg;
  for (const double x : nice_ticks(frame.x.low, frame.x.high)) {
    const std::string at = number(frame.px(x));
    svg += "<line x1=\"" + at + "\" y1=\"" + number(kTop) + "\" x2=\"" + at + "\" y2=\"" + number(bottom) +
           "\" stroke=\"#e0e0e0\"/>\n";
    svg += "<text x=\"" + at + "\" y=\"" + number(bottom + 18) + "\" text-anchor=\"middle\">" + number(x) +
           "</text>\n";
  }
  for (const double y : nice_ticks(frame.y.low, frame.y.high)) {
    const std::string at = number(frame.py(y));
    svg += "<line x1=\"" + number(kLeft) + "\" y1=\"" + at + "\" x2=\"" + number(right) + "\" y2=\"" + at +
           "\" stroke=\"#e0e0e0\"/>\n";
    svg += "<text x=\"" + number(kLeft - 6) + "\" y=\"" + at + "\" text-anchor=\"end\" dominant-baseline=\"middle\">" +
           number(y) + "</text>\n";
  }
  svg += "<rect x=\"" + number(kLeft) + "\" y=\"" + number(kTop) + "\" width=\"" + number(frame.width) +
         "\" height=\"" + number(frame.height) + "\" fill=\"none\" stroke=\"black\"/>\n";
  svg += "<text x=\"" + number(kLeft + frame.width / 2) + "\" y=\"" + number(kHeight - 10) +
         "\" text-anchor=\"middle\">" + xml_escape(x_label) + "</text>\n";
  return svg;
}

// Series `index`: its markers, its polyline and its legend entry.
std::string line(const Frame& frame, const PlotSeries& series, size_t index) {
  const std::string color = kColors[index % std::size(kColors)];
  std::string svg, points;
  for (size_t i = 0; i < std::min(series.xs.size(), series.ys.size()); ++i) {
    if (!finite_point(series.xs[i], series.ys[i])) continue;
    const std::string x = number(frame.px(series.xs[i])), y = number(frame.py(series.ys[i]));
    points += (points.empty() ? "" : " ") + x + "," + y;
    svg += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"2.5\" fill=\"" + color + "\"/>\n";
  }
  svg += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
  const double legend_x = kLeft + frame.width - 170, legend_y = kTop + 16 + 18 * static_cast<double>(index);
  svg += "<line x1=\"" + number(legend_x) + "\" y1=\"" + number(legend_y) + "\" x2=\"" + number(legend_x + 24) +
         "\" y2=\"" + number(legend_y) + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>\n";
  svg += "<text x=\"" + number(legend_x + 30) + "\" y=\"" + number(legend_y) + "\" dominant-baseline=\"middle\">" +
         xml_escape(series.name) + "</text>\n";
  return svg;
}

}  // namespace

std::vector<double> nice_ticks(double low, double high, int count) {
  const double raw = (high - low) / std::max(1, count);
  // A range within rounding of its values (a flat series whose mean came out an ulp off) has one tick:
  // smaller steps would make k·step stop moving in double precision.
  const double scale = std::max(std::abs(low), std::abs(high));
  if (!(raw > scale * 1e-9) || !std::isfinite(raw)) return {low};
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double k = std::ceil(low / step); k * step <= high + step * 1e-9; ++k) ticks.push_back(k * step);
  return ticks;
}

std::string svg_line_plot(const std::vector<PlotSeries>& series, const std::string& x_label) {
  Frame frame;
  for (const PlotSeries& s : series) {
    for (size_t i = 0; i < std::min(s.xs.size(), s.ys.size()); ++i) {
      if (!finite_point(s.xs[i], s.ys[i])) continue;
      frame.x.add(s.xs[i]);
      frame.y.add(s.ys[i]);
    }
  }
  frame.x.widen();
  frame.y.widen();
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(kWidth) + "\" height=\"" +
                    number(kHeight) + "\" viewBox=\"0 0 " + number(kWidth) + " " + number(kHeight) + "\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<g font-family=\"sans-serif\" font-size=\"12\" stroke-width=\"1\">\n";
  svg += axes(frame, x_label);
  for (size_t k = 0; k < series.size(); ++k) svg += line(frame, series[k], k);
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace kusari::training

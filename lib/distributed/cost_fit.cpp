// The least-squares fits of cost_fit.h.

#include <kusari/distributed/cost_fit.h>

#include <algorithm>

#include <kusari/core/error.h>

namespace kusari::distributed::cost {
namespace {

// Throws ValueError naming `op` unless every time is positive and every amount ≥ 0.
void check_timings(const std::vector<Timing>& timings, const char* op) {
  for (const Timing& t : timings) {
    if (!(t.seconds > 0) || !(t.amount >= 0)) {
      throw ValueError(cat(op, ": expected positive times of amounts ≥ 0, got ", t.seconds, " s for ", t.amount));
    }
  }
}

// Σ w·a·a / Σ w·a·t with w = 1/t²: the weighted slope through the origin.
double slope_through_origin(const std::vector<Timing>& timings) {
  double aa = 0, at = 0;
  for (const Timing& t : timings) {
    const double w = 1 / (t.seconds * t.seconds);
    aa += w * t.amount * t.amount;
    at += w * t.amount * t.seconds;
  }
  return aa > 0 ? at / aa : 0;
}

}  // namespace

Link fit_link(const std::vector<Timing>& timings) {
  check_timings(timings, "fit_link");
  const auto [lo, hi] = std::minmax_element(timings.begin(), timings.end(),
                                            [](const Timing& a, const Timing& b) { return a.amount < b.amount; });
  if (timings.size() < 2 || lo->amount == hi->amount) {
    throw ValueError(cat("fit_link: expected timings of at least two distinct sizes, got ", timings.size(),
                         " timing(s)"));
  }
  // Weighted normal equations of t = α + β·b.
  double s = 0, sb = 0, sbb = 0, st = 0, sbt = 0;
  for (const Timing& t : timings) {
    const double w = 1 / (t.seconds * t.seconds);
    s += w;
    sb += w * t.amount;
    sbb += w * t.amount * t.amount;
    st += w * t.seconds;
    sbt += w * t.amount * t.seconds;
  }
  const double det = s * sbb - sb * sb;
  Link link{(st * sbb - sb * sbt) / det, (s * sbt - sb * st) / det};
  if (link.beta < 0) return {st / s, 0};  // no measurable bandwidth term: the weighted mean time
  if (link.alpha < 0) link = {0, slope_through_origin(timings)};
  return link;
}

double fit_per_element(const std::vector<Timing>& timings) {
  check_timings(timings, "fit_per_element");
  const bool any = std::any_of(timings.begin(), timings.end(), [](const Timing& t) { return t.amount > 0; });
  if (!any) throw ValueError("fit_per_element: expected a timing of a positive amount, got none");
  return slope_through_origin(timings);
}

}  // namespace kusari::distributed::cost

#pragma once
// Reporter: the observation a trainer collects each iteration, over the reporting of
// kusari/autograd/report.h (whose names this namespace also offers, as training::report).

#include <kusari/core/api.h>
#include <kusari/autograd/report.h>

namespace kusari::training {

using kusari::Observation;
using kusari::report;
using kusari::report_observation;
using kusari::report_scope;
using kusari::ReportScope;
using kusari::ReportValue;

// The observation a trainer collects each iteration.
class KUSARI_API Reporter {
 public:
  // What has been reported since the last clear().
  const Observation& observation() const { return observation_; }
  // Adds values directly (the same conversion as report()).
  void report(const std::vector<std::pair<std::string, ReportValue>>& values);
  // Forgets every value.
  void clear() { observation_.clear(); }
  // Within the returned guard's lifetime, report() writes into this reporter.
  [[nodiscard]] ReportScope scope() { return ReportScope(observation_); }

 private:
  Observation observation_;
};

}  // namespace kusari::training

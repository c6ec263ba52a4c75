#pragma once
// Reporting: code anywhere (a loss, a link such as L::Classifier, an evaluator) reports named values
// ("main/loss", "main/accuracy") as chainer.reporter does, without knowing who listens. A thread-local
// stack of scopes decides where report() writes; training::Reporter and the evaluators open them.

#include <map>
#include <string>
#include <variant>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari {

// Reported values by key, as host doubles.
using Observation = std::map<std::string, double>;

// One reported value: a number, or an array or variable holding a single element.
class KUSARI_API ReportValue {
 public:
  // A plain number.
  ReportValue(double value) : value_(value) {}
  // A 0-d (or size-1) array; read to the host when reported.
  ReportValue(Array value) : value_(std::move(value)) {}
  // A variable's data.
  ReportValue(const Variable& value) : value_(value.data()) {}
  // The value as a double; throws ShapeError naming `key` for an array with more than one element.
  double to_double(const std::string& key) const;

 private:
  std::variant<double, Array> value_;
};

// Records `values` into the innermost active scope of this thread; without one, does nothing (and
// reads nothing from a device).
KUSARI_API void report(const std::vector<std::pair<std::string, ReportValue>>& values);
// report() of numbers already computed (an evaluator's means).
KUSARI_API void report_observation(const Observation& values);
// Whether a report() on this thread would be recorded (a scope is open).
KUSARI_API bool reporting();

// While alive, report() on this thread writes into the observation it was given.
class KUSARI_API ReportScope {
 public:
  // Makes `observation` the target of report() until destruction (scopes nest).
  explicit ReportScope(Observation& observation);
  ~ReportScope();
  ReportScope(const ReportScope&) = delete;
  ReportScope& operator=(const ReportScope&) = delete;
};

// Within the returned guard's lifetime, report() writes into `observation`:
// `Observation seen; { auto scope = report_scope(seen); model_loss(batch); }`.
[[nodiscard]] inline ReportScope report_scope(Observation& observation) { return ReportScope(observation); }

}  // namespace kusari

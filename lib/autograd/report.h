#pragma once
// Reporting: code anywhere (a loss, a link such as L::Classifier, an evaluator) reports named values
// ("main/loss", "main/accuracy") as chainer.reporter does, without knowing who listens. A thread-local
// stack of scopes decides where report() writes; training::Reporter and the evaluators open them. A
// value computed on a device stays there until its number is asked for (a summary's mean when a log
// entry is written), so that reporting every iteration does not make the host wait for the device.

#include <map>
#include <string>
#include <variant>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari {

// One reported value: a number, or an array or variable holding a single element.
class KUSARI_API ReportValue {
 public:
  // A plain number.
  ReportValue(double value = 0) : value_(value) {}
  // A 0-d (or size-1) array.
  ReportValue(Array value) : value_(std::move(value)) {}
  // A variable's data.
  ReportValue(const Variable& value) : value_(value.data()) {}
  // The value as a double, an array's element read to the host (waiting for its device) once and then
  // kept in place of the array (so a value is not to be read from two threads at once); throws
  // ShapeError naming `key` for an array with more than one element.
  double to_double(const std::string& key) const;
  // to_double under the name "a reported value".
  operator double() const { return to_double("a reported value"); }
  // The one-element array on a device (not the CPU) whose element has not been read yet, else an
  // undefined array.
  Array on_device() const;
  // What report() keeps of this value under `key`: a number for a number or a host array; for an
  // array on a device, a copy of its element queued there now (later writes to the array do not change
  // it); ShapeError or ValueError naming `key` for an array of another size or an undefined one.
  ReportValue recorded(const std::string& key) const;

 private:
  mutable std::variant<double, Array> value_;
};

// Reported values by key: numbers, or one-element arrays on a device read when first converted.
using Observation = std::map<std::string, ReportValue>;

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

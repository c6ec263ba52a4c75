#include <kusari/autograd/report.h>

#include <kusari/core/error.h>

namespace kusari {
namespace {

// The targets of report() on this thread, innermost last.
std::vector<Observation*>& scope_stack() {
  thread_local std::vector<Observation*> stack;
  return stack;
}

}  // namespace

double ReportValue::to_double(const std::string& key) const {
  if (const double* number = std::get_if<double>(&value_)) return *number;
  const Array& array = std::get<Array>(value_);
  if (!array.defined()) throw ValueError(cat("report: the value of '", key, "' is an undefined array"));
  if (array.size() != 1) {
    throw ShapeError(cat("report: expected a scalar for '", key, "', got an array of shape ", array.shape()));
  }
  return array.item<double>();
}

void report(const std::vector<std::pair<std::string, ReportValue>>& values) {
  if (!reporting()) return;
  Observation& observation = *scope_stack().back();
  for (const auto& [key, value] : values) observation[key] = value.to_double(key);
}

void report_observation(const Observation& values) {
  std::vector<std::pair<std::string, ReportValue>> converted;
  for (const auto& [key, value] : values) converted.emplace_back(key, value);
  report(converted);
}

bool reporting() { return !scope_stack().empty(); }

ReportScope::ReportScope(Observation& observation) { scope_stack().push_back(&observation); }

ReportScope::~ReportScope() { scope_stack().pop_back(); }

}  // namespace kusari

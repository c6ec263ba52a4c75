#include <kusari/autograd/report.h>

#include <kusari/core/error.h>

namespace kusari {
namespace {

// The targets of report() on this thread, innermost last.
std::vector<Observation*>& scope_stack() {
  thread_local std::vector<Observation*> stack;
  return stack;
}

// Throws unless `array` is defined and holds one element.
void check_scalar(const Array& array, const std::string& key) {
  if (!array.defined()) throw ValueError(cat("report: the value of '", key, "' is an undefined array"));
  if (array.size() != 1) {
    throw ShapeError(cat("report: expected a scalar for '", key, "', got an array of shape ", array.shape()));
  }
}

}  // namespace

double ReportValue::to_double(const std::string& key) const {
  if (const double* number = std::get_if<double>(&value_)) return *number;
  const Array& array = std::get<Array>(value_);
  check_scalar(array, key);
  const double number = array.item<double>();
  value_ = number;
  return number;
}

Array ReportValue::on_device() const {
  const Array* array = std::get_if<Array>(&value_);
  return array != nullptr && array->defined() && array->device().type != DeviceType::cpu ? *array : Array();
}

ReportValue ReportValue::recorded(const std::string& key) const {
  const Array* array = std::get_if<Array>(&value_);
  if (array == nullptr) return *this;
  check_scalar(*array, key);
  if (array->device().type == DeviceType::cpu) return array->item<double>();
  return ReportValue(array->reshape({}).copy());
}

void report(const std::vector<std::pair<std::string, ReportValue>>& values) {
  if (!reporting()) return;
  Observation& observation = *scope_stack().back();
  for (const auto& [key, value] : values) observation[key] = value.recorded(key);
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

#include <kusari/training/print_report.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <kusari/training/log_report.h>
#include <kusari/training/trainer.h>

namespace kusari::training {
namespace {

// A value as Python's "{:g}" shows it, except that whole numbers print in full ("1200000", not "1.2e+06").
std::string format_value(double value) {
  char buffer[64];
  if (std::isfinite(value) && value == std::round(value) && std::abs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%g", value);
  }
  return buffer;
}

// `text` left-aligned in a field of `width` characters.
std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

PrintReport::PrintReport(std::vector<std::string> entries, std::string log_report, std::ostream& out)
    : entries_(std::move(entries)), log_report_(std::move(log_report)), out_(&out) {
  for (const std::string& entry : entries_) widths_.push_back(std::max<size_t>(10, entry.size()));
}

void PrintReport::operator()(Trainer& trainer) {
  std::ostream& out = *out_;
  if (!header_printed_) {
    std::string header;
    for (size_t i = 0; i < entries_.size(); ++i) header += (i ? "  " : "") + pad(entries_[i], widths_[i]);
    out << header << '\n';
    header_printed_ = true;
  }
  const std::vector<Observation>& log = trainer.get_extension<LogReport>(log_report_).log();
  for (; printed_ < static_cast<int64_t>(log.size()); ++printed_) {
    const Observation& entry = log[static_cast<size_t>(printed_)];
    std::string line;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const auto it = entry.find(entries_[i]);
      line += pad(it == entry.end() ? "" : format_value(it->second), widths_[i]) + "  ";
    }
    out << line << '\n';
  }
  out.flush();
}

}  // namespace kusari::training

// The profiler's tables (detail/profile.h).

#include <kusari/core/detail/profile.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

namespace kusari::profiler::detail {
namespace {

// Rows of a name → (calls, nanoseconds, bytes) tally over a window of `window_ns`, largest first.
std::vector<Row> rows_of(const std::map<std::string, Row>& tally, double window_ms) {
  std::vector<Row> rows;
  for (const auto& [name, row] : tally) {
    Row r = row;
    r.share = window_ms > 0 ? r.total_ms / window_ms : 0;
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.total_ms > b.total_ms; });
  return rows;
}

double ms(int64_t ns) { return static_cast<double>(ns) * 1e-6; }

// Adds one activity or interval to a row of `tally`.
void add(std::map<std::string, Row>& tally, const std::string& name, int64_t calls, int64_t ns, uint64_t bytes) {
  Row& row = tally[name];
  row.name = name;
  row.calls += calls;
  row.total_ms += ms(ns);
  row.bytes += bytes;
}

// One table as text: a title line, then up to `most` rows.
void print_table(std::string& out, const char* title, const std::vector<Row>& rows, size_t most, bool bytes) {
  char line[256];
  std::snprintf(line, sizeof line, "%-72s %8s %11s %10s %7s%s\n", title, "calls", "total ms", "mean us", "share",
                bytes ? "      GB/s" : "");
  out += line;
  for (size_t i = 0; i < rows.size() && i < most; ++i) {
    const Row& r = rows[i];
    const double mean_us = r.calls > 0 ? r.total_ms * 1e3 / static_cast<double>(r.calls) : 0;
    std::snprintf(line, sizeof line, "  %-70s %8lld %11.3f %10.1f %6.1f%%", display_name(r.name, 70).c_str(),
                  static_cast<long long>(r.calls), r.total_ms, mean_us, 100 * r.share);
    out += line;
    if (bytes) {
      if (r.bytes > 0 && r.total_ms > 0) {
        std::snprintf(line, sizeof line, " %9.1f", static_cast<double>(r.bytes) / (r.total_ms * 1e-3) * 1e-9);
        out += line;
      } else {
        out += "         -";
      }
    }
    out += "\n";
  }
  if (rows.size() > most) out += "  ... " + std::to_string(rows.size() - most) + " more\n";
}

}  // namespace

double covered_fraction(std::vector<std::pair<uint64_t, uint64_t>> intervals, uint64_t start, uint64_t end) {
  if (end <= start) return 0;
  std::sort(intervals.begin(), intervals.end());
  uint64_t covered = 0, reach = start;
  for (auto [a, b] : intervals) {
    a = std::max(a, reach);
    b = std::min(b, end);
    if (b <= a) continue;
    covered += b - a;
    reach = b;
  }
  return static_cast<double>(covered) / static_cast<double>(end - start);
}

Summary summarize(const Recording& recording) {
  Summary s;
  s.host_window_ms = ms(recording.host_end_ns - recording.host_start_ns);
  s.device_window_ms = ms(static_cast<int64_t>(recording.device_end_ns - recording.device_start_ns));
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> spans_by_device;
  std::map<std::string, Row> by_kernel, by_function, host;
  const auto name_of = [&](uint64_t id) {
    return id < recording.names.size() ? recording.names[id] : recording.names[kOutside];
  };
  for (const DeviceActivity& a : recording.device) {
    spans_by_device[a.device].emplace_back(a.start_ns, a.end_ns);
    const auto ns = static_cast<int64_t>(a.end_ns - a.start_ns);
    add(by_kernel, a.name, 1, ns, a.bytes);
    const auto found = recording.attribution_of_launch.find(a.correlation);
    add(by_function, name_of(found == recording.attribution_of_launch.end() ? kOutside : found->second), 1, ns,
        a.bytes);
  }
  for (const auto& [device, spans] : spans_by_device) {
    s.busy_by_device.emplace_back(device,
                                  covered_fraction(spans, recording.device_start_ns, recording.device_end_ns));
  }
  for (const HostInterval& h : recording.host) {
    add(host, name_of(h.attribution), h.entered ? 1 : 0, h.end_ns - h.start_ns, 0);
  }
  s.device_by_kernel = rows_of(by_kernel, s.device_window_ms);
  s.device_by_function = rows_of(by_function, s.device_window_ms);
  s.host_by_function = rows_of(host, s.host_window_ms);
  return s;
}

std::string format(const Summary& summary, size_t rows) {
  char line[256];
  std::snprintf(line, sizeof line, "kusari profile: host window %.3f ms", summary.host_window_ms);
  std::string out = line;
  if (!summary.busy_by_device.empty()) {
    std::snprintf(line, sizeof line, ", device window %.3f ms", summary.device_window_ms);
    out += line;
    for (const auto& [device, busy] : summary.busy_by_device) {
      std::snprintf(line, sizeof line, ", cuda:%d busy %.1f%%", device, 100 * busy);
      out += line;
    }
  }
  out += "\n";
  if (!summary.device_by_kernel.empty()) {
    print_table(out, "GPU time by kernel", summary.device_by_kernel, rows, true);
    print_table(out, "GPU time by kusari function", summary.device_by_function, rows, true);
  }
  print_table(out, "host time by kusari function", summary.host_by_function, rows, false);
  return out;
}

std::string display_name(const std::string& name, size_t most) {
  std::string shown = name;
  int status = 1;
  const std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                        std::free);
  if (status == 0 && demangled) shown = demangled.get();
  if (shown.size() <= most || most < 8) return shown;
  const size_t head = (most - 3) * 2 / 3, tail = most - 3 - head;
  return shown.substr(0, head) + "..." + shown.substr(shown.size() - tail);
}

}  // namespace kusari::profiler::detail

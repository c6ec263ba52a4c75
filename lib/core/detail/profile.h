#pragma once
// Internal to the profiler (core/profiler.h), and plain C++ so that the host suite tests it with
// synthetic records: what one recording holds (the device's kernels, copies and memsets, each tied to
// the kusari function or phase that launched it through the launch's correlation id; the host's time
// under each attribution) and the tables made of it.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kusari::profiler::detail {

// What a device activity record is.
enum class ActivityKind { kernel, memcpy, memset };

// One kernel, copy or memset on a device, in the device's clock (nanoseconds).
struct DeviceActivity {
  ActivityKind kind = ActivityKind::kernel;
  std::string name;  // the kernel's (mangled) name, or "memcpy HtoD", "memset", ...
  uint64_t start_ns = 0, end_ns = 0;
  int device = 0;
  uint32_t stream = 0;
  uint64_t bytes = 0;        // copies and memsets; 0 for kernels
  uint32_t correlation = 0;  // the launch's id, shared with its external-correlation record
};

// Time on one host thread spent under one attribution (steady clock, nanoseconds); `entered` when the
// interval opens a scope (its first interval), so calls count scopes, not the pieces nested ones cut.
struct HostInterval {
  uint32_t attribution = 0;
  int64_t start_ns = 0, end_ns = 0;
  bool entered = false;
};

// The attribution of work outside every scope.
constexpr uint32_t kOutside = 0;

// One recording: attribution names by id (kOutside's first), the host's intervals, the device's
// activities with the attribution of each launch's correlation id, and the window in both clocks.
struct Recording {
  std::vector<std::string> names{"(outside kusari)"};
  std::vector<HostInterval> host;
  std::vector<DeviceActivity> device;
  std::unordered_map<uint32_t, uint64_t> attribution_of_launch;
  int64_t host_start_ns = 0, host_end_ns = 0;
  uint64_t device_start_ns = 0, device_end_ns = 0;  // both 0 without a device tracer
};

// One line of a table.
struct Row {
  std::string name;
  int64_t calls = 0;
  double total_ms = 0;
  double share = 0;  // of the table's window
  uint64_t bytes = 0;
};

// The tables of one recording: each device's busy fraction of the device window (the union of its
// activities' intervals), device time by kernel (copies and memsets by direction) and by kusari
// attribution, host time by attribution; rows by total time, largest first.
struct Summary {
  double host_window_ms = 0;
  double device_window_ms = 0;
  std::vector<std::pair<int, double>> busy_by_device;
  std::vector<Row> device_by_kernel;
  std::vector<Row> device_by_function;
  std::vector<Row> host_by_function;
};

// The fraction of [start, end) covered by the union of `intervals` (each clipped to it); 0 for an
// empty window.
double covered_fraction(std::vector<std::pair<uint64_t, uint64_t>> intervals, uint64_t start, uint64_t end);

// The tables of `recording`.
Summary summarize(const Recording& recording);

// `summary` as text: a header line with the windows and busy fractions, then each table's `rows`
// largest rows (kernel names demangled and shortened).
std::string format(const Summary& summary, size_t rows);

// A kernel's mangled name demangled (itself when it is not a mangled name), shortened to `most`
// characters with an ellipsis in the middle.
std::string display_name(const std::string& name, size_t most);

}  // namespace kusari::profiler::detail

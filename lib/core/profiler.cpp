// The profiler's recording: attribution scopes per thread, the device tracer, and KUSARI_PROFILE.

#include <kusari/core/profiler.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include <kusari/core/detail/device_tracer.h>
#include <kusari/core/timeline.h>

namespace kusari::profiler {
namespace {

using detail::kOutside;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The process's recording, the attribution names (kept across recordings, so that a thread's ids stay
// valid), and the device tracer.
struct Profiler {
  std::mutex mutex;
  detail::Recording current;
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::string> names{detail::Recording{}.names};
  std::atomic<detail::DeviceTracer*> tracer{nullptr};
  std::atomic<detail::DeviceTracer*> tracing{nullptr};  // the tracer while it records, else null

  static Profiler& instance() {
    static Profiler* profiler = new Profiler;  // never destroyed: scopes may end during static destruction
    return *profiler;
  }

  uint32_t intern(const std::string& name) {
    std::lock_guard lock(mutex);
    const auto [it, added] = ids.emplace(name, static_cast<uint32_t>(names.size()));
    if (added) names.push_back(name);
    return it->second;
  }
};

// This thread's attribution, since when it holds it, whether that time opened its scope, and how deep
// in functions the thread is.
struct ThreadState {
  uint32_t attribution = kOutside;
  int64_t since_ns = 0;
  bool entered = false;
  int function_depth = 0;
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// Records the thread's time under its attribution up to `now` (within the recording's window).
void close_interval(ThreadState& t, int64_t now) {
  Profiler& p = Profiler::instance();
  const bool first = t.entered;
  t.entered = false;
  if (t.attribution == kOutside || !active()) return;
  std::lock_guard lock(p.mutex);
  if (!active()) return;  // stopped meanwhile: past the window
  const int64_t start = std::max(t.since_ns, p.current.host_start_ns);
  if (now > start) p.current.host.push_back({t.attribution, start, now, first && start == t.since_ns});
}

// The GPU's work of `recording` as timeline lanes, one per device and stream.
void add_to_timeline(const detail::Recording& recording, int64_t clock_offset_ns) {
  for (const detail::DeviceActivity& a : recording.device) {
    const auto start = std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(static_cast<int64_t>(a.start_ns) - clock_offset_ns));
    timeline::add_device_event(detail::display_name(a.name, 120), start,
                               std::chrono::nanoseconds(static_cast<int64_t>(a.end_ns - a.start_ns)),
                               cat("cuda:", a.device, " stream ", a.stream));
  }
}

// The rank MPI's launcher gives this process, for the report's header (none outside mpiexec).
std::string launcher_rank() {
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK"}) {
    if (const char* value = std::getenv(name); value && *value) return cat("rank ", value, ": ");
  }
  return "";
}

// KUSARI_PROFILE=1: a recording from the library's load, its report on stderr at exit.
bool profiling_from_environment() {
  static const bool on = [] {
    const char* value = std::getenv("KUSARI_PROFILE");
    return value && std::string(value) == "1";
  }();
  return on;
}

// KUSARI_PROFILE's report, once (registered at the library's load and again once a device tracer has
// started, so that it runs before the CUDA runtime and CUPTI tear themselves down at exit).
void report_at_exit() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  try {
    stop();
    std::fprintf(stderr, "%s%s", launcher_rank().c_str(), report().c_str());
    timeline::flush();  // the device lanes stop() added, after the timeline's own flush at exit
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kusari: KUSARI_PROFILE: no report at exit: %s\n", e.what());
  }
}

const bool profile_from_environment = [] {
  if (!profiling_from_environment()) return false;
  start();
  std::atexit(report_at_exit);
  return true;
}();

// Starts `tracer` for the current recording (outside the profiler's lock: it may wait for devices).
void start_tracer(Profiler& p, detail::DeviceTracer* tracer) {
  const uint64_t device_start = tracer->start();
  if (device_start == 0) return;
  {
    std::lock_guard lock(p.mutex);
    p.current.device_start_ns = device_start;
  }
  p.tracing.store(tracer);
  static std::once_flag registered;
  if (profiling_from_environment()) std::call_once(registered, [] { std::atexit(report_at_exit); });
}

}  // namespace

void start() {
  Profiler& p = Profiler::instance();
  if (detail::DeviceTracer* previous = p.tracing.exchange(nullptr)) {
    detail::Recording discarded;  // a recording started again: the old window's records go
    previous->stop(discarded);
  }
  {
    std::lock_guard lock(p.mutex);
    p.current = detail::Recording{};
    p.current.host_start_ns = now_ns();
    detail::in_progress.store(true);
  }
  if (detail::DeviceTracer* tracer = p.tracer.load()) start_tracer(p, tracer);
}

void stop() {
  Profiler& p = Profiler::instance();
  if (!active()) return;
  const int64_t now = now_ns();
  close_interval(thread_state(), now);
  thread_state().since_ns = now;
  detail::DeviceTracer* tracer = p.tracing.exchange(nullptr);
  detail::Recording device;
  const uint64_t device_end = tracer ? tracer->stop(device) : 0;  // outside the lock: it waits for devices
  std::lock_guard lock(p.mutex);
  detail::in_progress.store(false);
  p.current.host_end_ns = now;
  if (!tracer) return;
  p.current.device_end_ns = device_end;
  for (detail::DeviceActivity& a : device.device) p.current.device.push_back(std::move(a));
  p.current.attribution_of_launch.merge(device.attribution_of_launch);
  if (timeline::enabled()) add_to_timeline(p.current, tracer->clock_offset_ns());
}


std::string report(size_t rows) {
  Profiler& p = Profiler::instance();
  std::lock_guard lock(p.mutex);
  detail::Recording copy = p.current;
  copy.names = p.names;
  if (active()) copy.host_end_ns = now_ns();
  return detail::format(detail::summarize(copy), rows);
}

void Scope::begin(ScopeKind kind, const std::string& name) {
  ThreadState& t = thread_state();
  engaged_ = true;
  kind_ = kind;
  if (t.function_depth > 0) {  // inside a function, which keeps the time
    nested_ = true;
    if (kind == ScopeKind::function) ++t.function_depth;
    return;
  }
  Profiler& p = Profiler::instance();
  const uint32_t id = p.intern(name);
  const int64_t now = now_ns();
  close_interval(t, now);
  previous_ = t.attribution;
  t.attribution = id;
  t.since_ns = now;
  t.entered = true;
  if (kind == ScopeKind::function) t.function_depth = 1;
  tracer_ = p.tracing.load();
  if (tracer_) tracer_->push(id);
}

void Scope::end() {
  ThreadState& t = thread_state();
  if (nested_) {
    if (kind_ == ScopeKind::function) --t.function_depth;
    return;
  }
  const int64_t now = now_ns();
  close_interval(t, now);
  t.attribution = previous_;
  t.since_ns = now;
  if (kind_ == ScopeKind::function) t.function_depth = 0;
  if (tracer_) tracer_->pop();
}

namespace detail {

constinit std::atomic<bool> in_progress{false};

void set_device_tracer(DeviceTracer* tracer) {
  Profiler& p = Profiler::instance();
  p.tracer.store(tracer);
  if (tracer && in_progress.load() && !p.tracing.load()) start_tracer(p, tracer);
}

}  // namespace detail

}  // namespace kusari::profiler

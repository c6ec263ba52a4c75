#pragma once
// The profiler (PyTorch's profiler and Chainer's TimerHook, for kusari). Between start() and stop() it
// records where time goes: on a GPU every kernel, copy and memset, through CUPTI's activity API, each
// attributed to the kusari function (its forward or its backward) or phase (update, a bucket's
// all-reduce, data, ...) whose scope launched it; on the host the time each of them held its thread.
// report() gives the tables: each GPU's busy fraction of the window, GPU time by kernel (with GB/s of
// copies and memsets) and by kusari function, host time by kusari function. KUSARI_PROFILE=1 profiles
// the whole process and prints the report at exit (keeping every record of the run: for a long one the
// recipes' --profile N, N iterations after warm-up, keeps a window's). With KUSARI_TIMELINE set too, stop() adds the GPU's work to the Chrome trace as lanes beside
// the host spans. Without a recording a scope costs one read of an atomic flag.

#include <atomic>
#include <cstdint>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/error.h>

namespace kusari::profiler {

namespace detail {
class DeviceTracer;
// Whether a recording is in progress: set by start(), cleared by stop(), read by active().
KUSARI_API extern std::atomic<bool> in_progress;
}  // namespace detail

// Starts a recording (discarding the last one, or the one in progress); the GPU's part when a CUDA
// backend is built and has a device. start(), stop() and report() are called from one thread at a time.
KUSARI_API void start();
// Ends the recording (waiting for the GPUs' queued work to finish first); its tables stay for report().
// Time other threads spend in scopes still open at the stop is not counted.
KUSARI_API void stop();
// Whether a recording is in progress (one relaxed load, inlined into every scope).
inline bool active() { return detail::in_progress.load(std::memory_order_relaxed); }
// The last recording's tables (at most `rows` lines each), or the one in progress up to now.
KUSARI_API std::string report(size_t rows = 25);

// What a scope stands for: a differentiable function's forward or backward (the outermost one on a
// thread takes the time of the functions nested in it), or a phase of training (the innermost one takes
// the time outside functions).
enum class ScopeKind { function, phase };

// Work on this thread attributed to a name, from construction to destruction.
class KUSARI_API Scope {
 public:
  // Named cat(name...), formatted only while a recording is in progress.
  template <class... Parts>
  explicit Scope(ScopeKind kind, const Parts&... name) {
    if (active()) begin(kind, cat(name...));
  }
  ~Scope() {
    if (engaged_) end();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  void begin(ScopeKind kind, const std::string& name);
  void end();
  bool engaged_ = false;
  bool nested_ = false;  // a function inside a function: no attribution of its own
  ScopeKind kind_ = ScopeKind::phase;
  uint32_t previous_ = 0;
  detail::DeviceTracer* tracer_ = nullptr;  // the tracer this scope pushed its attribution to
};

}  // namespace kusari::profiler

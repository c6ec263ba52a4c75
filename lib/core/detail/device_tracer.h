#pragma once
// Internal: what a GPU backend gives the profiler (core/profiler.h), installed by the backend when it
// registers (the CUDA backend's CUPTI collector). Core calls it; it never calls back into core.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/detail/profile.h>

namespace kusari::profiler::detail {

// Records a device's work between start() and stop(), tagging each launch with the attribution pushed
// on the launching thread.
class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  // Starts recording; returns the device clock now (nanoseconds), or 0 when no device can be traced.
  virtual uint64_t start() = 0;
  // Waits for the devices' queued work, stops recording and moves every record into `into` (its
  // activities and the attribution of each launch); returns the device clock at the stop.
  virtual uint64_t stop(Recording& into) = 0;
  // Launches on this thread from now on carry `attribution` (until the matching pop); called only
  // between a start() that returned a clock and its stop(), pops by the scopes that pushed.
  virtual void push(uint64_t attribution) = 0;
  // Undoes this thread's last push.
  virtual void pop() = 0;
  // The device clock minus the host's steady clock (nanoseconds), to place device work on the timeline.
  virtual int64_t clock_offset_ns() = 0;
};

// Installs the tracer the profiler uses (the backend keeps it alive for the process's life); a
// recording in progress starts it at once.
KUSARI_API void set_device_tracer(DeviceTracer* tracer);

}  // namespace kusari::profiler::detail

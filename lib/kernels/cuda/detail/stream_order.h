#pragma once
// Internal to the library: the stream order that lets the multi-node optimizer all-reduce a GPU's
// gradient buckets on the communication stream while backward goes on on the compute stream, in terms
// any layer may use. Every call does nothing for host and loopback devices, and in a build without CUDA.

#include <cstdint>
#include <memory>

#include <kusari/core/array.h>

#include <kusari/core/device.h>

namespace kusari::kernels::cuda {

// A point in the queue of one CUDA stream, passed when its work has run; an empty mark (a host
// device's) has always passed.
struct StreamMark {
  std::shared_ptr<void> event;  // the CUDA event recorded there (destroyed with the last copy)
};

// Marks the work queued so far on the stream this thread queues `device`'s work on.
StreamMark mark_stream(const Device& device);
// Makes the stream this thread queues `device`'s work on wait, on the device, for `mark` (the host does
// not block; the mark may be of another device's stream).
void wait_for(const Device& device, const StreamMark& mark);
// Notes that work this thread queues on `array`'s device uses the array's memory, so that the caching
// allocator does not reuse its block before that work is done, whichever stream it was allocated on
// (torch's record_stream; nothing for host arrays, or when the stream is the block's own).
void mark_used_here(const Array& array);

// While it lives, this thread queues the kernels, copies, library calls and allocations of `device` on
// the device's communication stream instead of its compute stream (scopes nest, for one device or
// several; no effect for host devices). Work queued there runs in order after what it waited for with
// wait_for, and beside the compute stream otherwise.
class CommunicationStreamScope {
 public:
  explicit CommunicationStreamScope(const Device& device);
  ~CommunicationStreamScope();
  CommunicationStreamScope(const CommunicationStreamScope&) = delete;
  CommunicationStreamScope& operator=(const CommunicationStreamScope&) = delete;

 private:
  uint64_t previous_;  // the devices this thread queued on their communication streams before
};

}  // namespace kusari::kernels::cuda

#pragma once
// Internal to the library: the stream order that lets the multi-node optimizer all-reduce a GPU's
// gradient buckets on the communication stream while backward goes on on the compute stream, in terms
// any layer may use. Every call does nothing for host and loopback devices, and in a build without CUDA.

#include <memory>

#include <kusari/core/device.h>

namespace kusari::kernels::cuda {

// A point in the queue of one CUDA stream, passed when its work has run; an empty mark (a host
// device's) has always passed.
struct StreamMark {
  std::shared_ptr<void> event;  // the CUDA event recorded there (destroyed with the last copy)
  int device = -1;
};

// Marks the work queued so far on the stream this thread queues `device`'s work on.
StreamMark mark_stream(const Device& device);
// Makes the stream this thread queues `device`'s work on wait, on the device, for `mark` (the host does
// not block).
void wait_for(const Device& device, const StreamMark& mark);

// While it lives, this thread queues the kernels, copies, library calls and allocations of `device` on
// the device's communication stream instead of its compute stream (scopes nest; no effect for other
// devices). Work queued there runs in order after what it waited for with wait_for, and beside the
// compute stream otherwise.
class CommunicationStreamScope {
 public:
  explicit CommunicationStreamScope(const Device& device);
  ~CommunicationStreamScope();
  CommunicationStreamScope(const CommunicationStreamScope&) = delete;
  CommunicationStreamScope& operator=(const CommunicationStreamScope&) = delete;

 private:
  int previous_;
};

}  // namespace kusari::kernels::cuda

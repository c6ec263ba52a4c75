// The host emulation's streams and events (linked in place of libcudart's by the meson option
// cuda-emulation): each stream a queue of work that runs when the host waits for it, each event the
// latest of its records. A stream waiting for an event runs, when its turn comes, the recording stream's
// work up to that record and no further; a stream or event synchronization runs only what it waits for,
// cudaDeviceSynchronize every stream's work; an event query runs nothing. One lock serialises the device:
// the thread that waits runs the work.

#include <cuda_runtime_api.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <kusari/kernels/cuda/detail/emulated_streams.h>
#include <kusari/kernels/cuda/detail/emulated_threads.h>

namespace {

// A stream's work not yet run, oldest first.
struct EmulatedStream {
  std::deque<std::function<void()>> queued;
};

// One cudaEventRecord: its stream, and whether and when the device reached it.
struct Record {
  EmulatedStream* stream = nullptr;
  bool reached = false;
  std::chrono::steady_clock::time_point at;
};

// An event handle: whether it keeps time, and its latest record (none before the first), which the work
// queued on it shares, so that it outlives a cudaEventDestroy as a GPU's does.
struct EmulatedEvent {
  bool timing = true;
  std::shared_ptr<Record> latest;
};

// The device's streams (the default one first) and the lock under which work is queued and run.
struct Streams {
  std::recursive_mutex mutex;
  std::vector<std::unique_ptr<EmulatedStream>> all;
  bool backwards = false;  // the next finish_device's order
  Streams() { all.push_back(std::make_unique<EmulatedStream>()); }
};

// The process's one device's streams.
Streams& streams() {
  static Streams s;
  return s;
}

// The stream a handle names (nullptr: the default stream).
EmulatedStream& stream_of(cudaStream_t stream) {
  return stream == nullptr ? *streams().all.front() : *reinterpret_cast<EmulatedStream*>(stream);
}

// The event a handle names, or nullptr.
EmulatedEvent* event_of(cudaEvent_t event) { return reinterpret_cast<EmulatedEvent*>(event); }

// Runs `stream`'s work in order until `done` holds or none is left (called with the lock held). Each
// piece leaves the queue before it runs, so a wait inside it never runs it twice.
template <class Done>
void run_until(EmulatedStream& stream, Done done) {
  while (!done() && !stream.queued.empty()) {
    std::function<void()> work = std::move(stream.queued.front());
    stream.queued.pop_front();
    work();
  }
}

// Runs the work up to `record` (called with the lock held).
void reach(Record& record) {
  run_until(*record.stream, [&] { return record.reached; });
}

}  // namespace

namespace kusari::kernels::cuda::emulation {

void enqueue(cudaStream_t stream, std::function<void()> work) {
  const std::lock_guard lock(streams().mutex);
  stream_of(stream).queued.push_back(std::move(work));
}

void finish_stream(cudaStream_t stream) {
  const std::lock_guard lock(streams().mutex);
  run_until(stream_of(stream), [] { return false; });
}

void finish_device() {
  Streams& s = streams();
  const std::lock_guard lock(s.mutex);
  // Streams taken in creation order and its reverse by turns: neither order is one code can lean on.
  const size_t n = s.all.size();
  for (size_t i = 0; i < n; ++i) run_until(*s.all[s.backwards ? n - 1 - i : i], [] { return false; });
  s.backwards = !s.backwards;
}

}  // namespace kusari::kernels::cuda::emulation

using kusari::kernels::cuda::emulation::fail;

cudaError_t cudaDeviceSynchronize() {
  kusari::kernels::cuda::emulation::finish_device();
  return cudaSuccess;
}

// Non-blocking streams only: the emulation's default stream does not synchronize with other streams, as
// the legacy default stream does with blocking ones.
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  if (flags != cudaStreamNonBlocking) return fail(cudaErrorInvalidValue);
  Streams& s = streams();
  const std::lock_guard lock(s.mutex);
  s.all.push_back(std::make_unique<EmulatedStream>());
  *stream = reinterpret_cast<cudaStream_t>(s.all.back().get());
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  kusari::kernels::cuda::emulation::finish_stream(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  EmulatedEvent* e = event_of(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle);
  const std::lock_guard lock(streams().mutex);
  if (!e->latest) return cudaSuccess;  // an event never recorded is complete
  stream_of(stream).queued.push_back([record = e->latest] { reach(*record); });
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  auto* e = new EmulatedEvent;
  e->timing = (flags & cudaEventDisableTiming) == 0;
  *event = reinterpret_cast<cudaEvent_t>(e);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  const std::lock_guard lock(streams().mutex);
  delete event_of(event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  EmulatedEvent* e = event_of(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle);
  const std::lock_guard lock(streams().mutex);
  EmulatedStream& where = stream_of(stream);
  e->latest = std::make_shared<Record>();
  e->latest->stream = &where;
  where.queued.push_back([record = e->latest] {
    record->reached = true;
    record->at = std::chrono::steady_clock::now();
  });
  return cudaSuccess;
}

// Not ready while the latest record's work is queued: a query runs nothing, so the host sees the device
// done only where it waited for it.
cudaError_t cudaEventQuery(cudaEvent_t event) {
  EmulatedEvent* e = event_of(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle);
  const std::lock_guard lock(streams().mutex);
  return !e->latest || e->latest->reached ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  EmulatedEvent* e = event_of(event);
  if (e == nullptr) return fail(cudaErrorInvalidResourceHandle);
  const std::lock_guard lock(streams().mutex);
  if (e->latest) reach(*e->latest);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* milliseconds, cudaEvent_t start, cudaEvent_t end) {
  const EmulatedEvent *a = event_of(start), *b = event_of(end);
  const std::lock_guard lock(streams().mutex);
  if (a == nullptr || b == nullptr || !a->timing || !b->timing || !a->latest || !b->latest) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  if (!a->latest->reached || !b->latest->reached) return cudaErrorNotReady;
  *milliseconds = std::chrono::duration<float, std::milli>(b->latest->at - a->latest->at).count();
  return cudaSuccess;
}

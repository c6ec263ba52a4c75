// The host emulation's streams and events (linked in place of libcudart's by the meson option
// cuda-emulation): each stream a queue of work that runs when the host waits for it, each event a count
// of the records queued and of those the device has reached. A stream waiting for an event runs, when
// its turn comes, the recording stream's work up to that record and no further; nothing else runs
// another stream's work. One lock serialises the device: the thread that waits runs the work.

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
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

// What an event knows: how many records were queued, the latest one's stream, how far the device got.
struct EventState {
  bool timing = true;
  uint64_t recorded = 0;                 // records queued
  uint64_t reached = 0;                  // the latest record the device has run
  EmulatedStream* stream = nullptr;      // where the latest record was queued
  std::chrono::steady_clock::time_point at;  // when the device reached it
};

// An event handle: its state is shared with the records and waits queued on it, which outlive a
// cudaEventDestroy as a GPU's do.
struct EmulatedEvent {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

// The device's streams (the default one first) and the lock under which work is queued and run.
struct Streams {
  std::recursive_mutex mutex;
  std::vector<std::unique_ptr<EmulatedStream>> all;
  bool backwards = false;  // the next finish_device's order
  Streams() { all.push_back(std::make_unique<EmulatedStream>()); }
};

Streams& streams() {
  static Streams s;
  return s;
}

EmulatedStream& stream_of(cudaStream_t stream) {
  return stream == nullptr ? *streams().all.front() : *reinterpret_cast<EmulatedStream*>(stream);
}

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

// Runs the work up to `event`'s latest record (called with the lock held); false where there was some.
bool reach(EventState& event) {
  if (event.reached >= event.recorded) return true;
  const uint64_t wanted = event.recorded;
  run_until(*event.stream, [&] { return event.reached >= wanted; });
  return false;
}

EventState* state_of(cudaEvent_t event) {
  return event == nullptr ? nullptr : reinterpret_cast<EmulatedEvent*>(event)->state.get();
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

using kusari::kernels::cuda::emulation::set_last_error;

cudaError_t cudaDeviceSynchronize() {
  kusari::kernels::cuda::emulation::finish_device();
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
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
  EventState* state = state_of(event);
  if (state == nullptr) {
    set_last_error(cudaErrorInvalidResourceHandle);
    return cudaErrorInvalidResourceHandle;
  }
  const std::lock_guard lock(streams().mutex);
  if (state->recorded == 0) return cudaSuccess;  // an event never recorded is complete
  const uint64_t wanted = state->recorded;
  std::shared_ptr<EventState> shared = reinterpret_cast<EmulatedEvent*>(event)->state;
  EmulatedStream* recording = state->stream;
  stream_of(stream).queued.push_back([shared, wanted, recording] {
    run_until(*recording, [&] { return shared->reached >= wanted; });
  });
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  auto* e = new EmulatedEvent;
  e->state->timing = (flags & cudaEventDisableTiming) == 0;
  *event = reinterpret_cast<cudaEvent_t>(e);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  const std::lock_guard lock(streams().mutex);
  delete reinterpret_cast<EmulatedEvent*>(event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  EventState* state = state_of(event);
  if (state == nullptr) {
    set_last_error(cudaErrorInvalidResourceHandle);
    return cudaErrorInvalidResourceHandle;
  }
  const std::lock_guard lock(streams().mutex);
  const uint64_t record = ++state->recorded;
  EmulatedStream& where = stream_of(stream);
  state->stream = &where;
  std::shared_ptr<EventState> shared = reinterpret_cast<EmulatedEvent*>(event)->state;
  where.queued.push_back([shared, record] {
    // An earlier record on another stream reached later leaves the event at its latest.
    if (record <= shared->reached) return;
    shared->reached = record;
    shared->at = std::chrono::steady_clock::now();
  });
  return cudaSuccess;
}

// Not ready while the latest record's work is queued; that work then runs, as a GPU goes on with it, so
// that a host polling the event sees it complete at its next query.
cudaError_t cudaEventQuery(cudaEvent_t event) {
  EventState* state = state_of(event);
  if (state == nullptr) {
    set_last_error(cudaErrorInvalidResourceHandle);
    return cudaErrorInvalidResourceHandle;
  }
  const std::lock_guard lock(streams().mutex);
  return reach(*state) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  EventState* state = state_of(event);
  if (state == nullptr) {
    set_last_error(cudaErrorInvalidResourceHandle);
    return cudaErrorInvalidResourceHandle;
  }
  const std::lock_guard lock(streams().mutex);
  reach(*state);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* milliseconds, cudaEvent_t start, cudaEvent_t end) {
  const EventState *a = state_of(start), *b = state_of(end);
  const std::lock_guard lock(streams().mutex);
  if (a == nullptr || b == nullptr || !a->timing || !b->timing || a->recorded == 0 || b->recorded == 0) {
    set_last_error(cudaErrorInvalidResourceHandle);
    return cudaErrorInvalidResourceHandle;
  }
  if (a->reached < a->recorded || b->reached < b->recorded) return cudaErrorNotReady;
  *milliseconds = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return cudaSuccess;
}

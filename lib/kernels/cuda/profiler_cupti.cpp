// The profiler's device tracer for CUDA (core/detail/device_tracer.h) through CUPTI's activity API:
// kernels, copies and memsets with their device timestamps, and external correlations carrying the
// attribution each launching thread had pushed. libcupti is loaded when a recording first starts
// (the toolkit's, or the nvidia wheels' on LD_LIBRARY_PATH), so libkusari does not need it otherwise;
// without it a recording has the host's tables only, and says why once.

#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <kusari/core/detail/device_tracer.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/cupti_records.h>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/detail/runtime_library.h>
#include <kusari/kernels/cuda/detail/streams.h>
#include <kusari/kernels/cuda/runtime.h>

namespace kusari::kernels::cuda {
namespace {

// The activity kinds a recording enables. CUPTI writes an external correlation only beside the record
// of the runtime or driver call that launched the work (cuDNN, cuBLAS and NCCL launch through the
// driver), so both API kinds are on, their own records left out by add_record.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER};

// Bytes of each activity buffer CUPTI fills (and its alignment).
constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kBufferAlignment = 8;

// The CUPTI functions the tracer calls, from libcupti loaded at run time.
struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiGetVersion) version = nullptr;
  std::string missing;  // why it could not be loaded ("" when it was)
};

// libcupti's functions, loaded on first use (never unloaded or destroyed: the report at exit uses them):
// the major version kusari was built against, whose record layouts add_record reads.
const Cupti& cupti() {
  static const Cupti* loaded = [] {
    auto* c = new Cupti;
    detail::RuntimeLibrary library = detail::open_runtime_library({"libcupti.so.13", "libcupti.so"});
    library.resolve("cuptiGetVersion", c->version);
    uint32_t version = 0;
    if (c->version && c->version(&version) == CUPTI_SUCCESS && version / 10000 != CUPTI_API_VERSION / 10000) {
      c->missing = cat(library.name, "'s API version is ", version, ", kusari reads ", CUPTI_API_VERSION / 10000,
                       "xxxx records");
      return c;
    }
    library.resolve("cuptiActivityRegisterCallbacks", c->register_callbacks);
    library.resolve("cuptiActivityEnable", c->enable);
    library.resolve("cuptiActivityDisable", c->disable);
    library.resolve("cuptiActivityFlushAll", c->flush_all);
    library.resolve("cuptiActivityGetNextRecord", c->next_record);
    library.resolve("cuptiActivityPushExternalCorrelationId", c->push);
    library.resolve("cuptiActivityPopExternalCorrelationId", c->pop);
    library.resolve("cuptiGetTimestamp", c->timestamp);
    library.resolve("cuptiGetResultString", c->result_string);
    c->missing = library.missing;
    return c;
  }();
  return *loaded;
}

// Throws DeviceError "<what>: <CUPTI's message>" unless status is CUPTI_SUCCESS.
void check_cupti(CUptiResult status, const char* what) {
  if (status == CUPTI_SUCCESS) return;
  const char* message = nullptr;
  cupti().result_string(status, &message);
  throw DeviceError(cat(what, ": ", message ? message : "unknown CUPTI error"));
}

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The records of completed buffers, gathered until stop() takes them.
struct Completed {
  std::mutex mutex;
  profiler::detail::Recording records;
};

Completed& completed() {
  static Completed* c = new Completed;  // never destroyed: CUPTI may deliver a buffer at exit
  return *c;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Completed& c = completed();
  {
    std::lock_guard lock(c.mutex);
    CUpti_Activity* record = nullptr;
    while (cupti().next_record(buffer, valid, &record) == CUPTI_SUCCESS) add_record(*record, c.records);
  }
  std::free(buffer);
}

class CuptiTracer final : public profiler::detail::DeviceTracer {
 public:
  // A failure (another CUPTI subscriber, a driver without activity support) leaves the host's tables
  // and one line saying why.
  uint64_t start() override {
    if (kusari::cuda::device_count() == 0) return 0;
    std::string why = cupti().missing;
    if (why.empty()) {
      try {
        std::call_once(registered_, [] {
          check_cupti(cupti().register_callbacks(buffer_requested, buffer_completed),
                      "cuptiActivityRegisterCallbacks");
        });
        cupti().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // an earlier window's records, dropped below
        {
          std::lock_guard lock(completed().mutex);
          completed().records = profiler::detail::Recording{};
        }
        for (const CUpti_ActivityKind kind : kKinds) check_cupti(cupti().enable(kind), "cuptiActivityEnable");
        return now();
      } catch (const Error& e) {
        for (const CUpti_ActivityKind kind : kKinds) cupti().disable(kind);
        why = e.what();
      }
    }
    std::call_once(warned_, [&why] { std::fprintf(stderr, "kusari: profiler: no GPU trace (%s)\n", why.c_str()); });
    return 0;
  }

  uint64_t stop(profiler::detail::Recording& into) override {
    // The queued work of every device this process used first, so that its records exist; a device
    // already torn down (at exit) is passed.
    int current = 0;
    const bool restore = cudaGetDevice(&current) == cudaSuccess;
    for (int index = 0; index < kusari::cuda::device_count(); ++index) {
      if (has_streams(index) && cudaSetDevice(index) == cudaSuccess) cudaDeviceSynchronize();
    }
    if (restore) cudaSetDevice(current);
    cudaGetLastError();
    uint64_t end = 0;
    if (cupti().timestamp(&end) != CUPTI_SUCCESS) end = 0;
    const bool clock_gone = end == 0;
    cupti().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (const CUpti_ActivityKind kind : kKinds) cupti().disable(kind);
    Completed& c = completed();
    std::lock_guard lock(c.mutex);
    for (profiler::detail::DeviceActivity& a : c.records.device) {
      if (clock_gone) end = std::max(end, a.end_ns);  // CUPTI's clock gone (at exit): the last record's end
      into.device.push_back(std::move(a));
    }
    into.attribution_of_launch.merge(c.records.attribution_of_launch);
    c.records = profiler::detail::Recording{};
    return end;
  }

  void push(uint64_t attribution) override { cupti().push(kAttributionKind, attribution); }

  void pop() override {
    uint64_t last = 0;
    cupti().pop(kAttributionKind, &last);
  }

  int64_t clock_offset_ns() override { return offset_ns_; }

 private:
  // CUPTI's clock now, noting its offset from the host's steady clock.
  uint64_t now() {
    uint64_t timestamp = 0;
    check_cupti(cupti().timestamp(&timestamp), "cuptiGetTimestamp");
    offset_ns_ = static_cast<int64_t>(timestamp) - steady_now_ns();
    return timestamp;
  }

  std::once_flag registered_, warned_;
  int64_t offset_ns_ = 0;
};

}  // namespace

void register_profiler_tracer() {
  static CuptiTracer* tracer = new CuptiTracer;  // never destroyed: KUSARI_PROFILE's report runs at exit
  profiler::detail::set_device_tracer(tracer);
}

}  // namespace kusari::kernels::cuda

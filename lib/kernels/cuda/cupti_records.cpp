// CUPTI's activity records as the profiler's (detail/cupti_records.h).

#include <kusari/kernels/cuda/detail/cupti_records.h>

namespace kusari::kernels::cuda {

std::string copy_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

namespace {

// Whether a record's interval is complete (a forced flush can hand over work still running, with no end).
bool complete(uint64_t start, uint64_t end) { return end != 0 && end >= start; }

}  // namespace

void add_record(const CUpti_Activity& record, profiler::detail::Recording& into) {
  using profiler::detail::ActivityKind;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      if (!complete(k.start, k.end)) break;
      into.device.push_back({ActivityKind::kernel, k.name ? k.name : "(unnamed kernel)", k.start, k.end,
                             static_cast<int>(k.deviceId), k.streamId, 0, k.correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      if (!complete(m.start, m.end)) break;
      into.device.push_back({ActivityKind::memcpy, copy_name(m.copyKind), m.start, m.end,
                             static_cast<int>(m.deviceId), m.streamId, m.bytes, m.correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      if (!complete(m.start, m.end)) break;
      into.device.push_back({ActivityKind::memset, "memset", m.start, m.end, static_cast<int>(m.deviceId),
                             m.streamId, m.bytes, m.correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& c = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
      if (c.externalKind == kAttributionKind) into.attribution_of_launch[c.correlationId] = c.externalId;
      break;
    }
    default:
      break;
  }
}

}  // namespace kusari::kernels::cuda

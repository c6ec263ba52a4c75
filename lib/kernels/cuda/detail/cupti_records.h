#pragma once
// Internal to the CUDA backend, compiled in every CUDA build and tested on the host with synthetic
// records: CUPTI's activity records turned into the profiler's plain ones (core/detail/profile.h).

#include <cupti_activity.h>

#include <cstdint>
#include <string>

#include <kusari/core/detail/profile.h>

namespace kusari::kernels::cuda {

// The external-correlation kind kusari's attributions are pushed as.
constexpr CUpti_ExternalCorrelationKind kAttributionKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

// Adds what `record` says to `into`: a kernel (concurrent or serial), copy or memset with a complete
// interval as an activity, an external correlation of kAttributionKind as the attribution of its
// launch; any other record (API calls, work still running at a forced flush) is left out.
void add_record(const CUpti_Activity& record, profiler::detail::Recording& into);

// A copy's name by CUPTI's copy kind: "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy HtoH",
// "memcpy PtoP", or "memcpy" for the others.
std::string copy_name(uint8_t copy_kind);

}  // namespace kusari::kernels::cuda

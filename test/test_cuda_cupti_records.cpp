// The CUDA profiler's reading of CUPTI's activity records (detail/cupti_records.h), on synthetic
// records built here (a CUDA build's host suite; no GPU needed): kernels, copies and memsets become
// activities with their clocks, devices, streams, bytes and correlation ids; external correlations of
// kusari's kind attribute their launches and others are left out; the tables then follow.

#include <doctest/doctest.h>

#include <cstring>

#include <kusari/kernels/cuda/detail/cupti_records.h>

using namespace kusari;
using namespace kusari::kernels::cuda;
using namespace kusari::profiler::detail;

namespace {

// A zeroed CUPTI record of type T and kind `kind`.
template <class T>
T record_of(CUpti_ActivityKind kind) {
  T r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}

const CUpti_Activity& as_activity(const void* record) { return *static_cast<const CUpti_Activity*>(record); }

}  // namespace

TEST_CASE("kernels, copies and memsets become activities; kusari's correlations attribute their launches") {
  Recording r;
  r.names = {"(outside kusari)", "BatchNormalization backward"};
  auto kernel = record_of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kernel.name = "_Z13channel_sumsPKfPdi";
  kernel.start = 5'000;
  kernel.end = 9'000;
  kernel.deviceId = 0;
  kernel.streamId = 13;
  kernel.correlationId = 41;
  add_record(as_activity(&kernel), r);
  auto copy = record_of<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  copy.bytes = 4096;
  copy.start = 10'000;
  copy.end = 12'000;
  copy.deviceId = 1;
  copy.streamId = 14;
  copy.correlationId = 42;
  add_record(as_activity(&copy), r);
  auto memset = record_of<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  memset.bytes = 512;
  memset.start = 1'000;
  memset.end = 2'000;
  memset.correlationId = 43;
  add_record(as_activity(&memset), r);
  auto ours = record_of<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ours.externalKind = kAttributionKind;
  ours.externalId = 1;
  ours.correlationId = 41;
  add_record(as_activity(&ours), r);
  auto theirs = record_of<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  theirs.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC;
  theirs.externalId = 99;
  theirs.correlationId = 42;
  add_record(as_activity(&theirs), r);
  auto other = record_of<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  add_record(as_activity(&other), r);  // a kind the profiler does not read

  REQUIRE(r.device.size() == 3);
  const DeviceActivity& k = r.device[0];
  CHECK(k.kind == ActivityKind::kernel);
  CHECK(k.name == "_Z13channel_sumsPKfPdi");
  CHECK(k.start_ns == 5'000);
  CHECK(k.end_ns == 9'000);
  CHECK(k.stream == 13);
  CHECK(k.correlation == 41);
  const DeviceActivity& c = r.device[1];
  CHECK(c.kind == ActivityKind::memcpy);
  CHECK(c.name == "memcpy DtoH");
  CHECK(c.bytes == 4096);
  CHECK(c.device == 1);
  CHECK(r.device[2].kind == ActivityKind::memset);
  CHECK(r.device[2].bytes == 512);
  REQUIRE(r.attribution_of_launch.size() == 1);  // the OpenACC correlation is not kusari's
  CHECK(r.attribution_of_launch.at(41) == 1);

  r.device_start_ns = 0;
  r.device_end_ns = 20'000;
  const Summary s = summarize(r);
  CHECK(s.device_by_function.front().name == "BatchNormalization backward");
  CHECK(s.device_by_function.front().total_ms == doctest::Approx(0.004));
  CHECK(s.busy_by_device.size() == 2);
}

TEST_CASE("copies are named by direction") {
  CHECK(copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) == "memcpy HtoD");
  CHECK(copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) == "memcpy DtoD");
  CHECK(copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) == "memcpy PtoP");
  CHECK(copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN) == "memcpy");
}

TEST_CASE("work still running at a forced flush (no end, or an end before its start) is left out") {
  Recording r;
  auto running = record_of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  running.name = "k";
  running.start = 5'000;
  add_record(as_activity(&running), r);
  auto copy = record_of<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  copy.start = 9'000;
  copy.end = 8'000;
  add_record(as_activity(&copy), r);
  auto api = record_of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_DRIVER);  // an API call's record
  add_record(as_activity(&api), r);
  CHECK(r.device.empty());
}

// A device's memory mapped into reserved addresses through the driver's virtual memory calls.

#include <kusari/kernels/cuda/detail/mapped_memory.h>

#include <cuda.h>

#include <array>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include <kusari/core/detail/environment_switch.h>
#include <kusari/kernels/cuda/detail/check.h>

namespace kusari::kernels::cuda {
namespace {

// The driver calls mapped memory makes.
struct DriverCalls {
  decltype(&::cuGetErrorName) error_name = nullptr;
  decltype(&::cuDeviceGet) device = nullptr;
  decltype(&::cuDeviceGetAttribute) attribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
};

// Sets `call` to the driver's function `name` (its ABI of CUDA 12.0); false where the driver has none.
template <class F>
bool load(const char* name, F& call) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || function == nullptr) {
    cudaGetLastError();
    return false;
  }
  call = reinterpret_cast<F>(function);
  return true;
}

// The driver's calls, loaded once; null where any is missing.
const DriverCalls* driver() {
  static const std::optional<DriverCalls> calls = []() -> std::optional<DriverCalls> {
    DriverCalls c;
    const bool all = load("cuGetErrorName", c.error_name) && load("cuDeviceGet", c.device) &&
                     load("cuDeviceGetAttribute", c.attribute) &&
                     load("cuMemGetAllocationGranularity", c.granularity) && load("cuMemAddressReserve", c.reserve) &&
                     load("cuMemCreate", c.create) && load("cuMemMap", c.map) && load("cuMemSetAccess", c.set_access) &&
                     load("cuMemUnmap", c.unmap) && load("cuMemRelease", c.release);
    return all ? std::optional<DriverCalls>(c) : std::nullopt;
  }();
  return calls ? &*calls : nullptr;
}

// The driver's name of `status`, or its number.
std::string status_name(CUresult status) {
  const char* name = nullptr;
  if (driver()->error_name(status, &name) == CUDA_SUCCESS && name) return name;
  return cat("CUresult ", static_cast<int>(status));
}

// Throws DeviceError "<what>: <the status's name>" unless status is CUDA_SUCCESS.
void check_driver(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS) throw DeviceError(cat(what, ": ", status_name(status)));
}

// Pinned memory of device `index`, no handle to share it with another process.
CUmemAllocationProp device_memory(int index) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = index;
  return p;
}

CUdeviceptr address(const char* at) { return reinterpret_cast<CUdeviceptr>(at); }

// Says once a device on stderr why its large blocks get device allocations of their own.
void say_unavailable(int index, const std::string& why) {
  static std::array<std::once_flag, kMaxDevices> said;
  std::call_once(said[static_cast<size_t>(index)], [&] {
    std::fprintf(stderr, "kusari: cuda:%d: no expandable segments (%s); each large block takes a device allocation\n",
                 index, why.c_str());
  });
}

// What map_memory did: the driver's status, the call that gave it, and the new memory's handle.
struct Mapping {
  CUresult status;
  const char* call;
  CUmemGenericAllocationHandle handle;
};

// Maps `bytes` of new memory of device `index` at `at` and grants the device access; on a failure, what
// it made is undone (as far as the driver lets it).
Mapping map_memory(const DriverCalls& d, int index, char* at, size_t bytes) {
  const CUmemAllocationProp memory = device_memory(index);
  CUmemGenericAllocationHandle handle = 0;
  if (const CUresult s = d.create(&handle, bytes, &memory, 0); s != CUDA_SUCCESS) return {s, "cuMemCreate", 0};
  if (const CUresult s = d.map(address(at), bytes, 0, handle, 0); s != CUDA_SUCCESS) {
    d.release(handle);
    return {s, "cuMemMap", 0};
  }
  CUmemAccessDesc access{};
  access.location = memory.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (const CUresult s = d.set_access(address(at), bytes, &access, 1); s != CUDA_SUCCESS) {
    d.unmap(address(at), bytes);  // already failing: the cleanup's own status is not news
    d.release(handle);
    return {s, "cuMemSetAccess", 0};
  }
  return {CUDA_SUCCESS, "", handle};
}

// Addresses for device `index`'s whole memory, or why there are none.
std::variant<Reservation, std::string> reserve_addresses(const DriverCalls& d, int index) {
  CUdevice device = 0;
  int supported = 0;
  if (const CUresult s = d.device(&device, index); s != CUDA_SUCCESS) return "cuDeviceGet: " + status_name(s);
  if (const CUresult s = d.attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device);
      s != CUDA_SUCCESS) {
    return "cuDeviceGetAttribute: " + status_name(s);
  }
  if (!supported) return std::string("the device does not map memory into reserved addresses");
  const CUmemAllocationProp memory = device_memory(index);
  size_t granularity = 0, free = 0, total = 0;
  if (const CUresult s = d.granularity(&granularity, &memory, CU_MEM_ALLOC_GRANULARITY_MINIMUM); s != CUDA_SUCCESS) {
    return "cuMemGetAllocationGranularity: " + status_name(s);
  }
  if (const cudaError_t s = cudaMemGetInfo(&free, &total); s != cudaSuccess) {
    cudaGetLastError();
    return cat("cudaMemGetInfo: ", cudaGetErrorName(s));
  }
  const size_t bytes = (total + granularity - 1) / granularity * granularity;
  CUdeviceptr base = 0;
  if (const CUresult s = d.reserve(&base, bytes, granularity, 0, 0); s != CUDA_SUCCESS) {
    return cat("cuMemAddressReserve of ", bytes, " bytes: ", status_name(s));
  }
  // One granule mapped and unmapped first, so that a platform that reserves but cannot map (or grant
  // access) falls back here rather than failing every large allocation later.
  auto* first = reinterpret_cast<char*>(base);
  const Mapping probe = map_memory(d, index, first, granularity);
  if (probe.status != CUDA_SUCCESS) return cat(probe.call, " of one granule: ", status_name(probe.status));
  const CUresult unmapped = d.unmap(base, granularity);
  const CUresult released = d.release(probe.handle);
  if (unmapped != CUDA_SUCCESS || released != CUDA_SUCCESS) {
    return cat("cuMemUnmap and cuMemRelease of one granule: ", status_name(unmapped), ", ", status_name(released));
  }
  return Reservation{first, bytes, granularity};
}

}  // namespace

Reservation MappedMemory::reserve() {
  if (!kusari::detail::environment_switch("KUSARI_CUDA_EXPANDABLE", true)) return {};
  const DriverCalls* d = driver();
  if (!d) {
    say_unavailable(index_, "the driver has no virtual memory calls");
    return {};
  }
  DeviceGuard guard(index_);
  check(cudaFree(nullptr), "cudaFree (the device's context)");
  auto reserved = reserve_addresses(*d, index_);
  if (const auto* why = std::get_if<std::string>(&reserved)) {
    say_unavailable(index_, *why);
    return {};
  }
  return std::get<Reservation>(reserved);
}

bool MappedMemory::map(char* at, size_t bytes) {
  const DriverCalls* d = driver();
  DeviceGuard guard(index_);
  const auto [status, call, handle] = map_memory(*d, index_, at, bytes);
  if (status == CUDA_ERROR_OUT_OF_MEMORY) return false;
  check_driver(status, call);
  handles_[at] = handle;
  return true;
}

void MappedMemory::unmap(char* at, size_t bytes) {
  const DriverCalls* d = driver();
  DeviceGuard guard(index_);
  // As cudaFree does: queued work may still read or write the memory.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before cuMemUnmap)");
  const auto it = handles_.find(at);
  if (it == handles_.end()) throw ValueError(cat("cuMemUnmap: cuda:", index_, " mapped nothing at that address"));
  check_driver(d->unmap(address(at), bytes), "cuMemUnmap");
  const CUmemGenericAllocationHandle handle = it->second;
  handles_.erase(it);
  // Unmapped, the addresses are free again whatever comes next: a handle the driver does not take back
  // is said and left, not thrown, so that the cache's records stay true.
  if (const CUresult released = d->release(handle); released != CUDA_SUCCESS) {
    std::fprintf(stderr, "kusari: cuda:%d: cuMemRelease after cuMemUnmap: %s (%zu bytes left with the driver)\n",
                 index_, status_name(released).c_str(), bytes);
  }
}

}  // namespace kusari::kernels::cuda

// The driver's virtual memory calls as the emulated device answers them, handed out by
// cudaGetDriverEntryPointByVersion: addresses reserved as host pages no one may touch, memory handles
// counted against the device's memory, a handle's memory mapped as fresh host pages (and listed as the
// device's, one run with what is mapped beside it) that may be read and written once cuMemSetAccess says
// so, unmapped back to untouchable pages. The unmap does
// not wait for the device, as the driver's does not: a kernel or copy still queued on the memory stops
// the process where it touches it.

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include <kusari/kernels/cuda/detail/emulated_memory.h>

namespace {

namespace emulation = kusari::kernels::cuda::emulation;

// The unit of mapping: the granularity a GPU's driver gives.
constexpr size_t kGranularity = size_t{2} << 20;

// The reservations (first byte to size), the live handles (to their bytes) and what is mapped where (the
// first byte to its bytes and handle).
struct Mappings {
  std::mutex mutex;
  std::map<uintptr_t, size_t> reserved;
  std::map<CUmemGenericAllocationHandle, size_t> handles;
  std::map<uintptr_t, std::pair<size_t, CUmemGenericAllocationHandle>> mapped;
  CUmemGenericAllocationHandle next_handle = 1;
};

Mappings& mappings() {
  static Mappings m;
  return m;
}

// Whether [at, at + bytes) lies in one reservation.
bool reserved(const Mappings& m, uintptr_t at, size_t bytes) {
  auto it = m.reserved.upper_bound(at);
  if (it == m.reserved.begin()) return false;
  --it;
  return at + bytes <= it->first + it->second;
}

// Whether any of [at, at + bytes) is mapped.
bool overlaps_mapped(const Mappings& m, uintptr_t at, size_t bytes) {
  auto it = m.mapped.lower_bound(at + bytes);
  if (it == m.mapped.begin()) return false;
  --it;
  return it->first + it->second.first > at;
}

CUresult error_name(CUresult status, const char** name) {
  switch (status) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
    default: *name = "CUDA_ERROR_UNKNOWN"; break;
  }
  return CUDA_SUCCESS;
}

CUresult device_get(CUdevice* device, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

// The device maps memory into reserved addresses unless KUSARI_EMULATED_DRIVER_VMM=0 says it is one that
// does not (so that the allocator's fallback runs in the suite).
CUresult device_attribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (attribute != CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) return CUDA_ERROR_INVALID_VALUE;
  const char* setting = std::getenv("KUSARI_EMULATED_DRIVER_VMM");
  *value = setting && std::string_view(setting) == "0" ? 0 : 1;
  return CUDA_SUCCESS;
}

CUresult granularity(size_t* bytes, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags) {
  if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = kGranularity;
  return CUDA_SUCCESS;
}

CUresult address_reserve(CUdeviceptr* pointer, size_t size, size_t alignment, CUdeviceptr wanted,
                         unsigned long long flags) {
  if (size == 0 || size % kGranularity != 0 || alignment % kGranularity != 0 || wanted != 0 || flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // A granularity more than asked, so that the first byte can be put on a multiple of it.
  void* pages = mmap(nullptr, size + kGranularity, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (pages == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const uintptr_t first = (reinterpret_cast<uintptr_t>(pages) + kGranularity - 1) / kGranularity * kGranularity;
  Mappings& m = mappings();
  const std::lock_guard lock(m.mutex);
  m.reserved[first] = size;
  *pointer = first;
  return CUDA_SUCCESS;
}

CUresult create(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                unsigned long long flags) {
  if (size == 0 || size % kGranularity != 0 || flags != 0 || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
  if (!emulation::claim_device_bytes(size)) return CUDA_ERROR_OUT_OF_MEMORY;
  Mappings& m = mappings();
  const std::lock_guard lock(m.mutex);
  *handle = m.next_handle++;
  m.handles[*handle] = size;
  return CUDA_SUCCESS;
}

CUresult map(CUdeviceptr pointer, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
             unsigned long long flags) {
  Mappings& m = mappings();
  const std::lock_guard lock(m.mutex);
  const auto h = m.handles.find(handle);
  if (h == m.handles.end() || h->second != size || offset != 0 || flags != 0 || pointer % kGranularity != 0 ||
      !reserved(m, pointer, size) || overlaps_mapped(m, pointer, size)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Fresh pages, untouchable until cuMemSetAccess grants the device access, as the driver's are.
  void* at = reinterpret_cast<void*>(pointer);
  if (mmap(at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m.mapped[pointer] = {size, handle};
  emulation::list_mapped(static_cast<const char*>(at), size);
  return CUDA_SUCCESS;
}

CUresult set_access(CUdeviceptr pointer, size_t size, const CUmemAccessDesc* access, size_t count) {
  Mappings& m = mappings();
  const std::lock_guard lock(m.mutex);
  const auto it = m.mapped.find(pointer);
  if (it == m.mapped.end() || it->second.first != size || count != 1 ||
      access->location.type != CU_MEM_LOCATION_TYPE_DEVICE || access->location.id != 0 ||
      access->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return mprotect(reinterpret_cast<void*>(pointer), size, PROT_READ | PROT_WRITE) == 0 ? CUDA_SUCCESS
                                                                                      : CUDA_ERROR_UNKNOWN;
}

CUresult unmap(CUdeviceptr pointer, size_t size) {
  Mappings& m = mappings();
  const std::lock_guard lock(m.mutex);
  const auto it = m.mapped.find(pointer);
  if (it == m.mapped.end() || it->second.first != size) return CUDA_ERROR_INVALID_VALUE;
  void* at = reinterpret_cast<void*>(pointer);
  if (mmap(at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED) {
    return CUDA_ERROR_UNKNOWN;
  }
  emulation::unlist_mapped(static_cast<const char*>(at), size);
  m.mapped.erase(it);
  return CUDA_SUCCESS;
}

// A handle's memory goes back to the device. The driver also takes a handle still mapped (its memory then
// goes back at the unmap); kusari unmaps first, and the emulation holds it to that order.
CUresult release(CUmemGenericAllocationHandle handle) {
  Mappings& m = mappings();
  const std::lock_guard lock(m.mutex);
  const auto h = m.handles.find(handle);
  if (h == m.handles.end()) return CUDA_ERROR_INVALID_VALUE;
  for (const auto& [at, use] : m.mapped) {
    if (use.second == handle) return CUDA_ERROR_INVALID_VALUE;
  }
  emulation::return_device_bytes(h->second);
  m.handles.erase(h);
  return CUDA_SUCCESS;
}

}  // namespace

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int, unsigned long long,
                                             cudaDriverEntryPointQueryResult* found) {
  static const std::map<std::string_view, void*> calls = {
      {"cuGetErrorName", reinterpret_cast<void*>(&error_name)},
      {"cuDeviceGet", reinterpret_cast<void*>(&device_get)},
      {"cuDeviceGetAttribute", reinterpret_cast<void*>(&device_attribute)},
      {"cuMemGetAllocationGranularity", reinterpret_cast<void*>(&granularity)},
      {"cuMemAddressReserve", reinterpret_cast<void*>(&address_reserve)},
      {"cuMemCreate", reinterpret_cast<void*>(&create)},
      {"cuMemMap", reinterpret_cast<void*>(&map)},
      {"cuMemSetAccess", reinterpret_cast<void*>(&set_access)},
      {"cuMemUnmap", reinterpret_cast<void*>(&unmap)},
      {"cuMemRelease", reinterpret_cast<void*>(&release)},
  };
  const auto it = calls.find(symbol);
  *function = it == calls.end() ? nullptr : it->second;
  if (found) *found = it == calls.end() ? cudaDriverEntryPointSymbolNotFound : cudaDriverEntryPointSuccess;
  return cudaSuccess;
}

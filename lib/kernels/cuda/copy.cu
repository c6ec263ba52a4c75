// CUDA copy (with dtype conversion, any strides; a cudaMemcpy where both are one dense run of the same
// dtype; 32 × 32 tiles through shared memory where it transposes planes, such as a change of memory
// order, so that its stores are as coalesced as its loads), fill, and transfers: host to device through
// a ring of pinned staging memory (the host's array is free again when the call returns, the device copy
// runs on, and the host waits only where the ring comes round to a copy not yet done), device to host
// through two pinned buffers in turn (then raising what the stream's kernels found wrong on the device,
// detail/device_faults.h), device to device on the current streams (detail/streams.h).

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/device_faults.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/detail/shared_memory.cuh>
#include <kusari/kernels/cuda/detail/staging_ring.h>
#include <kusari/kernels/cuda/detail/streams.h>
#include <kusari/kernels/ops/copy.h>

namespace kusari::kernels::cuda {
namespace {

template <class S, class D>
__global__ void copy_elements(KernelLayout<2> layout) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    int64_t at[2];
    element_offsets(layout, i, at);
    element_at<D>(layout, 1, at[1]) = convert<D>(element_at<S>(layout, 0, at[0]));
  }
}

// A copy that transposes a batch of planes: element (b, r, c) is read at src + b·src_batch + r·src_row + c
// (columns contiguous) and written at dst + b·dst_batch + c·dst_column + r (rows contiguous).
struct TransposedPlanes {
  const char* src;
  char* dst;
  int64_t batches, rows, columns;
  int64_t src_batch, src_row, dst_batch, dst_column;
};

// The tile a block of the transposing copy moves (kTile × kTile elements), and its threads' rows.
constexpr int kTile = 32, kTileRows = 8;

// Tile (x, y) of every batch: read a row of the tile per warp (neighbouring columns), kept in shared memory
// (one padding column, so that a warp's column reads fall in different banks), then written a column of
// the tile per warp (neighbouring rows): a warp's loads and its stores are each one run of memory.
template <class S, class D>
__global__ void copy_transposed_tiles(TransposedPlanes t) {
  KUSARI_SHARED_ARRAY(D, tile, kTile * (kTile + 1));
  const int64_t row0 = int64_t{blockIdx.y} * kTile, column0 = int64_t{blockIdx.x} * kTile;
  for (int64_t b = blockIdx.z; b < t.batches; b += gridDim.z) {
    const S* src = reinterpret_cast<const S*>(t.src) + b * t.src_batch;
    D* dst = reinterpret_cast<D*>(t.dst) + b * t.dst_batch;
    for (unsigned r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t row = row0 + r, column = column0 + threadIdx.x;
      if (row < t.rows && column < t.columns) {
        tile[r * (kTile + 1) + threadIdx.x] = convert<D>(src[row * t.src_row + column]);
      }
    }
    __syncthreads();
    for (unsigned c = threadIdx.y; c < kTile; c += kTileRows) {
      const int64_t row = row0 + threadIdx.x, column = column0 + c;
      if (row < t.rows && column < t.columns) dst[column * t.dst_column + row] = tile[threadIdx.x * (kTile + 1) + c];
    }
    __syncthreads();
  }
}

template <class T>
__global__ void fill_elements(KernelLayout<1> layout, T value) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) { element<T>(layout, 0, i) = value; }
}

// Copies src to dst (their `layout`, on device `index`) with one cudaMemcpyAsync where they have one dtype
// and their elements lie at the same places in one dense run of memory each (contiguous arrays, or
// channels-last ones); returns false, copying nothing, otherwise.
bool copy_as_bytes(const Array& src, const Array& dst, const KernelLayout<2>& layout, int index) {
  if (src.dtype() != dst.dtype()) return false;
  if (layout.axes != 1 || layout.strides[0][0] != 1 || layout.strides[1][0] != 1) return false;
  check(cudaMemcpyAsync(layout.bases[1], layout.bases[0], static_cast<size_t>(src.nbytes()), cudaMemcpyDeviceToDevice,
                        current_stream(index)),
        "cudaMemcpyAsync");
  return true;
}

// The shortest extent of planes the tiles take: a 3 × 3 filter's 9 places and up (a tile of 9 columns
// still stores whole runs of its rows, where the elementwise copy would store each element to a sector of
// its own); an image's 3 channels go element by element.
constexpr int64_t kShortestTiledExtent = 8;

// The planes of a copy whose operands are each contiguous along a different axis, both at least
// kShortestTiledExtent long, with at most one other axis (the batch): a change of memory order (row-major
// to channels-last and back, of activations and of filters) or a matrix's transpose made contiguous; none
// for any other layout.
std::optional<TransposedPlanes> transposed_planes(const KernelLayout<2>& layout) {
  const int columns_axis = layout.axes - 1;  // the source's contiguous axis: the layout's innermost
  if (layout.axes < 2 || layout.axes > 3 || layout.strides[0][columns_axis] != 1) return std::nullopt;
  int rows_axis = -1;
  for (int d = 0; d < columns_axis; ++d) {
    if (layout.strides[1][d] == 1) rows_axis = d;
  }
  if (rows_axis < 0) return std::nullopt;
  const int batch_axis = layout.axes == 3 ? 3 - rows_axis - columns_axis : -1;
  const int64_t rows = layout.extents[rows_axis], columns = layout.extents[columns_axis];
  if (rows < kShortestTiledExtent || columns < kShortestTiledExtent || (rows + kTile - 1) / kTile > 65535 ||
      (columns + kTile - 1) / kTile > 0x7fffffff) {
    return std::nullopt;
  }
  return TransposedPlanes{layout.bases[0], layout.bases[1], batch_axis < 0 ? 1 : layout.extents[batch_axis], rows,
                          columns, batch_axis < 0 ? 0 : layout.strides[0][batch_axis], layout.strides[0][rows_axis],
                          batch_axis < 0 ? 0 : layout.strides[1][batch_axis], layout.strides[1][columns_axis]};
}

// A copy as one cudaMemcpy where it can be, through tiles where it transposes planes, else element by
// element.
void copy_kernel(const Array& src, const Array& dst) {
  const int index = device_of<2>({&src, &dst}, "copy");
  if (src.size() == 0) return;
  DeviceGuard guard(index);
  const KernelLayout<2> layout = kernel_layout<2>({&src, &dst}, "copy");
  if (copy_as_bytes(src, dst, layout, index)) return;
  const std::optional<TransposedPlanes> planes = transposed_planes(layout);
  const dim3 tiles(planes ? static_cast<unsigned>((planes->columns + kTile - 1) / kTile) : 1,
                   planes ? static_cast<unsigned>((planes->rows + kTile - 1) / kTile) : 1,
                   planes ? static_cast<unsigned>(std::min<int64_t>(planes->batches, 65535)) : 1);
  visit_dtype(src.dtype(), [&]<class S>() {
    visit_dtype(dst.dtype(), [&]<class D>() {
      if (planes) {
        launch_kernel(&copy_transposed_tiles<S, D>, tiles, dim3(kTile, kTileRows), current_stream(index), *planes);
      } else {
        launch_kernel(&copy_elements<S, D>, blocks_for(layout.size), kThreads, current_stream(index), layout);
      }
    });
  });
  check(cudaGetLastError(), "copy");
}

// value as T, rounded as the CPU's fill rounds it.
template <class T>
T host_value(double value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value != 0.0;
  } else if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) {
    return T(value);
  } else if constexpr (is_integer_element_v<T>) {
    return integer_from_floating<T>(value);
  } else {
    return static_cast<T>(value);
  }
}

void fill_kernel(const Array& dst, double value) {
  visit_dtype(dst.dtype(), [&]<class T>() { launch<1>("fill", {&dst}, fill_elements<T>, host_value<T>(value)); });
}

// Bytes per part of a transfer: the host copies one part into pinned memory while the device copies
// the one before.
constexpr size_t kPartBytes = size_t{8} << 20;

// A device's staging for transfers queued on one of its streams: for copies to the device, a ring of
// pinned memory (detail/staging_ring.h) and the spare events of its past regions; for copies to the
// host, two pinned buffers and the events that say when the device has filled each.
struct Staging {
  std::mutex mutex;
  char* ring_memory = nullptr;
  std::optional<StagingRing> ring;
  std::vector<cudaEvent_t> spare_events;
  bool made = false;
  char* buffers[2] = {nullptr, nullptr};
  cudaEvent_t filled[2] = {nullptr, nullptr};
};

// The staging of device `index` for transfers queued on `stream`: one for its compute stream, one for
// its communication stream, so that a transfer never waits for the other stream's work.
Staging& staging_of(int index, cudaStream_t stream) {
  static std::array<std::array<Staging, 2>, kMaxDevices> all;
  return all[static_cast<size_t>(index)][stream == communication_stream(index) ? 1 : 0];
}

// Waits until a ring region's copy is done and keeps its event for a later region.
void wait_for_region(Staging& s, EventHandle event) {
  const auto e = static_cast<cudaEvent_t>(event);
  check(cudaEventSynchronize(e), "cudaEventSynchronize");
  s.spare_events.push_back(e);
}

// An event for a new region: a spare one, one of a region whose copy is done, else a new one.
cudaEvent_t region_event(Staging& s) {
  if (s.spare_events.empty()) {
    s.ring->retire([&](EventHandle event) {
      const cudaError_t state = cudaEventQuery(static_cast<cudaEvent_t>(event));
      if (state == cudaErrorNotReady) return false;
      check(state, "cudaEventQuery");
      s.spare_events.push_back(static_cast<cudaEvent_t>(event));
      return true;
    });
  }
  if (s.spare_events.empty()) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    return e;
  }
  const cudaEvent_t e = s.spare_events.back();
  s.spare_events.pop_back();
  return e;
}

// Makes the ring hold what staging_capacity_for asks for a transfer of `bytes` (called with the mutex
// held): a larger ring replaces the old one once the old one's copies are done; where the host has no
// pinned memory for it, the old ring stays (the transfer then goes through it in parts, waiting more).
void fit_ring(Staging& s, size_t bytes) {
  const size_t capacity = staging_capacity_for(bytes, s.ring ? s.ring->capacity() : 0);
  if (s.ring && s.ring->capacity() == capacity) return;
  char* memory = nullptr;
  const cudaError_t made = cudaMallocHost(reinterpret_cast<void**>(&memory), capacity);
  if (made != cudaSuccess && s.ring) {
    cudaGetLastError();  // the failed allocation is not the next call's error
    return;
  }
  check(made, "cudaMallocHost");
  if (s.ring) {
    s.ring->drain([&](EventHandle e) { wait_for_region(s, e); });
    check(cudaFreeHost(s.ring_memory), "cudaFreeHost");
  }
  s.ring_memory = memory;
  s.ring.emplace(capacity);
}

// Copies host bytes to the device on the current stream: each part through a region of the ring, the
// host waiting only where a region overwrites a copy the device has not done yet.
void host_to_device(const char* src, char* dst, size_t bytes, int index) {
  if (bytes == 0) return;
  const cudaStream_t stream = current_stream(index);
  Staging& s = staging_of(index, stream);
  std::lock_guard lock(s.mutex);
  fit_ring(s, bytes);
  for (size_t done = 0; done < bytes; done += kPartBytes) {
    const size_t n = std::min(kPartBytes, bytes - done);
    char* staged = s.ring_memory + s.ring->reserve(n, [&](EventHandle e) { wait_for_region(s, e); });
    std::memcpy(staged, src + done, n);
    const cudaEvent_t copied = region_event(s);
    const cudaError_t sent = cudaMemcpyAsync(dst + done, staged, n, cudaMemcpyHostToDevice, stream);
    const cudaError_t marked = sent == cudaSuccess ? cudaEventRecord(copied, stream) : sent;
    if (marked != cudaSuccess) {
      // A region the ring does not know of must not stay in flight: wait for the stream before saying why.
      s.spare_events.push_back(copied);
      if (sent == cudaSuccess) cudaStreamSynchronize(stream);
      check(marked, sent == cudaSuccess ? "cudaEventRecord" : "cudaMemcpyAsync");
    }
    s.ring->queued(copied);
  }
}

// Makes the buffers of copies to the host on first use; called with the staging mutex held.
void make_buffers(Staging& s) {
  if (s.made) return;
  for (int b = 0; b < 2; ++b) {
    check(cudaMallocHost(reinterpret_cast<void**>(&s.buffers[b]), kPartBytes), "cudaMallocHost");
    check(cudaEventCreateWithFlags(&s.filled[b], cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  s.made = true;
}

void device_to_host(const char* src, char* dst, size_t bytes, int index) {
  const cudaStream_t stream = current_stream(index);
  Staging& s = staging_of(index, stream);
  std::lock_guard lock(s.mutex);
  make_buffers(s);
  const size_t chunks = (bytes + kPartBytes - 1) / kPartBytes;
  const auto start = [&](size_t chunk) {
    const size_t at = chunk * kPartBytes, n = std::min(kPartBytes, bytes - at);
    const int b = static_cast<int>(chunk % 2);
    check(cudaMemcpyAsync(s.buffers[b], src + at, n, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaEventRecord(s.filled[b], stream), "cudaEventRecord");
  };
  if (chunks > 0) start(0);
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    if (chunk + 1 < chunks) start(chunk + 1);
    const int b = static_cast<int>(chunk % 2);
    check(cudaEventSynchronize(s.filled[b]), "cudaEventSynchronize");
    const size_t at = chunk * kPartBytes;
    std::memcpy(dst + at, s.buffers[b], std::min(kPartBytes, bytes - at));
  }
  // The stream's earlier kernels are done: what they found wrong is raised here.
  if (chunks > 0) raise_device_fault(index);
}

void transfer_kernel(const Array& src, const Array& dst) {
  const char* what = "transfer";
  if (src.dtype() != dst.dtype() || !(src.shape() == dst.shape()) || !src.is_contiguous() || !dst.is_contiguous()) {
    throw ValueError(cat(what, ": expected contiguous arrays of one dtype and shape, got ", src.dtype(), " ",
                         src.shape(), " and ", dst.dtype(), " ", dst.shape()));
  }
  const auto bytes = static_cast<size_t>(src.nbytes());
  const auto* from = static_cast<const char*>(src.raw_data());
  auto* to = static_cast<char*>(dst.raw_data());
  const bool src_host = src.device().type == DeviceType::cpu, dst_host = dst.device().type == DeviceType::cpu;
  if (src_host && !dst_host) {
    require_device(dst.device(), what);
    DeviceGuard guard(dst.device().index);
    host_to_device(from, to, bytes, dst.device().index);
  } else if (dst_host && !src_host) {
    require_device(src.device(), what);
    DeviceGuard guard(src.device().index);
    device_to_host(from, to, bytes, src.device().index);
  } else {
    require_device(src.device(), what);
    require_device(dst.device(), what);
    const int s = src.device().index, d = dst.device().index;
    DeviceGuard guard(s);
    // The source's stream copies after the destination's earlier work on that memory, and the
    // destination's later work waits for the copy.
    order_after(current_stream(s), d, current_stream(d));
    check(cudaMemcpyPeerAsync(to, d, from, s, bytes, current_stream(s)), "cudaMemcpyPeerAsync");
    order_after(current_stream(d), s, current_stream(s));
  }
}

}  // namespace

void register_copy_kernels() {
  install_kernel<kernel_ops::Copy>(DeviceType::cuda, "cuda", copy_kernel);
  install_kernel<kernel_ops::Fill>(DeviceType::cuda, "cuda", fill_kernel);
  install_kernel<kernel_ops::Transfer>(DeviceType::cuda, "cuda", transfer_kernel);
}

}  // namespace kusari::kernels::cuda

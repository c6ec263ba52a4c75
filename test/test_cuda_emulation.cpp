// The host emulation's threads (built with -Dcuda-emulation=true): every thread of a grid runs once at
// its own position, __syncthreads orders a block's shared memory (returned threads count as arrived),
// each block finds its shared arrays as garbage, a warp's xor shuffle exchanges its lanes' values,
// blocks alternate their threads' order, and what a GPU would hang on or refuse is raised: threads at
// different __syncthreads calls, lanes that wait for one another at different barriers, a shuffle
// waiting for returned lanes or taking part of a warp, and launch shapes beyond CUDA's limits. Work
// queued on a stream runs when the host waits for it, another stream's only where an event is waited for,
// and copies treat pinned and pageable host memory as CUDA does.
#include <kusari/kernels/cuda/detail/emulated_device_code.h>

#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/shared_memory.cuh>

using kusari::cat;
using kusari::DeviceError;
using kusari::kernels::cuda::launch_kernel;

namespace {

// Launches `kernel` on the default stream and waits for it (where the emulation runs it, and raises what
// the launch did wrong).
template <class... Params, class... Args>
void launch_and_wait(void (*kernel)(Params...), dim3 grid, dim3 block, Args&&... args) {
  launch_kernel(kernel, grid, block, nullptr, std::forward<Args>(args)...);
  const cudaError_t waited = cudaDeviceSynchronize();
  REQUIRE(waited == cudaSuccess);
}

// Each thread writes its linear position in the grid to out[that position], and the grid's shape.
__global__ void write_positions(int64_t* out, int64_t* shapes) {
  const int64_t block = blockIdx.x + gridDim.x * (blockIdx.y + int64_t{gridDim.y} * blockIdx.z);
  const int64_t thread = threadIdx.x + blockDim.x * (threadIdx.y + int64_t{blockDim.y} * threadIdx.z);
  const int64_t threads = int64_t{blockDim.x} * blockDim.y * blockDim.z;
  out[block * threads + thread] += block * threads + thread + 1;
  if (block == 0 && thread == 0) {
    shapes[0] = gridDim.x * gridDim.y * gridDim.z;
    shapes[1] = threads;
  }
}

// Block b sums values[b * 256 ..] in a shared-memory tree; threads past `live` return first.
__global__ void tree_sums(const int* values, int* sums, unsigned live) {
  KUSARI_SHARED_ARRAY(int, shared, 256);
  shared[threadIdx.x] = threadIdx.x < live ? values[blockIdx.x * blockDim.x + threadIdx.x] : 0;
  __syncthreads();
  if (threadIdx.x >= live) return;
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half && threadIdx.x + half < live) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = shared[0];
}

// Each warp's lanes sum their values by xor shuffles; lane 0 writes its warp's sum.
__global__ void warp_sums(const double* values, double* sums) {
  double v = values[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  sums[threadIdx.x] = v;
}

// Even threads wait at one __syncthreads, odd ones at another (undefined on a GPU).
constexpr unsigned kEvenBarrierLine = __LINE__ + 4;
constexpr unsigned kOddBarrierLine = __LINE__ + 5;
__global__ void divergent_barriers(int* out) {
  if (threadIdx.x % 2 == 0) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

// Even lanes shuffle at one call, odd ones at another.
__global__ void divergent_shuffles(int* out) {
  const int v = int(threadIdx.x);
  out[threadIdx.x] = threadIdx.x % 2 == 0 ? __shfl_xor_sync(0xffffffffu, v, 1) : __shfl_xor_sync(0xffffffffu, v, 1);
}

// Thread 5 throws.
__global__ void throwing_thread(int* out) {
  if (threadIdx.x == 5) throw std::runtime_error("thread 5 threw");
  out[threadIdx.x] = 1;
}

// Launches another kernel from inside a kernel (CUDA's dynamic parallelism, which the backend never uses).
__global__ void nested_launch(int* out) {
  if (threadIdx.x == 0) launch_kernel(&throwing_thread, 1, 1, nullptr, out);
}

// Each thread reads its neighbour's shared-memory write with no barrier between them.
__global__ void neighbours_without_barrier(int* out) {
  KUSARI_SHARED_ARRAY(int, shared, 64);
  shared[threadIdx.x] = int(blockIdx.x * 1000 + threadIdx.x + 1);  // never -1, which shared memory starts as
  out[blockIdx.x * blockDim.x + threadIdx.x] = shared[(threadIdx.x + 1) % blockDim.x];
}

// Each thread reads its slot of a shared array before any thread of the block wrote it, then writes it.
__global__ void read_before_write(int* out) {
  KUSARI_SHARED_ARRAY(int, shared, 32);
  out[blockIdx.x * blockDim.x + threadIdx.x] = shared[threadIdx.x];
  shared[threadIdx.x] = int(blockIdx.x + 1);
}

// Lanes below 16 shuffle while the others wait at __syncthreads (a hang on a GPU).
__global__ void split_warp(int* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
  } else {
    __syncthreads();
  }
}

// Lanes from 16 on return; the others shuffle with all 32 named.
__global__ void shuffle_after_return(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
}

// A shuffle of half a warp's lanes, named as such.
__global__ void half_warp_mask(int* out) {
  out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, int(threadIdx.x), 1);
}

// Adds 1 to each of blockDim.x values.
__global__ void add_one(int* values) { values[threadIdx.x] += 1; }

// Doubles each of blockDim.x values.
__global__ void double_values(int* values) { values[threadIdx.x] *= 2; }

// Copies blockDim.x values.
__global__ void copy_values(const int* from, int* to) { to[threadIdx.x] = from[threadIdx.x]; }

// A stream of its own, destroyed never (as the backend's are not).
cudaStream_t new_stream() {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  return stream;
}

// Whether every value is `v`.
bool all_equal(const std::vector<int>& values, int v) {
  return std::all_of(values.begin(), values.end(), [v](int x) { return x == v; });
}

}  // namespace

TEST_CASE("every thread of a 3-D grid of 3-D blocks runs once at its own position") {
  const dim3 grid(3, 2, 2), block(4, 3, 5);
  std::vector<int64_t> out(3 * 2 * 2 * 4 * 3 * 5, 0), shapes(2, 0);
  launch_and_wait(&write_positions, grid, block, out.data(), shapes.data());
  REQUIRE(cudaGetLastError() == cudaSuccess);
  for (size_t i = 0; i < out.size(); ++i) CHECK(out[i] == int64_t(i) + 1);
  CHECK(shapes[0] == 12);
  CHECK(shapes[1] == 60);
}

TEST_CASE("__syncthreads orders shared memory; threads that returned count as arrived") {
  std::vector<int> values(3 * 256);
  std::iota(values.begin(), values.end(), 1);
  for (const unsigned live : {256u, 100u, 1u}) {
    INFO("live threads ", live);
    std::vector<int> sums(3, -1);
    launch_and_wait(&tree_sums, 3, 256, values.data(), sums.data(), live);
    for (int b = 0; b < 3; ++b) {
      CHECK(sums[b] == std::accumulate(values.begin() + b * 256, values.begin() + b * 256 + live, 0));
    }
  }
}

TEST_CASE("a warp's xor shuffles exchange its lanes' values, warp by warp") {
  std::vector<double> values(64), sums(64, 0);
  std::iota(values.begin(), values.end(), 0.0);
  launch_and_wait(&warp_sums, 1, 64, values.data(), sums.data());
  for (int t = 0; t < 64; ++t) CHECK(sums[t] == (t < 32 ? 496.0 : 1520.0));
}

TEST_CASE("lanes waiting at different barriers are raised, naming the block") {
  std::vector<int> out(64, 0);
  try {
    launch_and_wait(&split_warp, 2, 64, out.data());
    FAIL("expected a DeviceError");
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    CHECK(message.find("block (0, 0, 0) of a grid of (2, 1, 1) blocks of (64, 1, 1) threads") != std::string::npos);
    CHECK(message.find("wait for one another for ever: 48 at __syncthreads, 16 at a warp shuffle") !=
          std::string::npos);
  }
}

TEST_CASE("threads at different __syncthreads or shuffle calls are raised, naming both") {
  std::vector<int> out(64, 0);
  try {
    launch_and_wait(&divergent_barriers, 1, 64, out.data());
    FAIL("expected a DeviceError");
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    CHECK(message.find("threads wait at different __syncthreads") != std::string::npos);
    for (const unsigned line : {kEvenBarrierLine, kOddBarrierLine}) {
      CHECK(message.find(cat("test_cuda_emulation.cpp:", line, ":")) != std::string::npos);
    }
  }
  CHECK_THROWS_WITH_AS(launch_and_wait(&divergent_shuffles, 1, 32, out.data()),
                       doctest::Contains("lanes of warp 0 shuffle at different calls"), DeviceError);
}

TEST_CASE("blocks run their threads in ascending and descending order by turns: a missing barrier shows") {
  std::vector<int> out(2 * 64, -1);
  launch_and_wait(&neighbours_without_barrier, 2, 64, out.data());
  std::vector<int> right(2, 0);  // threads that read their neighbour's write, in each block
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 64; ++t) right[b] += out[b * 64 + t] == b * 1000 + (t + 1) % 64 + 1;
  }
  // Ascending, only the last thread finds its neighbour (thread 0) done; descending, all but the last.
  std::sort(right.begin(), right.end());
  CHECK(right == std::vector<int>{1, 63});
}

TEST_CASE("each block finds its shared arrays as garbage (0xff bytes), not as the last block left them") {
  std::vector<int> out(3 * 32, 0);
  launch_and_wait(&read_before_write, 3, 32, out.data());
  CHECK(all_equal(out, -1));
}

TEST_CASE("a thread's exception ends the launch with it, where the host waits; launching from a kernel is refused") {
  std::vector<int> out(256, 0);
  CHECK_THROWS_WITH_AS(launch_and_wait(&throwing_thread, 1, 32, out.data()), "thread 5 threw",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(launch_and_wait(&nested_launch, 1, 32, out.data()),
                       doctest::Contains("a kernel launched from inside a kernel"), DeviceError);
  CHECK_THROWS_WITH_AS(__syncthreads(), doctest::Contains("__syncthreads called outside a kernel"), DeviceError);
}

TEST_CASE("a shuffle waiting for lanes that returned, or of part of a warp, is raised") {
  std::vector<int> out(32, 0);
  CHECK_THROWS_WITH_AS(launch_and_wait(&shuffle_after_return, 1, 32, out.data()),
                       doctest::Contains("a shuffle of warp 0 waits for 16 of its lanes, which have returned"),
                       DeviceError);
  CHECK_THROWS_WITH_AS(launch_and_wait(&half_warp_mask, 1, 32, out.data()),
                       doctest::Contains("the emulation takes a whole warp's shuffles"), DeviceError);
  CHECK_THROWS_AS(launch_and_wait(&split_warp, 1, 256, out.data()), DeviceError);
  // The emulation is usable again after refused launches, with more threads than they had.
  std::vector<double> values(256, 1.0), sums(256, 0);
  launch_and_wait(&warp_sums, 1, 256, values.data(), sums.data());
  CHECK(std::all_of(sums.begin(), sums.end(), [](double s) { return s == 32.0; }));
}

TEST_CASE("launch shapes CUDA refuses set cudaErrorInvalidConfiguration and run nothing") {
  std::vector<int64_t> out(2048, 0), shapes(2, 0);
  for (const auto& [grid, block] : std::vector<std::pair<dim3, dim3>>{
           {dim3(1), dim3(1025)}, {dim3(1), dim3(32, 32, 2)}, {dim3(0), dim3(32)}, {dim3(1, 65536), dim3(1)},
           {dim3(1), dim3(1, 1, 65)}}) {
    INFO("grid (", grid.x, ", ", grid.y, ", ", grid.z, "), block (", block.x, ", ", block.y, ", ", block.z, ")");
    launch_kernel(&write_positions, grid, block, nullptr, out.data(), shapes.data());
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaSuccess);  // read once
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(std::all_of(out.begin(), out.end(), [](int64_t v) { return v == 0; }));
}

TEST_CASE("a stream's work runs in its order when the host waits for it, not before") {
  const cudaStream_t stream = new_stream();
  std::vector<int> values(64, 0);
  launch_kernel(&add_one, 1, 64, stream, values.data());
  launch_kernel(&double_values, 1, 64, stream, values.data());
  CHECK(all_equal(values, 0));
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(all_equal(values, 2));  // (0 + 1) * 2
}

TEST_CASE("a stream runs another's work up to the event it waits for; without the wait it runs first") {
  const cudaStream_t first = new_stream(), second = new_stream();
  cudaEvent_t event = nullptr;
  REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
  std::vector<int> values(32, 0), seen(32, -1);
  launch_kernel(&add_one, 1, 32, first, values.data());
  REQUIRE(cudaEventRecord(event, first) == cudaSuccess);
  launch_kernel(&add_one, 1, 32, first, values.data());
  REQUIRE(cudaStreamWaitEvent(second, event, 0) == cudaSuccess);
  launch_kernel(&copy_values, 1, 32, second, values.data(), seen.data());
  REQUIRE(cudaStreamSynchronize(second) == cudaSuccess);
  CHECK(all_equal(seen, 1));
  CHECK(all_equal(values, 1));
  REQUIRE(cudaStreamSynchronize(first) == cudaSuccess);
  CHECK(all_equal(values, 2));

  // The same without cudaStreamWaitEvent: the reader ran before the writer (a GPU may do either).
  launch_kernel(&add_one, 1, 32, first, values.data());
  launch_kernel(&copy_values, 1, 32, second, values.data(), seen.data());
  REQUIRE(cudaStreamSynchronize(second) == cudaSuccess);
  CHECK(all_equal(seen, 2));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(all_equal(values, 3));
  REQUIRE(cudaEventDestroy(event) == cudaSuccess);
}

TEST_CASE("a wait is for the event's record before it, even where a later record is reached first") {
  const cudaStream_t first = new_stream(), second = new_stream(), waiting = new_stream();
  cudaEvent_t event = nullptr;
  REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
  std::vector<int> values(32, 0), seen(32, -1);
  launch_kernel(&add_one, 1, 32, first, values.data());
  REQUIRE(cudaEventRecord(event, first) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(waiting, event, 0) == cudaSuccess);
  launch_kernel(&copy_values, 1, 32, waiting, values.data(), seen.data());
  REQUIRE(cudaEventRecord(event, second) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(second) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaSuccess);  // its latest record
  REQUIRE(cudaStreamSynchronize(waiting) == cudaSuccess);
  CHECK(all_equal(seen, 1));
  REQUIRE(cudaEventDestroy(event) == cudaSuccess);
  cudaStream_t blocking = nullptr;
  CHECK(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE("an event is not ready until its work is waited for; it may be destroyed with a record queued") {
  const cudaStream_t stream = new_stream();
  cudaEvent_t start = nullptr, stop = nullptr;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
  std::vector<int> values(32, 0);
  REQUIRE(cudaEventRecord(start, stream) == cudaSuccess);
  launch_kernel(&add_one, 1, 32, stream, values.data());
  REQUIRE(cudaEventRecord(stop, stream) == cudaSuccess);
  float milliseconds = -1;
  CHECK(cudaEventElapsedTime(&milliseconds, start, stop) == cudaErrorNotReady);
  CHECK(cudaEventQuery(stop) == cudaErrorNotReady);
  CHECK(cudaEventQuery(stop) == cudaErrorNotReady);  // a query runs nothing
  CHECK(cudaGetLastError() == cudaSuccess);          // not an error
  CHECK(all_equal(values, 0));
  REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
  CHECK(cudaEventQuery(stop) == cudaSuccess);
  CHECK(all_equal(values, 1));
  CHECK(cudaEventElapsedTime(&milliseconds, start, stop) == cudaSuccess);
  CHECK(milliseconds >= 0);

  launch_kernel(&add_one, 1, 32, stream, values.data());
  REQUIRE(cudaEventRecord(stop, stream) == cudaSuccess);
  REQUIRE(cudaEventDestroy(stop) == cudaSuccess);
  REQUIRE(cudaEventDestroy(start) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(all_equal(values, 2));
}

TEST_CASE("copies read and write pageable host memory at the call, pinned memory when they run") {
  const cudaStream_t stream = new_stream();
  constexpr size_t kBytes = 32 * sizeof(int);
  int* device = nullptr;
  int* pinned = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&device), kBytes) == cudaSuccess);
  REQUIRE(cudaMallocHost(reinterpret_cast<void**>(&pinned), kBytes) == cudaSuccess);
  std::vector<int> pageable(32, 7), back(32, 0);

  REQUIRE(cudaMemcpyAsync(device, pageable.data(), kBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
  std::fill(pageable.begin(), pageable.end(), 9);  // after the call: not what is copied
  REQUIRE(cudaMemcpyAsync(back.data(), device, kBytes, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  CHECK(all_equal(back, 7));  // done on return

  std::fill(pinned, pinned + 32, 5);
  REQUIRE(cudaMemcpyAsync(device, pinned, kBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
  std::fill(pinned, pinned + 32, 6);  // before the copy ran: what it copies
  launch_kernel(&add_one, 1, 32, stream, device);
  REQUIRE(cudaMemcpyAsync(pinned, device, kBytes, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  CHECK(std::all_of(pinned, pinned + 32, [](int v) { return v == 6; }));  // not yet copied back
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(std::all_of(pinned, pinned + 32, [](int v) { return v == 7; }));

  // cudaFree waits for the device, as CUDA's does.
  launch_kernel(&add_one, 1, 32, stream, pageable.data());
  REQUIRE(cudaFree(device) == cudaSuccess);
  CHECK(all_equal(pageable, 10));
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
  CHECK(cudaMemcpyAsync(back.data(), pageable.data(), kBytes, cudaMemcpyDefault, stream) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

namespace {

// One thread writes 1 at values[index].
__global__ void write_one_at(float* values, int64_t index) { values[index] = 1; }

// What a child process running `body` wrote on stderr, and how it ended (waitpid's status).
struct ChildEnd {
  std::string said;
  int status = 0;
};

// Runs `body` in a child process (no core file; doctest's own crash report, from its handler, which
// comes after the emulation's, not kept) and waits for it.
template <class Body>
ChildEnd run_in_child(Body body) {
  int pipe_ends[2];
  REQUIRE(pipe(pipe_ends) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    dup2(pipe_ends[1], STDERR_FILENO);
    dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
    body();
    _exit(0);
  }
  close(pipe_ends[1]);
  ChildEnd end;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) end.said.append(buffer, static_cast<size_t>(n));
  close(pipe_ends[0]);
  REQUIRE(waitpid(child, &end.status, 0) == child);
  return end;
}

}  // namespace

TEST_CASE("a kernel's access past a device allocation's rounded end stops it there, naming the allocation") {
  void* data = nullptr;
  REQUIRE(cudaMalloc(&data, 1000) == cudaSuccess);
  auto* values = static_cast<float*>(data);
  launch_and_wait(&write_one_at, 1, 1, values, int64_t{249});
  // The first byte past cudaMalloc's 256-byte rounding is the guard page's.
  const ChildEnd end = run_in_child([&] {
    launch_kernel(&write_one_at, 1, 1, nullptr, values, int64_t{256});
    cudaDeviceSynchronize();
  });
  CHECK(WIFSIGNALED(end.status));
  CHECK(WTERMSIG(end.status) == SIGSEGV);
  CHECK(end.said.find("an access at byte 1024 of a device allocation of 1000 bytes at") != std::string::npos);
  CHECK(cudaFree(data) == cudaSuccess);
}

TEST_CASE("a write past a device allocation's end but within its rounding is found when it is freed") {
  void* data = nullptr;
  REQUIRE(cudaMalloc(&data, 1000) == cudaSuccess);
  auto* values = static_cast<float*>(data);
  const ChildEnd end = run_in_child([&] {
    launch_kernel(&write_one_at, 1, 1, nullptr, values, int64_t{250});
    cudaFree(data);
  });
  CHECK(WIFSIGNALED(end.status));
  CHECK(WTERMSIG(end.status) == SIGABRT);
  CHECK(end.said.find("a write at byte 1000 of a device allocation of 1000 bytes at") != std::string::npos);
  CHECK(cudaFree(data) == cudaSuccess);  // the parent's own bytes past the end are untouched
}

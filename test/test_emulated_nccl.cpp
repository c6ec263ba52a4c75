// The host emulation's NCCL (built with -Dcuda-emulation=true), between this process and a forked one:
// every collective the backend calls moves buffers larger than a part through the shared segment and
// gives what a GPU's NCCL gives (sums in rank order, rounded to the element type), after the work queued
// on its stream, its result there for the stream's later work; members calling different collectives
// are refused on both; a member that has ended fails the collective instead of hanging it.
#include <doctest/doctest.h>

#include <cuda_fp16.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <kusari/kernels/cuda/detail/emulated_streams.h>

namespace {

// More floats than one part of the segment (1 MiB) holds.
constexpr size_t kCount = 300'000;

// Runs member(rank, comm) as rank 0 here and as rank 1 in a child process; the child's `member` result
// is its exit status (0 for a pass), which rank 0 returns.
int with_two_members(const std::function<bool(int, ncclComm_t)>& member) {
  ncclUniqueId id;
  REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ncclComm_t comm = nullptr;
    const bool passed = ncclCommInitRank(&comm, 2, id, 1) == ncclSuccess && member(1, comm);
    ncclCommDestroy(comm);
    _exit(passed ? 0 : 1);
  }
  ncclComm_t comm = nullptr;
  REQUIRE(ncclCommInitRank(&comm, 2, id, 0) == ncclSuccess);
  CHECK(member(0, comm));
  CHECK(ncclCommDestroy(comm) == ncclSuccess);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Rank r's value at i: exact in float16 and summed exactly in float32.
float value(int rank, size_t i) { return static_cast<float>((i % 97) + 1000 * rank); }

// Whether `result` is ncclSuccess and the default stream's work (the copy of the result) then runs.
bool done(ncclResult_t result) { return result == ncclSuccess && cudaStreamSynchronize(nullptr) == cudaSuccess; }

}  // namespace

TEST_CASE("the emulation's NCCL collectives between two processes give what NCCL gives") {
  const int child = with_two_members([](int rank, ncclComm_t comm) {
    bool ok = true;
    std::vector<float> sent(2 * kCount), summed(2 * kCount, -1), share(kCount, -1), gathered(4 * kCount, -1);
    for (size_t i = 0; i < sent.size(); ++i) sent[i] = value(rank, i);
    ok = ok && done(ncclAllReduce(sent.data(), summed.data(), sent.size(), ncclFloat32, ncclSum, comm, nullptr));
    for (size_t i = 0; i < sent.size(); ++i) ok = ok && summed[i] == value(0, i) + value(1, i);
    ok = ok && done(ncclAllReduce(sent.data(), summed.data(), sent.size(), ncclFloat32, ncclMax, comm, nullptr));
    for (size_t i = 0; i < sent.size(); ++i) ok = ok && summed[i] == value(1, i);
    ok = ok && done(ncclReduceScatter(sent.data(), share.data(), kCount, ncclFloat32, ncclSum, comm, nullptr));
    for (size_t i = 0; i < kCount; ++i) {
      const size_t at = rank * kCount + i;
      ok = ok && share[i] == value(0, at) + value(1, at);
    }
    ok = ok && done(ncclAllGather(sent.data(), gathered.data(), sent.size(), ncclFloat32, comm, nullptr));
    for (size_t i = 0; i < gathered.size(); ++i) ok = ok && gathered[i] == value(int(i / sent.size()), i % sent.size());
    std::vector<float> mine = sent;
    ok = ok && done(ncclBroadcast(mine.data(), mine.data(), mine.size(), ncclFloat32, 1, comm, nullptr));
    for (size_t i = 0; i < mine.size(); ++i) ok = ok && mine[i] == value(1, i);
    std::fill(summed.begin(), summed.end(), -1.0f);
    ok = ok && done(ncclReduce(sent.data(), summed.data(), sent.size(), ncclFloat32, ncclSum, 1, comm, nullptr));
    for (size_t i = 0; i < sent.size(); ++i) ok = ok && summed[i] == (rank == 1 ? value(0, i) + value(1, i) : -1.0f);
    // float16: each partial sum rounded to float16 (2048 + 1 rounds to even: 2048).
    const std::vector<__half> halves(3, __float2half_rn(rank == 0 ? 2048.0f : 1.0f));
    std::vector<__half> half_sums(3);
    ok = ok && done(ncclAllReduce(halves.data(), half_sums.data(), 3, ncclFloat16, ncclSum, comm, nullptr));
    for (const __half h : half_sums) ok = ok && __half2float(h) == 2048.0f;
    // Grouped collectives run at ncclGroupEnd, in call order: after work queued on their streams before
    // it, as NCCL launches them there.
    std::vector<float> a(5, float(rank + 1)), b(7, float(10 * (rank + 1)));
    const std::vector<float> later(5, float(100 * (rank + 1)));
    ok = ok && ncclGroupStart() == ncclSuccess;
    ok = ok && ncclAllReduce(a.data(), a.data(), a.size(), ncclFloat32, ncclSum, comm, nullptr) == ncclSuccess;
    ok = ok && ncclAllReduce(b.data(), b.data(), b.size(), ncclFloat32, ncclSum, comm, nullptr) == ncclSuccess;
    ok = ok &&
         cudaMemcpyAsync(a.data(), later.data(), sizeof(float) * 5, cudaMemcpyHostToDevice, nullptr) == cudaSuccess;
    ok = ok && done(ncclGroupEnd());
    ok = ok && std::all_of(a.begin(), a.end(), [](float v) { return v == 300; });
    ok = ok && std::all_of(b.begin(), b.end(), [](float v) { return v == 30; });
    return ok;
  });
  CHECK(child == 0);
}

TEST_CASE("a collective runs after the work queued on its stream, its result written by the stream's work") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  const int child = with_two_members([stream](int rank, ncclComm_t comm) {
    std::vector<float> values(8, 0.0f);
    const std::vector<float> filled(8, float(rank + 1));
    // A copy from pageable memory is read at the call but written when the stream runs.
    bool ok = cudaMemcpyAsync(values.data(), filled.data(), sizeof(float) * 8, cudaMemcpyHostToDevice, stream) ==
              cudaSuccess;
    ok = ok && values[0] == 0.0f;
    ok = ok && ncclAllReduce(values.data(), values.data(), 8, ncclFloat32, ncclSum, comm, stream) == ncclSuccess;
    // The result is written by the stream's work after the collective, not before.
    ok = ok && values[0] == float(rank + 1);
    ok = ok && cudaStreamSynchronize(stream) == cudaSuccess;
    return ok && std::all_of(values.begin(), values.end(), [](float v) { return v == 3; });
  });
  CHECK(child == 0);
}

TEST_CASE("members calling different collectives are refused on both; a member that ended fails the collective") {
  const int child = with_two_members([](int rank, ncclComm_t comm) {
    std::vector<float> sent(4, 1.0f), received(8, 0.0f);
    // Rank 0 all-reduces where rank 1 gathers.
    const auto mismatched = [&] {
      return rank == 0 ? ncclAllReduce(sent.data(), received.data(), 4, ncclFloat32, ncclSum, comm, nullptr)
                       : ncclAllGather(sent.data(), received.data(), 4, ncclFloat32, comm, nullptr);
    };
    const ncclResult_t result = mismatched();
    // In a group, the calls after a refused one still run (the group's result is the refusal).
    std::vector<float> summed(3, 1.0f);
    bool grouped = ncclGroupStart() == ncclSuccess && mismatched() == ncclSuccess;
    grouped = grouped &&
              ncclAllReduce(summed.data(), summed.data(), 3, ncclFloat32, ncclSum, comm, nullptr) == ncclSuccess;
    grouped = grouped && ncclGroupEnd() == ncclInvalidUsage && cudaStreamSynchronize(nullptr) == cudaSuccess;
    return result == ncclInvalidUsage && grouped && summed == std::vector<float>(3, 2.0f);
  });
  CHECK(child == 0);
  const int ended = with_two_members([](int rank, ncclComm_t comm) {
    if (rank == 1) _exit(7);
    std::vector<float> values(4, 1.0f);
    return ncclAllReduce(values.data(), values.data(), 4, ncclFloat32, ncclSum, comm, nullptr) == ncclRemoteError;
  });
  CHECK(ended == 7);
  CHECK(std::string(ncclGetErrorString(ncclRemoteError)).find("a member ended") != std::string::npos);
}

#pragma once
// What the all-reduce benchmarks share: kusari's (allreduce.cpp) and the plain MPI program beside it
// (mpi_allreduce.cpp), which links no kusari: ResNet-50's gradient set, the MPI_Allreduce baselines
// that average it, and how a setting is timed.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

// The parameter sizes of He et al.'s ResNet-50 in forward order: convolutions without bias, each
// followed by batch normalization (gamma, beta); the fully connected layer's W and b last.
inline std::vector<int64_t> resnet50_gradient_sizes() {
  const std::vector<int64_t> sizes = {
      // stem: conv1 7x7 3->64, bn1
      9408, 64, 64,
      // res2a: 1x1 64->64, 3x3 64->64, 1x1 64->256, each + bn; projection 1x1 64->256 + bn
      4096, 64, 64, 36864, 64, 64, 16384, 256, 256, 16384, 256, 256,
      // res2b: 1x1 256->64, 3x3 64->64, 1x1 64->256, each + bn
      16384, 64, 64, 36864, 64, 64, 16384, 256, 256,
      // res2c: 1x1 256->64, 3x3 64->64, 1x1 64->256, each + bn
      16384, 64, 64, 36864, 64, 64, 16384, 256, 256,
      // res3a: 1x1 256->128, 3x3 128->128, 1x1 128->512, each + bn; projection 1x1 256->512 + bn
      32768, 128, 128, 147456, 128, 128, 65536, 512, 512, 131072, 512, 512,
      // res3b: 1x1 512->128, 3x3 128->128, 1x1 128->512, each + bn
      65536, 128, 128, 147456, 128, 128, 65536, 512, 512,
      // res3c: 1x1 512->128, 3x3 128->128, 1x1 128->512, each + bn
      65536, 128, 128, 147456, 128, 128, 65536, 512, 512,
      // res3d: 1x1 512->128, 3x3 128->128, 1x1 128->512, each + bn
      65536, 128, 128, 147456, 128, 128, 65536, 512, 512,
      // res4a: 1x1 512->256, 3x3 256->256, 1x1 256->1024, each + bn; projection 1x1 512->1024 + bn
      131072, 256, 256, 589824, 256, 256, 262144, 1024, 1024, 524288, 1024, 1024,
      // res4b: 1x1 1024->256, 3x3 256->256, 1x1 256->1024, each + bn
      262144, 256, 256, 589824, 256, 256, 262144, 1024, 1024,
      // res4c: 1x1 1024->256, 3x3 256->256, 1x1 256->1024, each + bn
      262144, 256, 256, 589824, 256, 256, 262144, 1024, 1024,
      // res4d: 1x1 1024->256, 3x3 256->256, 1x1 256->1024, each + bn
      262144, 256, 256, 589824, 256, 256, 262144, 1024, 1024,
      // res4e: 1x1 1024->256, 3x3 256->256, 1x1 256->1024, each + bn
      262144, 256, 256, 589824, 256, 256, 262144, 1024, 1024,
      // res4f: 1x1 1024->256, 3x3 256->256, 1x1 256->1024, each + bn
      262144, 256, 256, 589824, 256, 256, 262144, 1024, 1024,
      // res5a: 1x1 1024->512, 3x3 512->512, 1x1 512->2048, each + bn; projection 1x1 1024->2048 + bn
      524288, 512, 512, 2359296, 512, 512, 1048576, 2048, 2048, 2097152, 2048, 2048,
      // res5b: 1x1 2048->512, 3x3 512->512, 1x1 512->2048, each + bn
      1048576, 512, 512, 2359296, 512, 512, 1048576, 2048, 2048,
      // res5c: 1x1 2048->512, 3x3 512->512, 1x1 512->2048, each + bn
      1048576, 512, 512, 2359296, 512, 512, 1048576, 2048, 2048,
      // fc: W 2048x1000, b
      2048000, 1000,
  };
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  if (sizes.size() != 161 || total != 25557032) {
    throw std::logic_error("resnet50_gradient_sizes: expected 161 tensors of 25557032 values, got " +
                           std::to_string(sizes.size()) + " of " + std::to_string(total));
  }
  return sizes;
}

// One gradient tensor's values.
struct Tensor {
  float* data;
  int64_t size;
};

// 1 / the number of ranks of comm.
inline float inverse_ranks(MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  return 1.0f / static_cast<float>(ranks);
}

// to[i] = from[i] * inverse, for i < n.
inline void scale(const float* from, int64_t n, float inverse, float* to) {
  std::transform(from, from + n, to, [inverse](float v) { return v * inverse; });
}

// Averages every tensor across the ranks of comm with one MPI_Allreduce each, then divides by the ranks.
inline void average_per_tensor(const std::vector<Tensor>& grads, MPI_Comm comm) {
  const float inverse = inverse_ranks(comm);
  for (const Tensor& g : grads) {
    MPI_Allreduce(MPI_IN_PLACE, g.data, static_cast<int>(g.size), MPI_FLOAT, MPI_SUM, comm);
    scale(g.data, g.size, inverse, g.data);
  }
}

// The same with one MPI_Allreduce over all of them, copied into `fused` (their total size) and back.
inline void average_fused(const std::vector<Tensor>& grads, std::vector<float>& fused, MPI_Comm comm) {
  const float inverse = inverse_ranks(comm);
  float* at = fused.data();
  for (const Tensor& g : grads) at = std::copy(g.data, g.data + g.size, at);
  MPI_Allreduce(MPI_IN_PLACE, fused.data(), static_cast<int>(fused.size()), MPI_FLOAT, MPI_SUM, comm);
  const float* from = fused.data();
  for (const Tensor& g : grads) {
    scale(from, g.size, inverse, g.data);
    from += g.size;
  }
}

// The slowest rank's time in milliseconds for one call of `average`.
inline double time_once(const std::function<void()>& average) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  average();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return ms;
}

// The median of some times.
inline double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const size_t middle = times.size() / 2;
  return times.size() % 2 == 1 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
}

}  // namespace bench

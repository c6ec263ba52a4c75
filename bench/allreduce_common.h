#pragma once
// What the all-reduce benchmarks share: kusari's (allreduce.cpp), the plain MPI program beside it
// (mpi_allreduce.cpp), which links no kusari, and the cost model's (allreduce_calibrate.cpp,
// predict_seeds.cpp): ResNet-50's gradient set, the MPI_Allreduce baselines that average it, how a
// setting is timed, and how a printed cluster names its MPI's choice of all-reduce.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

// What a cluster's first printed line says when its MPI composes its all-reduce by node
// (cost::MpiFactors::by_node), and when its MPI is Open MPI (cost::MpiFactors::open_mpi): in
// allreduce_calibrate's output, which --replay reads back, and in predict_seeds --recommend's.
inline constexpr const char* kMpiByNodeClause = "; MPI's all-reduce composed by node";
inline constexpr const char* kOpenMpiClause = "; Open MPI's all-reduce algorithms";
// The clause for a cluster's flags (at most one set; empty for MPICH's flat choices).
inline const char* mpi_choice_clause(bool by_node, bool open_mpi) {
  return by_node ? kMpiByNodeClause : open_mpi ? kOpenMpiClause : "";
}

// The parameter sizes of He et al.'s ResNet-50 in forward order: the stem's 7x7 convolution, then the
// four stages of bottleneck blocks (1x1 in->w, 3x3 w->w, 1x1 w->4w, and in each stage's first block a
// 1x1 in->4w projection), each convolution without bias and followed by batch normalization (gamma,
// beta); the fully connected layer's W and b last.
inline std::vector<int64_t> resnet50_gradient_sizes() {
  std::vector<int64_t> sizes;
  const auto conv_bn = [&sizes](int64_t weights, int64_t channels) {
    for (const int64_t n : {weights, channels, channels}) sizes.push_back(n);
  };
  conv_bn(7 * 7 * 3 * 64, 64);
  int64_t in = 64;
  for (const auto& [width, blocks] : {std::pair<int64_t, int>{64, 3}, {128, 4}, {256, 6}, {512, 3}}) {
    for (int block = 0; block < blocks; ++block) {
      conv_bn(in * width, width);
      conv_bn(9 * width * width, width);
      conv_bn(width * 4 * width, 4 * width);
      if (block == 0) conv_bn(in * 4 * width, 4 * width);
      in = 4 * width;
    }
  }
  sizes.push_back(2048 * 1000);
  sizes.push_back(1000);
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

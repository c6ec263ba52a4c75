// Averages ResNet-50's gradient set (161 tensors, 25,557,032 float32 values) across the ranks with
// every all-reduce algorithm and wire dtype, beside plain MPI_Allreduce per tensor and fused.
//   mpiexec -n 2 build/bench/allreduce [iterations [algorithm...]]
// Rank 0 prints one line per setting, "allreduce_resnet50_<algorithm>_<dtype>: X ms": the mean over
// the iterations of the slowest rank's time.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <kusari/kusari.h>
#include <kusari/distributed/mpi_interop.h>

namespace {

using namespace kusari;
namespace dist = kusari::distributed;

// The parameter sizes of He et al.'s ResNet-50 in forward order: convolutions without bias, each
// followed by batch normalization (gamma, beta); the fully connected layer's W and b last.
std::vector<int64_t> resnet50_gradient_sizes() {
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
    throw Error(cat("resnet50_gradient_sizes: expected 161 tensors of 25557032 values, got ", sizes.size(), " of ", total));
  }
  return sizes;
}

// Mean over `iterations` of the slowest rank's time for one call of `average`, after one warm-up call.
double time_ms(const std::function<void()>& average, int iterations) {
  average();
  double total = 0;
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    average();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    total += ms;
  }
  return total / iterations;
}

// Prints one result line on rank 0.
void report(int rank, const std::string& setting, double ms) {
  if (rank != 0) return;
  std::printf("allreduce_resnet50_%s: %.1f ms\n", setting.c_str(), ms);
  std::fflush(stdout);
}

// Multiplies n floats by scale.
void scale_values(float* data, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) data[i] *= scale;
}

void run(int iterations, const std::vector<std::string>& algorithms) {
  const dist::Communicator world = dist::create_communicator("flat");
  const int rank = world.rank(), size = world.size();
  const float inverse = 1.0f / static_cast<float>(size);
  std::vector<Array> grads;
  int64_t total = 0;
  for (int64_t n : resnet50_gradient_sizes()) {
    grads.push_back(Array::uniform({n}, -1, 1, static_cast<uint64_t>(rank * 1000 + static_cast<int>(grads.size()))));
    total += n;
  }
  if (rank == 0) {
    std::printf("# %zu tensors, %lld float32 values, %d ranks, %d iterations\n", grads.size(),
                static_cast<long long>(total), size, iterations);
  }

  const double per_tensor = time_ms([&] {
    for (const Array& g : grads) {
      MPI_Allreduce(MPI_IN_PLACE, g.data<float>(), static_cast<int>(g.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      scale_values(g.data<float>(), g.size(), inverse);
    }
  }, iterations);
  report(rank, "mpi_per_tensor_float32", per_tensor);
  std::vector<float> fused(static_cast<size_t>(total));
  const double fused_ms = time_ms([&] {
    float* at = fused.data();
    for (const Array& g : grads) at = std::copy_n(g.data<float>(), g.size(), at);
    MPI_Allreduce(MPI_IN_PLACE, fused.data(), static_cast<int>(total), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const float* from = fused.data();
    for (const Array& g : grads) {
      float* out = g.data<float>();
      for (int64_t i = 0; i < g.size(); ++i) out[i] = from[i] * inverse;
      from += g.size();
    }
  }, iterations);
  report(rank, "mpi_fused_float32", fused_ms);

  const double baseline = std::min(per_tensor, fused_ms);
  double best = 1e300;
  std::string best_setting;
  for (const std::string& name : algorithms) {
    for (const Dtype wire : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
      const dist::Communicator comm = dist::create_communicator(name, {.wire_dtype = wire});
      const std::string setting = name + "_" + dtype_name(wire);
      const double ms = time_ms([&] { comm.allreduce_grad(grads); }, iterations);
      report(rank, setting, ms);
      if (ms < best) {
        best = ms;
        best_setting = setting;
      }
    }
  }
  if (rank == 0) {
    std::printf("# best: %s, %.2fx faster than the faster MPI_Allreduce way (%.1f ms)\n", best_setting.c_str(),
                baseline / best, baseline);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 5;
  std::vector<std::string> algorithms(argv + std::min(argc, 2), argv + argc);
  if (algorithms.empty()) algorithms = dist::allreduce_algorithm_names();
  dist::abort_on_exception([&] { run(iterations, algorithms); });
  return 0;
}

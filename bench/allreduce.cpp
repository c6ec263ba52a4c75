// Averages ResNet-50's gradient set (161 tensors, 25,557,032 float32 values) across the ranks with
// every all-reduce algorithm and wire dtype, beside plain MPI_Allreduce per tensor and fused (each
// followed by the division by the number of ranks).
//   mpiexec -n 2 build/bench/allreduce [rounds [algorithm...]]
// Rank 0 prints one line per setting, "allreduce_resnet50_<algorithm>_<dtype>: X ms": the median over
// the rounds of the slowest rank's time.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// Rewrites the gradients from their initial values, as backward would: every setting then starts
// from the same values and the same cache state.
void refill(const std::vector<Array>& grads, const std::vector<Array>& initial) {
  for (size_t i = 0; i < grads.size(); ++i) {
    std::memcpy(grads[i].raw_data(), initial[i].raw_data(), static_cast<size_t>(grads[i].nbytes()));
  }
}

// The slowest rank's time in milliseconds for one call of `average`.
double time_once(const std::function<void()>& average) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  average();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return ms;
}

// The median of some times.
double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const size_t middle = times.size() / 2;
  return times.size() % 2 == 1 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
}

// One way of averaging the gradients across the ranks.
struct Setting {
  std::string name;
  std::function<void()> average;
  bool is_kusari;
  std::vector<double> times = {};
};

void run(int rounds, const std::vector<std::string>& algorithms) {
  dist::ensure_mpi_initialized();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const float inverse = 1.0f / static_cast<float>(size);
  std::vector<Array> initial, grads;
  int64_t total = 0;
  for (int64_t n : resnet50_gradient_sizes()) {
    initial.push_back(Array::uniform({n}, -1, 1, static_cast<uint64_t>(rank * 1000 + static_cast<int>(initial.size()))));
    grads.push_back(initial.back().copy());
    total += n;
  }
  if (rank == 0) {
    std::printf("# %zu tensors, %lld float32 values, %d ranks, median of %d rounds\n", grads.size(),
                static_cast<long long>(total), size, rounds);
  }

  std::vector<Setting> settings;
  settings.push_back({"mpi_per_tensor_float32", [&] {
    for (const Array& g : grads) {
      float* data = g.data<float>();
      MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(g.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      for (int64_t i = 0; i < g.size(); ++i) data[i] *= inverse;
    }
  }, false});
  std::vector<float> fused(static_cast<size_t>(total));
  settings.push_back({"mpi_fused_float32", [&] {
    float* at = fused.data();
    for (const Array& g : grads) at = std::copy_n(g.data<float>(), g.size(), at);
    MPI_Allreduce(MPI_IN_PLACE, fused.data(), static_cast<int>(total), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const float* from = fused.data();
    for (const Array& g : grads) {
      float* out = g.data<float>();
      for (int64_t i = 0; i < g.size(); ++i) out[i] = from[i] * inverse;
      from += g.size();
    }
  }, false});
  for (const std::string& name : algorithms) {
    for (const Dtype wire : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
      const dist::Communicator comm = dist::create_communicator(name, {.wire_dtype = wire});
      settings.push_back({name + "_" + dtype_name(wire), [&grads, comm] { comm.allreduce_grad(grads); }, true});
    }
  }

  // Every round times every setting once, so that load changes on a shared machine hit all alike.
  for (Setting& setting : settings) setting.average();
  for (int round = 0; round < rounds; ++round) {
    for (Setting& setting : settings) {
      refill(grads, initial);
      setting.times.push_back(time_once(setting.average));
    }
  }
  if (rank != 0) return;
  double baseline = 1e300, best = 1e300;
  std::string best_name;
  for (const Setting& setting : settings) {
    const double ms = median(setting.times);
    std::printf("allreduce_resnet50_%s: %.1f ms\n", setting.name.c_str(), ms);
    if (!setting.is_kusari) {
      baseline = std::min(baseline, ms);
    } else if (ms < best) {
      best = ms;
      best_name = setting.name;
    }
  }
  std::printf("# best: %s, %.2fx faster than the faster MPI_Allreduce way (%.1f ms)\n", best_name.c_str(),
              baseline / best, baseline);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  std::vector<std::string> algorithms(argv + std::min(argc, 2), argv + argc);
  if (algorithms.empty()) algorithms = dist::allreduce_algorithm_names();
  dist::abort_on_exception([&] { run(rounds, algorithms); });
  return 0;
}

// Averages ResNet-50's gradient set (161 tensors, 25,557,032 float32 values) across the ranks with
// every all-reduce algorithm and wire dtype, beside plain MPI_Allreduce per tensor and fused (each
// followed by the division by the number of ranks; the same code as bench/mpi_allreduce, the plain MPI
// program that checks these baseline lines against what a program without kusari gets).
//   mpiexec -n 2 build/bench/allreduce [rounds [algorithm...]]
// BENCH_MPI_THREAD_LEVEL=single initialises MPI without MPI_THREAD_MULTIPLE (kusari's default asks for it).
// Rank 0 prints one line per setting, "allreduce_resnet50_<algorithm>_<dtype>: X ms": the median over
// the rounds of the slowest rank's time; then, per wire dtype, the fastest kusari setting's speed
// relative to the faster MPI_Allreduce way.

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <kusari/kusari.h>
#include <kusari/distributed/mpi_interop.h>

#include "allreduce_common.h"

namespace {

using namespace kusari;
namespace dist = kusari::distributed;

// Rewrites the gradients from their initial values, as backward would: every setting then starts
// from the same values and the same cache state.
void refill(const std::vector<Array>& grads, const std::vector<Array>& initial) {
  for (size_t i = 0; i < grads.size(); ++i) {
    std::memcpy(grads[i].host_data(), initial[i].host_data(), static_cast<size_t>(grads[i].nbytes()));
  }
}

// One way of averaging the gradients across the ranks.
struct Setting {
  std::string name;
  std::function<void()> average;
  std::string kusari_wire;  // the wire dtype of a kusari setting; empty for an MPI_Allreduce baseline
  std::vector<double> times = {};
};

void run(int rounds, const std::vector<std::string>& algorithms) {
  // MPI initialised here at a lower thread level is the one kusari then uses.
  const char* level = std::getenv("BENCH_MPI_THREAD_LEVEL");
  if (level && std::string(level) == "single") {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
    std::atexit([] { MPI_Finalize(); });  // kusari finalizes only the MPI it initialised
  } else if (level && *level && std::string(level) != "multiple") {
    throw ValueError(cat("BENCH_MPI_THREAD_LEVEL: expected single or multiple, got '", level, "'"));
  }
  dist::ensure_mpi_initialized();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<Array> initial, grads;
  int64_t total = 0;
  for (int64_t n : ::bench::resnet50_gradient_sizes()) {
    initial.push_back(Array::uniform({n}, -1, 1, static_cast<uint64_t>(rank * 1000 + static_cast<int>(initial.size()))));
    grads.push_back(initial.back().copy());
    total += n;
  }
  if (rank == 0) {
    std::printf("# %zu tensors, %lld float32 values, %d ranks, median of %d rounds, MPI thread level %s\n",
                grads.size(), static_cast<long long>(total), size, rounds,
                dist::mpi_thread_level() == dist::ThreadLevel::multiple ? "multiple" : "below multiple");
  }

  std::vector<::bench::Tensor> tensors;
  for (const Array& g : grads) tensors.push_back({g.data<float>(), g.size()});
  std::vector<float> fused(static_cast<size_t>(total));
  std::vector<Setting> settings;
  settings.push_back({"mpi_per_tensor_float32", [&] { ::bench::average_per_tensor(tensors, MPI_COMM_WORLD); }, ""});
  settings.push_back({"mpi_fused_float32", [&] { ::bench::average_fused(tensors, fused, MPI_COMM_WORLD); }, ""});
  for (const std::string& name : algorithms) {
    for (const Dtype wire : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
      const dist::Communicator comm = dist::create_communicator(name, {.wire_dtype = wire});
      settings.push_back({name + "_" + dtype_name(wire), [&grads, comm] { comm.allreduce_grad(grads); },
                          dtype_name(wire)});
    }
  }

  // Every round times every setting once, so that load changes on a shared machine hit all alike.
  for (Setting& setting : settings) setting.average();
  for (int round = 0; round < rounds; ++round) {
    for (Setting& setting : settings) {
      refill(grads, initial);
      setting.times.push_back(::bench::time_once(setting.average));
    }
  }
  if (rank != 0) return;
  double baseline = 1e300;
  std::map<std::string, std::pair<double, std::string>> best;  // per wire dtype: the fastest kusari setting
  for (const Setting& setting : settings) {
    const double ms = ::bench::median(setting.times);
    std::printf("allreduce_resnet50_%s: %.1f ms\n", setting.name.c_str(), ms);
    if (setting.kusari_wire.empty()) {
      baseline = std::min(baseline, ms);
    } else if (!best.count(setting.kusari_wire) || ms < best[setting.kusari_wire].first) {
      best[setting.kusari_wire] = {ms, setting.name};
    }
  }
  for (const auto& [wire, fastest] : best) {
    std::printf("# best %s wire: %s, %.2fx as fast as the faster MPI_Allreduce way (%.1f ms)\n", wire.c_str(),
                fastest.second.c_str(), baseline / fastest.first, baseline);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  std::vector<std::string> algorithms(argv + std::min(argc, 2), argv + argc);
  if (algorithms.empty()) algorithms = dist::allreduce_algorithm_names();
  dist::abort_on_exception([&] { run(rounds, algorithms); });
  return 0;
}

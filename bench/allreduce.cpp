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
#include <map>
#include <string>
#include <vector>

#include <kusari/kusari.h>
#include <kusari/distributed/mpi_interop.h>

#include "allreduce_settings.h"
#include "bench_util.h"

namespace {

using namespace kusari;
namespace dist = kusari::distributed;

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
  ::bench::GradientSet set(rank);
  if (rank == 0) {
    std::printf("# %zu tensors, %lld float32 values, %d ranks, median of %d rounds, MPI thread level %s\n",
                set.grads.size(), static_cast<long long>(set.total), size, rounds,
                dist::mpi_thread_level() == dist::ThreadLevel::multiple ? "multiple" : "below multiple");
  }
  std::vector<::bench::AllreduceSetting> settings = ::bench::allreduce_settings(set, algorithms);
  ::bench::time_settings(settings, set, rounds);
  if (rank != 0) return;
  double baseline = 1e300;
  std::map<std::string, std::pair<double, std::string>> best;  // per wire dtype: the fastest kusari setting
  for (const ::bench::AllreduceSetting& setting : settings) {
    const double ms = ::bench::median(setting.times);
    std::printf("allreduce_resnet50_%s: %.1f ms\n", setting.name.c_str(), ms);
    const std::string wire = dtype_name(setting.options.wire_dtype);
    if (setting.baseline) {
      baseline = std::min(baseline, ms);
    } else if (!best.count(wire) || ms < best[wire].first) {
      best[wire] = {ms, setting.name};
    }
  }
  for (const auto& [wire, fastest] : best) {
    std::printf("# best %s wire: %s, %.2fx as fast as the faster MPI_Allreduce way (%.1f ms)\n", wire.c_str(),
                fastest.second.c_str(), baseline / fastest.first, baseline);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  std::vector<std::string> algorithms;
  CLI::App app{"Every all-reduce algorithm and wire dtype on ResNet-50's gradients, under mpiexec."};
  app.add_option("rounds", rounds, "timed rounds per setting (the median is printed)")
      ->check(kusari::flags::positive_integer())
      ->capture_default_str();
  app.add_option("algorithms", algorithms, "only these algorithms (default: every one)")
      ->check(kusari::flags::one_of(dist::allreduce_algorithm_names()));
  kusari::bench::parse_or_exit(app, argc, argv);
  if (algorithms.empty()) algorithms = dist::allreduce_algorithm_names();
  dist::abort_on_exception([&] { run(rounds, algorithms); });
  return 0;
}

// The MPI_Allreduce baseline as a plain MPI program gets it, linking no kusari: ResNet-50's gradient
// set (161 float32 tensors) averaged across the ranks with one MPI_Allreduce per tensor and with one
// over all of them fused, each followed by the division by the number of ranks, exactly as
// bench/allreduce's own baseline lines do.
//   mpiexec -n 2 build/bench/mpi_allreduce [rounds [single|multiple]] [--sizes]
// The second argument is the thread level asked of MPI_Init_thread (default single, as MPI_Init).
// Rank 0 prints "allreduce_resnet50_plain_mpi_<way>_float32_<level>: X ms", the median over the rounds
// of the slowest rank's time, on the same terms as bench/allreduce. With --sizes, instead, one float32
// MPI_Allreduce of each size from 64 KiB to 16 MiB, timed alone (after a barrier) and as the mean of
// ten back to back (as one all-reduce per tensor runs): "allreduce_plain_mpi_<bytes>B_<alone|back_to_back>:
// X ms, Y ns/B" (the time over the bytes), each the median over the rounds.

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "allreduce_common.h"
#include "bench_util.h"

namespace {

// The --sizes lines (see the top).
void time_sizes(int rounds, int rank) {
  std::vector<float> values(size_t{1} << 22, 1.0f);
  for (int64_t bytes = int64_t{1} << 16; bytes <= int64_t{1} << 24; bytes *= 4) {
    const int n = static_cast<int>(bytes / 4);
    const auto once = [&] { MPI_Allreduce(MPI_IN_PLACE, values.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
    std::vector<double> alone, back_to_back;
    once();
    for (int round = 0; round < rounds; ++round) {
      alone.push_back(bench::time_once(once));
      back_to_back.push_back(bench::time_once([&] {
                               for (int k = 0; k < 10; ++k) once();
                             }) / 10);
    }
    if (rank != 0) continue;
    for (const auto& [way, times] : {std::pair{"alone", &alone}, std::pair{"back_to_back", &back_to_back}}) {
      const double ms = bench::median(*times);
      std::printf("allreduce_plain_mpi_%lldB_%s: %.3f ms, %.2f ns/B\n", static_cast<long long>(bytes), way, ms,
                  ms * 1e6 / static_cast<double>(bytes));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  bool sizes = false;
  std::string level = "single";
  CLI::App app{"MPI_Allreduce of ResNet-50's gradients as a plain MPI program, under mpiexec."};
  app.add_option("rounds", rounds, "timed rounds (the median is printed)")->check(kusari::flags::positive_integer())
      ->capture_default_str();
  app.add_option("level", level, "the thread level asked of MPI_Init_thread")
      ->check(kusari::flags::one_of({"single", "multiple"}))->capture_default_str();
  app.add_flag("--sizes", sizes, "time single all-reduces of 64 KiB to 16 MiB, alone and back to back, instead");
  kusari::bench::parse_or_exit(app, argc, argv);
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, level == "multiple" ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (sizes) {
    time_sizes(rounds, rank);
    MPI_Finalize();
    return 0;
  }
  std::vector<std::vector<float>> initial, grads;
  std::mt19937 engine(static_cast<unsigned>(rank));
  std::uniform_real_distribution<float> draw(-1, 1);
  for (int64_t n : bench::resnet50_gradient_sizes()) {
    initial.emplace_back(static_cast<size_t>(n));
    for (float& v : initial.back()) v = draw(engine);
    grads.push_back(initial.back());
  }
  std::vector<bench::Tensor> tensors;
  for (std::vector<float>& g : grads) tensors.push_back({g.data(), static_cast<int64_t>(g.size())});
  std::vector<float> fused(static_cast<size_t>(std::accumulate(
      tensors.begin(), tensors.end(), int64_t{0}, [](int64_t n, const bench::Tensor& t) { return n + t.size; })));
  const std::vector<std::pair<std::string, std::function<void()>>> ways = {
      {"per_tensor", [&] { bench::average_per_tensor(tensors, MPI_COMM_WORLD); }},
      {"fused", [&] { bench::average_fused(tensors, fused, MPI_COMM_WORLD); }},
  };
  std::vector<std::vector<double>> times(ways.size());
  for (const auto& way : ways) way.second();
  for (int round = 0; round < rounds; ++round) {
    for (size_t w = 0; w < ways.size(); ++w) {
      for (size_t i = 0; i < grads.size(); ++i) std::memcpy(grads[i].data(), initial[i].data(), grads[i].size() * 4);
      times[w].push_back(bench::time_once(ways[w].second));
    }
  }
  if (rank == 0) {
    const bool got = level == "single" || provided == MPI_THREAD_MULTIPLE;
    for (size_t w = 0; w < ways.size(); ++w) {
      std::printf("allreduce_resnet50_plain_mpi_%s_float32_%s: %.1f ms%s\n", ways[w].first.c_str(), level.c_str(),
                  bench::median(times[w]), got ? "" : " (MPI did not provide MPI_THREAD_MULTIPLE)");
    }
  }
  MPI_Finalize();
  return 0;
}

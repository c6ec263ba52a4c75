// The MPI_Allreduce baseline as a plain MPI program gets it, linking no kusari: ResNet-50's gradient
// set (161 float32 tensors) averaged across the ranks with one MPI_Allreduce per tensor and with one
// over all of them fused, each followed by the division by the number of ranks, exactly as
// bench/allreduce's own baseline lines do.
//   mpiexec -n 2 build/bench/mpi_allreduce [rounds [single|multiple]]
// The second argument is the thread level asked of MPI_Init_thread (default single, as MPI_Init).
// Rank 0 prints "allreduce_resnet50_plain_mpi_<way>_float32_<level>: X ms", the median over the rounds
// of the slowest rank's time, on the same terms as bench/allreduce.

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

int main(int argc, char** argv) {
  int rounds = 7;
  std::string level = "single";
  CLI::App app{"MPI_Allreduce of ResNet-50's gradients as a plain MPI program, under mpiexec."};
  app.add_option("rounds", rounds, "timed rounds (the median is printed)")->check(kusari::flags::positive_integer())
      ->capture_default_str();
  app.add_option("level", level, "the thread level asked of MPI_Init_thread")
      ->check(kusari::flags::one_of({"single", "multiple"}))->capture_default_str();
  kusari::bench::parse_or_exit(app, argc, argv);
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, level == "multiple" ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
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

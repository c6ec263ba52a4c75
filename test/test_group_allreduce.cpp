// The GPUs' all-reduce compositions (detail/group_allreduce.h) run over MPI groups on host arrays, under
// mpiexec (2 ranks on one node, 3 ranks on nodes of 1, 4 on pretend nodes of 2; and across the hosts of
// scripts/hosts.sh): every pattern, dtype and size, padding and colors included, equals the sum one
// process computes from every rank's contribution; multi_color's groups hold their rings' rank orders; the
// largest value over the ranks through each composition's groups, and the average with automatic's float16
// factors made from it, equal one process's.

#include "testing.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <kusari/distributed/detail/group_allreduce.h>
#include <kusari/distributed/detail/group_average.h>
#include <kusari/distributed/detail/mpi_collective_group.h>
#include <kusari/distributed/detail/ring.h>
#include <kusari/distributed/mpi_session.h>

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_error;

namespace {

// MPI groups for the composition.
std::unique_ptr<CollectiveGroup> mpi_group(MPI_Comm comm) { return std::make_unique<MpiCollectiveGroup>(comm); }

// The world's groups on this machine's nodes, or KUSARI_RANKS_PER_NODE's pretend ones.
const CommGroups& world() {
  ensure_mpi_initialized();
  static const CommGroups groups(MPI_COMM_WORLD, ranks_per_node_from_env());
  return groups;
}

// Rank r's contribution of n elements: whole numbers that differ by rank and index, exact in every
// dtype and in any order of summing (so that every composition's result is the one sum).
std::vector<double> whole_contribution(int rank, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((rank + 1) * static_cast<int>(i % 13) - 6);
  return v;
}

// Rank r's contribution of fractions, for float32 at a tolerance.
std::vector<double> fractional_contribution(int rank, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + 1.3 * rank);
  return v;
}

// The sum of every rank's contribution, as one process computes it.
std::vector<double> one_process_sum(const std::function<std::vector<double>(int, int64_t)>& contribution, int ranks,
                                    int64_t n) {
  std::vector<double> sum(static_cast<size_t>(n), 0.0);
  for (int r = 0; r < ranks; ++r) {
    const std::vector<double> v = contribution(r, n);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
  }
  return sum;
}

// An algorithm, its options and the wire size that picks the pattern (hybrid's threshold is 4 KiB here).
struct Case {
  std::string name;
  CommunicatorOptions options;
};

std::vector<Case> cases() {
  return {{"nccl", {}},
          {"flat", {}},
          {"hierarchical", {}},
          {"two_dimensional", {}},
          {"hybrid", {.hybrid_threshold_bytes = 4096}},
          {"multi_color", {.colors = 1}},
          {"multi_color", {.colors = 2}},
          {"multi_color", {.colors = 3}},
          {"multi_color", {}}};
}

}  // namespace

TEST_CASE("every composition over MPI groups equals one process's sum, exactly for whole numbers") {
  const int ranks = world().topology().size, rank = world().topology().rank;
  for (const Case& c : cases()) {
    const AllreduceGroups groups = make_allreduce_groups(c.name, c.options, world(), mpi_group);
    for (const Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
      // 1 and 3 elements: fewer than some colors and node ranks (empty shares, padding); 4099: hybrid's
      // threshold crossed in float32, not in the half types.
      for (const int64_t n : {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{1000}, int64_t{4099}}) {
        CAPTURE(c.name);
        CAPTURE(c.options.colors);
        CAPTURE(dtype);
        CAPTURE(n);
        const NcclPattern pattern = nccl_pattern(c.name, c.options, n * static_cast<int64_t>(itemsize(dtype)));
        const Array array = Array::from_vector(whole_contribution(rank, n), {n}).astype(dtype);
        allreduce_over_groups(pattern, groups, array);
        CHECK(array.to_vector<double>() == one_process_sum(whole_contribution, ranks, n));
      }
    }
  }
}

TEST_CASE("every composition over MPI groups sums float32 fractions to one process's sum within rounding") {
  const int ranks = world().topology().size, rank = world().topology().rank;
  const int64_t n = 5003;
  const std::vector<double> want = one_process_sum(fractional_contribution, ranks, n);
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    CAPTURE(c.options.colors);
    const AllreduceGroups groups = make_allreduce_groups(c.name, c.options, world(), mpi_group);
    const Array array = Array::from_vector(fractional_contribution(rank, n), {n}).astype(Dtype::float32);
    allreduce_over_groups(nccl_pattern(c.name, c.options, n * 4), groups, array);
    const std::vector<double> got = array.to_vector<double>();
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("every composition's groups give every rank the largest value over the ranks") {
  const int ranks = world().topology().size, rank = world().topology().rank;
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    CAPTURE(c.options.colors);
    const AllreduceGroups groups = make_allreduce_groups(c.name, c.options, world(), mpi_group);
    // Element 0 largest on the middle rank, element 1 on the last, element 2 an infinity from rank 0.
    const std::vector<double> mine = {rank == ranks / 2 ? 9.0 : rank * 0.5, static_cast<double>(rank),
                                      rank == 0 ? INFINITY : 1.0};
    const Array array = Array::from_vector(mine, {3}).astype(Dtype::float32);
    max_over_groups(nccl_pattern(c.name, c.options, 4), groups, array);
    CHECK(array.to_vector<double>() == std::vector<double>{9.0, static_cast<double>(ranks - 1), INFINITY});
  }
}

// The float32 average one process computes from every rank's contribution as the MPI groups' wire does:
// each contribution times prescale rounded to float16, their sum (exact here) rounded to float16, times
// postscale in float32.
std::vector<double> one_process_float16_average(const std::function<std::vector<double>(int, int64_t)>& contribution,
                                                int ranks, int64_t n, const WireScaling& scaling) {
  std::vector<double> sum(static_cast<size_t>(n), 0.0);
  for (int r = 0; r < ranks; ++r) {
    const std::vector<double> scaled =
        (Array::from_vector(contribution(r, n), {n}).astype(Dtype::float32) * static_cast<double>(scaling.prescale))
            .astype(Dtype::float16)
            .to_vector<double>();
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += scaled[i];
  }
  return (Array::from_vector(sum, {n}).astype(Dtype::float16).astype(Dtype::float32) *
          static_cast<double>(scaling.postscale))
      .to_vector<double>();
}

TEST_CASE("average_over_groups: automatic's float16 factors from the largest magnitude over the ranks, as one process") {
  const int ranks = world().topology().size, rank = world().topology().rank;
  const int64_t n = 1001;
  // Every rank's largest magnitude is 12·(rank+1)-6; the last rank's is the largest.
  const WireScaling scaling =
      averaging_scaling(AveragingPolicy::automatic, Dtype::float16, ranks, static_cast<float>(12 * ranks - 6));
  CHECK(scaling.prescale > 1);  // small whole numbers are scaled up, exactly
  for (const int64_t n : {int64_t{1001}, int64_t{3001}}) {  // 3001: hybrid's threshold crossed (NCCL's own)
    const std::vector<double> want = one_process_float16_average(whole_contribution, ranks, n, scaling);
    for (const Case& c : cases()) {
      CAPTURE(c.name);
      CAPTURE(c.options.colors);
      CAPTURE(n);
      const AllreduceGroups groups = make_allreduce_groups(c.name, c.options, world(), mpi_group);
      const Array fused = Array::from_vector(whole_contribution(rank, n), {n}).astype(Dtype::float32);
      const Array average = average_over_groups(nccl_pattern(c.name, c.options, n * 2), groups, fused, Dtype::float16,
                                                AveragingPolicy::automatic, std::nullopt, ranks);
      CHECK(average.dtype() == Dtype::float32);
      CHECK(average.to_vector<double>() == want);
    }
  }
}

TEST_CASE("average_over_groups: a NaN on one rank reaches every rank under automatic; given factors are used as given") {
  const int ranks = world().topology().size, rank = world().topology().rank;
  const int64_t n = 7;
  const AllreduceGroups groups = make_allreduce_groups("nccl", {}, world(), mpi_group);
  // Whole multiples of 2^-26: below float16's smallest step (2^-24) divide_before's factors round them,
  // automatic's large prescale for them without the NaN keeps them exact (every sum of the rounded values
  // is exact, so any order of summing gives one result).
  const auto tiny_contribution = [](int r, int64_t count) {
    std::vector<double> v = whole_contribution(r, count);
    for (double& x : v) x = std::ldexp(x, -26);
    return v;
  };
  std::vector<double> mine = tiny_contribution(rank, n);
  if (rank == ranks - 1) mine[3] = NAN;
  const Array average = average_over_groups(NcclPattern::all, groups, Array::from_vector(mine, {n}).astype(Dtype::float32),
                                            Dtype::float16, AveragingPolicy::automatic, std::nullopt, ranks);
  const std::vector<double> got = average.to_vector<double>();
  const WireScaling before = averaging_scaling(AveragingPolicy::divide_before, Dtype::float16, ranks);
  const std::vector<double> want = one_process_float16_average(tiny_contribution, ranks, n, before);
  const WireScaling finite =
      averaging_scaling(AveragingPolicy::automatic, Dtype::float16, ranks, static_cast<float>(std::ldexp(12 * ranks, -26)));
  CHECK(one_process_float16_average(tiny_contribution, ranks, n, finite) != want);
  for (int64_t i = 0; i < n; ++i) {
    CAPTURE(i);
    if (i == 3) {
      CHECK(std::isnan(got[3]));
    } else {
      CHECK(got[static_cast<size_t>(i)] == want[static_cast<size_t>(i)]);
    }
  }
  // A float32 wire with no factors sums in place; given factors replace the policy's.
  const Array fused = Array::from_vector(whole_contribution(rank, n), {n}).astype(Dtype::float32);
  const Array summed = average_over_groups(NcclPattern::all, groups, fused, Dtype::float32, AveragingPolicy::automatic,
                                           WireScaling{1, 1}, ranks);
  CHECK(summed.storage() == fused.storage());
  CHECK(summed.to_vector<double>() == one_process_sum(whole_contribution, ranks, n));
  const Array doubled = average_over_groups(NcclPattern::all, groups,
                                            Array::from_vector(whole_contribution(rank, n), {n}).astype(Dtype::float32),
                                            Dtype::float32, AveragingPolicy::divide_before, WireScaling{1, 2}, ranks);
  std::vector<double> twice = one_process_sum(whole_contribution, ranks, n);
  for (double& v : twice) v *= 2;
  CHECK(doubled.to_vector<double>() == twice);
}

TEST_CASE("each algorithm makes the groups its composition sums over") {
  const Topology& topology = world().topology();
  const bool colors_between_nodes = topology.intra_size > 1 && topology.homogeneous;
  const AllreduceGroups nccl = make_allreduce_groups("nccl", {}, world(), mpi_group);
  CHECK(nccl.all->size() == topology.size);
  CHECK_FALSE(nccl.intra);
  CHECK_FALSE(nccl.inter);
  const AllreduceGroups hierarchical = make_allreduce_groups("hierarchical", {}, world(), mpi_group);
  CHECK(hierarchical.intra->size() == topology.intra_size);
  CHECK(static_cast<bool>(hierarchical.inter) == (topology.intra_rank == 0));  // the nodes' first ranks
  const AllreduceGroups two_dimensional = make_allreduce_groups("two_dimensional", {}, world(), mpi_group);
  CHECK(two_dimensional.inter->size() == topology.inter_size);
  const AllreduceGroups hybrid = make_allreduce_groups("hybrid", {}, world(), mpi_group);
  CHECK((hybrid.all && hybrid.intra));
  const AllreduceGroups colored = make_allreduce_groups("multi_color", {.colors = 3}, world(), mpi_group);
  REQUIRE(colored.colors.size() == 3);
  CHECK(static_cast<bool>(colored.intra) == colors_between_nodes);
  CHECK(colored.colors[0]->size() == (colors_between_nodes ? topology.inter_size : topology.size));
}

TEST_CASE("multi_color's groups hold their rings' rank orders: rotated by color, odd colors reversed") {
  const Topology& topology = world().topology();
  const bool between_nodes = topology.intra_size > 1 && topology.homogeneous;
  const int size = between_nodes ? topology.inter_size : topology.size;
  const int position = between_nodes ? topology.inter_rank : topology.rank;  // this rank in the colors' base
  const int colors = 4;
  const AllreduceGroups groups = make_allreduce_groups("multi_color", {.colors = colors}, world(), mpi_group);
  for (int color = 0; color < colors; ++color) {
    CAPTURE(color);
    // Every member's position in the base group, gathered in the color group's rank order.
    const Array mine = Array::from_vector(std::vector<double>{static_cast<double>(position)}, {1}).astype(Dtype::float32);
    const Array gathered = Array::empty({size}, Dtype::float32, Device::cpu());
    groups.colors[static_cast<size_t>(color)]->allgather(mine, gathered);
    std::vector<double> want;
    for (const int r : rotated_order(size, size * color / colors, color % 2 == 1)) want.push_back(r);
    CHECK(gathered.to_vector<double>() == want);
  }
}

TEST_CASE("MPI groups refuse what the collectives cannot take, naming what came") {
  const auto group = mpi_group(MPI_COMM_WORLD);
  const int ranks = group->size();
  const Array four = Array::zeros({4}, Dtype::float32, Device::cpu());
  expect_error<ShapeError>([&] { group->allreduce_sum(four, Array::zeros({3}, Dtype::float32, Device::cpu())); },
                           {"MPI_Allreduce", "expected 4 elements in the result, got 3"});
  expect_error<ShapeError>(
      [&] { group->reduce_scatter_sum(Array::zeros({4 * ranks + 1}, Dtype::float32, Device::cpu()), four); },
      {"MPI_Reduce_scatter_block", cat("expected ", 4 * ranks, " elements in the sent array"),
       cat("got ", 4 * ranks + 1)});
  expect_error<ValueError>([&] { group->broadcast(Array::zeros({4, 4}, Dtype::float32, Device::cpu()).transpose(), 0); },
                           {"MPI_Bcast", "contiguous float32 arrays in host memory", "strided"});
  expect_error<DtypeError>([&] { group->allreduce_sum(Array::zeros({2}, Dtype::int32, Device::cpu()), four); },
                           {"float32, float64, float16 or bfloat16", "int32"});
  expect_error<ValueError>([&] { group->allreduce_sums_at_once({group.get()}, {four, four}); },
                           {"one share per group", "1 groups and 2 shares"});
}

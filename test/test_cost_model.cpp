// The all-reduce cost model (kusari/distributed/cost_model.h, cost_fit.h): its formulas against values
// computed by hand for small P, the bucketed overlap with backward, the calibration fits on synthetic
// timings, and the recommendation on a synthetic two-level cluster.

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include <kusari/distributed/cost_fit.h>
#include <kusari/distributed/cost_model.h>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;
namespace cost = kusari::distributed::cost;
using kusari::distributed::CommunicatorOptions;

namespace {

// One node of `ranks` ranks: α = 1 µs, β = 1 ns per byte; pack and unpack 1 ns, accumulate and add 2 ns
// per element in every wire dtype.
cost::Cluster one_node(int ranks) {
  cost::Cluster c;
  c.ranks = c.ranks_per_node = ranks;
  c.intra = {1e-6, 1e-9};
  c.inter = {1e-5, 1e-9};
  for (cost::WireCosts* w : {&c.float32, &c.float16, &c.bfloat16}) *w = {1e-9, 2e-9, 2e-9, 1e-9, 0.5e-9};
  return c;
}

// Nodes of 2 ranks: α 1 µs and β 0.1 ns inside, α 10 µs and β 1 ns between, one link, no local costs.
cost::Cluster two_level(int ranks) {
  cost::Cluster c;
  c.ranks = ranks;
  c.ranks_per_node = 2;
  c.intra = {1e-6, 1e-10};
  c.inter = {1e-5, 1e-9};
  return c;
}

CommunicatorOptions plain(int64_t chunk_bytes = 1 << 20) {
  CommunicatorOptions options;
  options.check_sizes = false;
  options.chunk_bytes = chunk_bytes;
  return options;
}

}  // namespace

TEST_CASE("the ring's phases: messages per step, the reduce-scatter and the all-gather by hand") {
  CHECK(cost::ring_messages_per_step(1000, 4, 100) == 3);   // segments of 250 in chunks of 100
  CHECK(cost::ring_messages_per_step(1000, 4, 1000) == 1);
  CHECK(cost::ring_messages_per_step(0, 4, 100) == 1);      // an empty segment still sends its message
  const cost::Link link{1e-6, 1e-9};
  // 3 steps × 3 messages × 1 µs + 750 elements × 4 bytes × 1 ns + 750 accumulates × 2 ns.
  CHECK(cost::ring_reduce_scatter_seconds(1000, 4, 4, 100, link, 2e-9) == doctest::Approx(13.5e-6));
  CHECK(cost::ring_allgather_seconds(1000, 4, 4, 100, link) == doctest::Approx(12e-6));
  CHECK(cost::ring_reduce_scatter_seconds(1000, 1, 4, 100, link, 2e-9) == 0);
  // A slower copy through memory for the step with an end in the owned slice: of the 3 steps of 1000 bytes,
  // 2 at 1 ns a byte and 1 at 3 ns.
  const cost::Link streaming{1e-6, 1e-9, 3e-9};
  CHECK(cost::memory_beta(streaming) == 3e-9);
  CHECK(cost::memory_beta(link) == 1e-9);  // unset: β
  CHECK(cost::ring_reduce_scatter_seconds(1000, 4, 4, 100, streaming, 2e-9) == doctest::Approx(15.5e-6));
  CHECK(cost::ring_allgather_seconds(1000, 4, 4, 100, streaming) == doctest::Approx(14e-6));
  // On 2 ranks the one step has an end in memory: 5 messages (500 elements in chunks of 100), 2000 bytes.
  CHECK(cost::ring_allgather_seconds(1000, 2, 4, 100, streaming) == doctest::Approx(5e-6 + 2000 * 3e-9));
  // ring on one node of 4: + 250 own elements packed and 1000 unpacked (1 ns each).
  CHECK(cost::allreduce_seconds(one_node(4), "ring", plain(400), {600, 400}) == doctest::Approx(26.75e-6));
}

TEST_CASE("MPICH's collectives: Rabenseifner for large built-in sums, recursive doubling otherwise") {
  const cost::Span pair{2, 2, {1e-6, 1e-9}, {1e-5, 1e-9}, 1, {}};
  // 4000 bytes of float32: 2 × (1 µs + 2000 bytes × 1 ns) + 500 reductions × 2 ns.
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, pair, 2e-9) == doctest::Approx(7e-6));
  // A user op (the half-precision sum): one exchange of all 2000 bytes, all 1000 elements reduced.
  CHECK(cost::mpi_allreduce_seconds(1000, 2, false, pair, 2e-9) == doctest::Approx(5e-6));
  // 400 bytes: recursive doubling even for the built-in op.
  CHECK(cost::mpi_allreduce_seconds(100, 4, true, pair, 2e-9) == doctest::Approx(1e-6 + 400e-9 + 200e-9));
  // Bcast on 2 ranks: a binomial tree, one message.
  CHECK(cost::mpi_bcast_seconds(1000, 4, pair) == doctest::Approx(1e-6 + 4000e-9));
  // Four ranks in two nodes: the recursive-doubling step inside the node, then the one across it, where
  // the node's two ranks share its link (β doubled).
  const cost::Span four{4, 2, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  CHECK(cost::mpi_allreduce_seconds(10, 4, true, four, 0) == doctest::Approx((1e-6 + 40e-10) + (1e-5 + 40 * 2e-9)));
  CHECK(cost::mpi_reduce_seconds(10, 4, true, four, 0) == cost::mpi_allreduce_seconds(10, 4, true, four, 0));
  // Rabenseifner on two nodes of two, 4000 bytes: the halving step inside the node carries 2000 bytes, the one
  // across it 1000 (β doubled); twice for the all-gather; 750 reductions.
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, four, 2e-9) ==
        doctest::Approx(2 * ((1e-6 + 2000e-10) + (1e-5 + 1000 * 2e-9)) + 750 * 2e-9));
  // Three ranks of one node: p = 2 and two fold exchanges of the whole 4000 bytes (one reduced) around
  // the pair's Rabenseifner (MPI_Reduce folds once).
  const cost::Span three{3, 3, {1e-6, 1e-9}, {1e-5, 1e-9}, 1, {}};
  const double pair_part = 2 * (1e-6 + 2000e-9) + 500 * 2e-9;
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, three, 2e-9) ==
        doctest::Approx(pair_part + 2 * (1e-6 + 4000e-9) + 1000 * 2e-9));
  CHECK(cost::mpi_reduce_seconds(1000, 4, true, three, 2e-9) ==
        doctest::Approx(pair_part + (1e-6 + 4000e-9) + 1000 * 2e-9));
  expect_error<ValueError>([] { cost::mpi_bcast_seconds(10, 4, cost::Span{4, 0, {}, {}, 1, {}}); },
                           {"mpi_bcast_seconds", "≥ 1"});
}

TEST_CASE("Open MPI's all-reduce: recursive doubling, a ring or Rabenseifner's by ranks and bytes") {
  cost::Span pair{2, 2, {1e-6, 1e-9}, {1e-5, 1e-9}, 1, {}};
  pair.mpi.open_mpi = true;
  // 4000 bytes on 2 ranks: recursive doubling (MPICH: Rabenseifner's), one exchange of all of it.
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, pair, 2e-9) == doctest::Approx(1e-6 + 4000e-9 + 1000 * 2e-9));
  // 6000 bytes: a ring, 2 messages of 3000 bytes, half the elements reduced.
  CHECK(cost::mpi_allreduce_seconds(1500, 4, true, pair, 2e-9) == doctest::Approx(2 * (1e-6 + 3000e-9) + 750 * 2e-9));
  // 256 KiB of the half-precision sum: Rabenseifner's (MPICH: recursive doubling for a user op).
  const int64_t n = 1 << 17;
  CHECK(cost::mpi_allreduce_seconds(n, 2, false, pair, 2e-9) ==
        doctest::Approx(2 * (1e-6 + double(n) * 1e-9) + double(n) / 2 * 2e-9));
  // Four ranks in two nodes: 4 half-precision values (8 bytes) go round a ring, 6 messages of 2 bytes over
  // the wire; 3 values (fewer than the ranks) and 40 bytes by recursive doubling, as under MPICH;
  // composition by node does not apply.
  cost::Span four{4, 2, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  const double mpich_three = cost::mpi_allreduce_seconds(3, 2, false, four, 0);
  const double mpich_ten = cost::mpi_allreduce_seconds(10, 4, true, four, 0);
  four.mpi.open_mpi = true;
  four.mpi.by_node = true;
  CHECK(cost::mpi_allreduce_seconds(4, 2, false, four, 0) == doctest::Approx(6 * (1e-5 + 2e-9)));
  CHECK(cost::mpi_allreduce_seconds(3, 2, false, four, 0) == doctest::Approx(mpich_three));
  CHECK(cost::mpi_allreduce_seconds(10, 4, true, four, 0) == doctest::Approx(mpich_ten));
  // A cluster says which MPI it is: MPICH composing by node or Open MPI, not both.
  cost::Cluster both = two_level(4);
  both.mpi.by_node = both.mpi.open_mpi = true;
  expect_error<ValueError>([&] { both.check(); }, {"mpi.by_node", "mpi.open_mpi", "both"});
}

TEST_CASE("MPICH's all-reduce composed by node: a reduce in the node, the first ranks' all-reduce, a broadcast") {
  cost::Span four{4, 2, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  four.mpi.by_node = true;
  // 4000 bytes of float32: the node's reduce (Rabenseifner on 2: 2 × (1 µs + 2000 B × 0.1 ns), 500 adds),
  // the two first ranks' all-reduce over the wire alone (2 × (10 µs + 2000 B × 1 ns), 500 adds), the
  // node's broadcast (one message of 4000 B).
  const double node_reduce = 2 * (1e-6 + 2000e-10) + 500 * 2e-9;
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, four, 2e-9) ==
        doctest::Approx(node_reduce + 2 * (1e-5 + 2000e-9) + 500 * 2e-9 + (1e-6 + 4000e-10)));
  // The half-precision sum: recursive doubling in each part, every element reduced twice; one exchange of
  // 2000 bytes on the wire where the flat formula sends it from both ranks of a node over its one link.
  CHECK(cost::mpi_allreduce_seconds(1000, 2, false, four, 2e-9) ==
        doctest::Approx((1e-6 + 2000e-10 + 1000 * 2e-9) + (1e-5 + 2000e-9 + 1000 * 2e-9) + (1e-6 + 2000e-10)));
  // Three nodes of two: the first ranks' all-reduce is MPICH's over 3 ranks of one each (its fold step).
  cost::Span six{6, 2, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  six.mpi.by_node = true;
  const cost::Span pair{2, 2, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  const cost::Span firsts{3, 1, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, six, 2e-9) ==
        doctest::Approx(cost::mpi_reduce_seconds(1000, 4, true, pair, 2e-9) +
                        cost::mpi_allreduce_seconds(1000, 4, true, firsts, 2e-9) + cost::mpi_bcast_seconds(1000, 4, pair)));
  // One node, or nodes of one rank: nothing to compose, the flat formulas.
  cost::Span one_node{2, 2, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  const double alone = cost::mpi_allreduce_seconds(1000, 4, true, one_node, 0);
  one_node.mpi.by_node = true;
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, one_node, 0) == alone);
  cost::Span singles{2, 1, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  const double single = cost::mpi_allreduce_seconds(1000, 4, true, singles, 0);
  singles.mpi.by_node = true;
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, singles, 0) == single);
}

TEST_CASE("the node phases charge each pass its own cost, and colors share the node's links") {
  cost::Cluster cluster = two_level(4);
  cluster.float32 = {1e-9, 3e-9, 5e-9, 2e-9, 0};
  // two_dimensional, 1000 elements: 500 packed, 500 accumulated (3 ns) in the node's reduce-scatter, 250
  // added (5 ns) in the slice's ring across the nodes, 1000 unpacked; plus the messages of before.
  const double local = 500 * 1e-9 + 500 * 3e-9 + 250 * 5e-9 + 1000 * 2e-9;
  CHECK(cost::allreduce_seconds(cluster, "two_dimensional", plain(), {1000}) == doctest::Approx(26.4e-6 + local));
  // Two colors: each color's ring across the nodes carries 250 elements, the node's four flows on its one
  // link (β × 4): 2 × (10 µs + 500 bytes × 4 ns); the adds of both colors in full.
  CommunicatorOptions two = plain();
  two.colors = 2;
  const double node_phases = 2 * (1e-6 + 2000e-10) + local - 250 * 5e-9;
  CHECK(cost::allreduce_seconds(cluster, "multi_color", two, {1000}) ==
        doctest::Approx(node_phases + 2 * (1e-5 + 500 * 4e-9) + 250 * 5e-9));
  // An empty call costs its size check only.
  CommunicatorOptions checked = plain();
  checked.check_sizes = true;
  CHECK(cost::allreduce_seconds(cluster, "ring", checked, {}) == doctest::Approx((1e-6 + 8e-10) + (1e-5 + 8 * 2e-9)));
  cost::Cluster bad = cluster;
  bad.links_per_node = 0;
  expect_error<ValueError>([&] { cost::allreduce_seconds(bad, "ring", plain(), {10}); }, {"links_per_node", "0"});
  bad = cluster;
  bad.inter.beta = -1;
  expect_error<ValueError>([&] { cost::allreduce_seconds(bad, "ring", plain(), {10}); }, {"β", "-1"});
  bad = cluster;
  bad.intra.beta_memory = std::nan("");
  expect_error<ValueError>([&] { cost::allreduce_seconds(bad, "ring", plain(), {10}); }, {"β_memory", "nan"});
}

TEST_CASE("the algorithms by hand on two nodes of two ranks, and the checks every call adds") {
  const cost::Cluster cluster = two_level(4);
  const CommunicatorOptions options = plain();
  // hierarchical: MPI_Reduce in the node (Rabenseifner: 2 × (1 µs + 2000 bytes × 0.1 ns)), MPI_Bcast (1 µs +
  // 4000 × 0.1 ns), the leaders' ring (2 × (10 µs + 2000 bytes × 1 ns)).
  CHECK(cost::allreduce_seconds(cluster, "hierarchical", options, {1000}) == doctest::Approx(27.8e-6));
  // ring over the 4 ranks runs at its slowest hop: 2 × (3 × 10 µs + 3000 bytes × 1 ns).
  CHECK(cost::allreduce_seconds(cluster, "ring", options, {1000}) == doctest::Approx(66e-6));
  // two_dimensional: reduce-scatter and all-gather in the node (2 × (1 µs + 2000 × 0.1 ns)), then one ring
  // per rank across the nodes on its 500-element slice, the two sharing the node's link (β doubled):
  // 2 × (10 µs + 1000 bytes × 2 ns).
  CHECK(cost::allreduce_seconds(cluster, "two_dimensional", options, {1000}) == doctest::Approx(26.4e-6));
  // multi_color with one color is two_dimensional; hybrid below its threshold is hierarchical.
  CommunicatorOptions one_color = options;
  one_color.colors = 1;
  CHECK(cost::allreduce_seconds(cluster, "multi_color", one_color, {1000}) ==
        doctest::Approx(cost::allreduce_seconds(cluster, "two_dimensional", options, {1000})));
  CHECK(cost::allreduce_seconds(cluster, "hybrid", options, {1000}) ==
        cost::allreduce_seconds(cluster, "hierarchical", options, {1000}));
  CommunicatorOptions low = options;
  low.hybrid_threshold_bytes = 4000;
  CHECK(cost::allreduce_seconds(cluster, "hybrid", low, {1000}) == cost::allreduce_seconds(cluster, "ring", low, {1000}));
  // naive: one MPI_Allreduce per tensor; flat: one for all.
  CHECK(cost::allreduce_seconds(cluster, "naive", options, {500, 500}) ==
        doctest::Approx(2 * cost::mpi_allreduce_seconds(500, 4, true, cluster.all(), 0)));
  CHECK(cost::allreduce_seconds(cluster, "flat", options, {500, 500}) ==
        doctest::Approx(cost::mpi_allreduce_seconds(1000, 4, true, cluster.all(), 0)));
  // The size check (an 8-byte all-gather by recursive doubling) and float16's scan and 4-byte agreement.
  CommunicatorOptions checked = options;
  checked.check_sizes = true;
  const double check = (1e-6 + 8e-10) + (1e-5 + 8 * 2e-9);
  CHECK(cost::allreduce_seconds(cluster, "ring", checked, {1000}) == doctest::Approx(66e-6 + check));
  cost::Cluster scanning = cluster;
  scanning.float16.max_abs = 1e-9;
  CommunicatorOptions half = options;
  half.wire_dtype = Dtype::float16;
  const double agree = (1e-6 + 4e-10) + (1e-5 + 4 * 2e-9);
  CHECK(cost::allreduce_seconds(scanning, "ring", half, {1000}) ==
        doctest::Approx(2 * (3 * 1e-5 + 1500e-9) + 1000e-9 + agree));
  // One rank: the conversions only.
  CHECK(cost::allreduce_seconds(one_node(1), "hierarchical", options, {1000}) == doctest::Approx(2e-6));
}

TEST_CASE("the cost model refuses what it cannot price, naming it") {
  expect_error<ValueError>([] { cost::allreduce_seconds(two_level(4), "tree", plain(), {10}); },
                           {"allreduce_seconds", "ring", "'tree'"});
  expect_error<ValueError>([] { cost::allreduce_seconds(two_level(3), "ring", plain(), {10}); },
                           {"ranks_per_node", "2", "3"});
  expect_error<ValueError>([] { cost::allreduce_seconds(two_level(4), "ring", plain(), {-1}); }, {"-1"});
  CommunicatorOptions int_wire = plain();
  int_wire.wire_dtype = Dtype::int32;
  CHECK_THROWS(cost::allreduce_seconds(two_level(4), "ring", int_wire, {10}));
  expect_error<ValueError>([] { cost::predict_step(two_level(4), "ring", plain(), {{10, 1}}, 0); }, {"bucket_bytes", "0"});
}

TEST_CASE("predict_step: buckets in backward order, each all-reduced once its last gradient is final") {
  cost::Cluster cluster;
  cluster.ranks = cluster.ranks_per_node = 2;
  cluster.intra = {0.5, 0};  // a ring of 2 ranks: one reduce-scatter and one all-gather message, 1 s in all
  const std::vector<cost::LayerCost> layers{{100, 1.0}, {100, 1.0}};
  // Buckets of 400 bytes: one per layer; the first runs during the second layer's backward.
  const cost::StepPrediction step = cost::predict_step(cluster, "ring", plain(), layers, 400);
  CHECK(step.buckets == 2);
  CHECK(step.backward_seconds == doctest::Approx(2.0));
  CHECK(step.allreduce_seconds == doctest::Approx(2.0));
  CHECK(step.exposed_seconds == doctest::Approx(1.0));
  // One bucket for both: after backward.
  CHECK(cost::predict_step(cluster, "ring", plain(), layers, 800).exposed_seconds == doctest::Approx(1.0));
  CHECK(cost::predict_step(cluster, "ring", plain(), layers, 800).buckets == 1);
  // Without overlap every bucket is exposed.
  CHECK(cost::predict_step(cluster, "ring", plain(), layers, 400, false).exposed_seconds == doctest::Approx(2.0));
  // A gradient larger than the bucket gets one of its own: 100, then 300 (over 800 bytes), then 100.
  CHECK(cost::predict_step(cluster, "ring", plain(), {{100, 1.0}, {300, 1.0}, {100, 1.0}}, 800).buckets == 3);
  // A long second layer hides the first bucket entirely: 3 s of backward, the second bucket after it.
  CHECK(cost::predict_step(cluster, "ring", plain(), {{100, 1.0}, {100, 2.0}}, 400).exposed_seconds ==
        doctest::Approx(1.0));
}

TEST_CASE("the calibration fits recover α, β and per-element costs from synthetic timings") {
  const double alpha = 3e-6, beta = 2e-10;
  std::vector<cost::Timing> timings;
  int i = 0;
  for (double bytes = 8; bytes <= 1 << 24; bytes *= 4, ++i) {
    const double noise = 1 + 0.02 * ((i % 3) - 1);  // ±2%
    timings.push_back({bytes, (alpha + beta * bytes) * noise});
  }
  const cost::Link link = cost::fit_link(timings);
  CHECK(link.alpha == doctest::Approx(alpha).epsilon(0.05));
  CHECK(link.beta == doctest::Approx(beta).epsilon(0.05));
  // Exact data: exact parameters; a pure-latency set: β = 0 and α its mean.
  std::vector<cost::Timing> exact{{0, 1e-6}, {1000, 2e-6}, {3000, 4e-6}};
  CHECK(cost::fit_link(exact).alpha == doctest::Approx(1e-6));
  CHECK(cost::fit_link(exact).beta == doctest::Approx(1e-9));
  CHECK(cost::fit_link({{10, 1e-6}, {1000, 1e-6}}).beta == 0);
  CHECK(cost::fit_per_element({{1000, 2e-6}, {4000, 8e-6}}) == doctest::Approx(2e-9));
  expect_error<ValueError>([] { cost::fit_link({{10, 1e-6}}); }, {"fit_link", "two distinct sizes"});
  expect_error<ValueError>([] { cost::fit_link({{10, 1e-6}, {20, 0}}); }, {"positive times"});
  expect_error<ValueError>([] { cost::fit_per_element({{0, 1e-6}}); }, {"positive amount"});
}

TEST_CASE("recommend: ring for one large buffer, hierarchical for many tiny ones on a two-level cluster") {
  // 64 ranks in nodes of 8 with one network link each: 20 µs and 1 GB/s between nodes, 1 µs and 2 GB/s
  // inside.
  cost::Cluster cluster;
  cluster.ranks = 64;
  cluster.ranks_per_node = 8;
  cluster.intra = {1e-6, 5e-10};
  cluster.inter = {2e-5, 1e-9};
  const std::vector<std::string> own{"ring", "hierarchical", "two_dimensional", "multi_color"};
  const std::vector<cost::LayerCost> large{{int64_t{25} << 20, 0.0}};
  const auto big = cost::recommend(cluster, large, {int64_t{128} << 20}, {Dtype::float32}, {}, own);
  CHECK(big.size() == 4);
  CHECK(big.front().algorithm == "ring");
  std::vector<cost::LayerCost> tiny(200, cost::LayerCost{64, 0.0});
  const auto small = cost::recommend(cluster, tiny, {256}, {Dtype::float32}, {}, own);
  CHECK(small.front().algorithm == "hierarchical");
  CHECK(small.front().step.buckets == 200);
  CHECK(small.back().algorithm == "ring");  // 2·63 latencies per bucket
  // Among every algorithm, MPICH's recursive doubling (flat) needs only log2 64 = 6 messages for a tiny
  // buffer and comes first; with larger buckets on offer, fusing the 200 gradients into one wins.
  CHECK(cost::recommend(cluster, tiny, {256}, {Dtype::float32}).front().algorithm == "flat");
  const auto all = cost::recommend(cluster, tiny, {256, 1 << 20}, {Dtype::float32, Dtype::float16});
  CHECK(all.size() == 6 * 2 * 2);
  CHECK(all.front().bucket_bytes == 1 << 20);
  CHECK(all.front().step.buckets == 1);
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].step.exposed_seconds <= all[i].step.exposed_seconds);
}

TEST_CASE("MPI factors stretch β for MPICH's large collectives only") {
  cost::Span pair{2, 2, {1e-6, 1e-9}, {1e-5, 1e-9}, 1, {}};
  const double small = cost::mpi_allreduce_seconds(1000, 4, true, pair, 0);
  const double large = cost::mpi_allreduce_seconds(int64_t{8} << 20, 4, true, pair, 0);
  pair.mpi.allreduce = 3;
  CHECK(cost::mpi_allreduce_seconds(1000, 4, true, pair, 0) == small);
  // 32 MiB: 2 × (1 µs + 16 MiB × 3 ns).
  CHECK(cost::mpi_allreduce_seconds(int64_t{8} << 20, 4, true, pair, 0) == doctest::Approx(2 * (1e-6 + 3e-9 * (16 << 20))));
  CHECK(cost::mpi_allreduce_seconds(int64_t{8} << 20, 4, true, pair, 0) > large);
  CHECK(cost::mpi_reduce_seconds(int64_t{8} << 20, 4, true, pair, 0) == doctest::Approx(large));  // its own factor
}

TEST_CASE("MPI's messages of buffers from 1 MiB to the factors' size cross each link at its β_memory") {
  // One pair of nodes of one rank: β 1 ns, β_memory 3 ns. Rabenseifner's on 2 ranks: 2 × (α + B/2 × β).
  cost::Span pair{2, 1, {1e-6, 1e-9, 3e-9}, {1e-5, 1e-9, 3e-9}, 1, {}};
  const auto expected = [](double bytes, double beta) { return 2 * (1e-5 + bytes / 2 * beta); };
  const int64_t below = (int64_t{1} << 18) - 1, from = int64_t{1} << 18, last = (int64_t{4} << 20) - 1;
  CHECK(cost::mpi_allreduce_seconds(below, 4, true, pair, 0) == doctest::Approx(expected(4.0 * below, 1e-9)));
  CHECK(cost::mpi_allreduce_seconds(from, 4, true, pair, 0) == doctest::Approx(expected(4.0 * from, 3e-9)));
  CHECK(cost::mpi_allreduce_seconds(last, 4, true, pair, 0) == doctest::Approx(expected(4.0 * last, 3e-9)));
  // From 16 MiB the factors take over (factor 1: β as it is).
  CHECK(cost::mpi_allreduce_seconds(last + 1, 4, true, pair, 0) == doctest::Approx(expected(4.0 * (last + 1), 1e-9)));
  // Without a measured β_memory, β.
  pair.inter.beta_memory = 0;
  CHECK(cost::mpi_allreduce_seconds(from, 4, true, pair, 0) == doctest::Approx(expected(4.0 * from, 1e-9)));
}

TEST_CASE("between machines MPI's extra copies add to the wire's β; flows sharing a link stretch β_memory too") {
  // Nodes of 2: β 0.1 ns inside, 1 ns between; MPI's all-reduce factor 3 makes the copies 0.2 ns more
  // per byte: 0.3 ns inside, 1.2 ns (not 3 ns) for an exchange between nodes, which the node's 2 ranks
  // make at once on one link (× 2). 4 ranks, 32 MiB: Rabenseifner's exchanges at distance 1 (16 MiB,
  // inside) and 2 (8 MiB, between), each twice.
  cost::Span span{4, 2, {1e-6, 1e-10}, {1e-5, 1e-9}, 1, {}};
  span.mpi.allreduce = 3;
  const double bytes = double(int64_t{8} << 20) * 4;
  CHECK(cost::mpi_allreduce_seconds(int64_t{8} << 20, 4, true, span, 0) ==
        doctest::Approx(2 * (1e-6 + bytes / 2 * 3e-10) + 2 * (1e-5 + bytes / 4 * 2 * 1.2e-9)));
  // multi_color across nodes of one link: 2 colors × 2 flows share its wire (β × 4, 4 ns); the memory end
  // of the ring's steps that start from or land in the owned slice (β_memory - β, 2 ns) is this rank's own,
  // once for each of its 2 colors: 4 + 2 × 2 = 8 ns per byte there instead of 4.
  cost::Cluster cluster = two_level(4);
  cluster.inter.beta_memory = 3e-9;
  CommunicatorOptions two = plain();
  two.colors = 2;
  const double with_memory = cost::allreduce_seconds(cluster, "multi_color", two, {1000});
  cluster.inter.beta_memory = 0;
  // Each color's 2-rank ring moves 500 bytes in each phase, all of it from or into the owned slice.
  CHECK(with_memory - cost::allreduce_seconds(cluster, "multi_color", two, {1000}) ==
        doctest::Approx(2 * 500 * (8e-9 - 4e-9)));
}

TEST_CASE("a measured β_streams: messages in flight stream faster in all, and concurrent flows share that") {
  // One message at a time from memory 4 ns a byte, 16 at once 1 ns: geometric in between.
  const cost::Link link{1e-5, 0.5e-9, 4e-9, 1e-9};
  CHECK(cost::streaming_beta(link, 1) == doctest::Approx(4e-9));
  CHECK(cost::streaming_beta(link, 4) == doctest::Approx(2e-9));   // halfway in doublings
  CHECK(cost::streaming_beta(link, 2) == doctest::Approx(4e-9 * std::pow(0.25, 0.25)));
  CHECK(cost::streaming_beta(link, 16) == doctest::Approx(1e-9));
  CHECK(cost::streaming_beta(link, 64) == doctest::Approx(1e-9));  // no faster than measured
  CHECK(cost::streaming_beta({1e-5, 2e-9, 4e-9, 1e-9}, 16) == doctest::Approx(2e-9));  // never below β
  CHECK(cost::streaming_beta({1e-5, 1e-9, 4e-9, 0}, 16) == doctest::Approx(4e-9));     // unmeasured: β_memory
  CHECK(cost::streaming_beta({1e-5, 1e-9, 4e-9, 5e-9}, 16) == doctest::Approx(4e-9));  // slower in all: no gain

  // Two machines of one rank: β 1 ns, one message from memory 4 ns, 16 at once 1 ns a byte in all.
  cost::Cluster cluster = one_node(2);
  cluster.ranks_per_node = 1;
  cluster.inter = {1e-5, 1e-9, 4e-9, 1e-9};
  cluster.intra = cluster.inter;
  cost::Cluster serial = cluster;
  serial.inter.beta_streams = 0;
  // 4000 elements in chunks of 100: a ring's step of 2000 elements is 20 messages, 4 of them in flight
  // (pipeline depth 4): streaming_beta(4) = 2 ns a byte where the unmeasured link takes 4 ns; both phases
  // move 8000 bytes from or into memory.
  CHECK(cost::allreduce_seconds(serial, "ring", plain(400), {4000}) -
            cost::allreduce_seconds(cluster, "ring", plain(400), {4000}) ==
        doctest::Approx(2 * 8000 * (4e-9 - 2e-9)));
  // multi_color's 4 colors: 1000 elements a color, a step of 500 in 5 messages, 4 in flight: 16 on the
  // link at once, streaming at 1 ns a byte in all, 4 ns a byte of each color, where unmeasured the rank
  // pays its four memory ends one after another: 4 × 1 + 4 × (4 - 1) = 16 ns. Each color moves 2000
  // bytes a phase.
  CommunicatorOptions four = plain(400);
  CHECK(cost::allreduce_seconds(serial, "multi_color", four, {4000}) -
            cost::allreduce_seconds(cluster, "multi_color", four, {4000}) ==
        doctest::Approx(2 * 2000 * (16e-9 - 4e-9)));
  // Two nodes of two, two_dimensional: the node's two flows of 4 messages each share the link: 2 ×
  // streaming_beta(8) a byte of each, against 2 × 1 + (3 - 1) = 4 ns unmeasured.
  cost::Cluster nodes = two_level(4);
  nodes.inter = {1e-5, 1e-9, 3e-9, 2.5e-9};
  cost::Cluster nodes_serial = nodes;
  nodes_serial.inter.beta_streams = 0;
  // The slice of 4000 elements crosses in a 2-rank ring: 2000 elements (8000 bytes) each phase.
  CHECK(cost::allreduce_seconds(nodes, "two_dimensional", plain(400), {8000}) -
            cost::allreduce_seconds(nodes_serial, "two_dimensional", plain(400), {8000}) ==
        doctest::Approx(2 * 8000 * (2 * cost::streaming_beta(nodes.inter, 8) - 4e-9)));
  cost::Cluster bad = cluster;
  bad.inter.beta_streams = -1;
  expect_error<ValueError>([&] { cost::allreduce_seconds(bad, "ring", plain(), {10}); }, {"β_streams", "-1"});
}

TEST_CASE("save_cluster and load_cluster round-trip a cluster and name what is wrong in a file") {
  cost::Cluster cluster = two_level(8);
  cluster.links_per_node = 3;
  cluster.float16.accumulate = 1.25e-10;
  cluster.mpi.reduce_half = 4.5;
  cluster.intra.beta_memory = 3.5e-10;
  cluster.inter.beta_streams = 2.5e-9;
  cluster.mpi.open_mpi = true;
  const TempDir dir;
  const std::string path = dir.file("cluster.txt");
  cost::save_cluster(cluster, path);
  const cost::Cluster back = cost::load_cluster(path);
  CHECK(back.ranks == 8);
  CHECK(back.ranks_per_node == 2);
  CHECK(back.links_per_node == 3);
  CHECK(back.inter.beta == cluster.inter.beta);
  CHECK(back.intra.beta_memory == cluster.intra.beta_memory);
  CHECK(back.inter.beta_streams == cluster.inter.beta_streams);
  CHECK(back.float16.accumulate == cluster.float16.accumulate);
  CHECK(back.mpi.reduce_half == 4.5);
  CHECK_FALSE(back.mpi.by_node);
  CHECK(back.mpi.open_mpi);
  const auto write = [&](const std::string& text) {
    std::ofstream(path) << text;
  };
  std::string whole;
  {
    std::ifstream in(path);
    whole.assign(std::istreambuf_iterator<char>(in), {});
  }
  // A file from before β_streams and mpi_by_node loads with β_streams not measured and MPI not by node.
  std::string before;
  for (size_t at = 0, end; at < whole.size(); at = end + 1) {
    end = whole.find('\n', at);
    const std::string line = whole.substr(at, end - at);
    if (line.find("beta_streams") == std::string::npos && line.find("mpi_by_node") == std::string::npos &&
        line.find("mpi_open_mpi") == std::string::npos) {
      before += line + "\n";
    }
  }
  write(before);
  CHECK(cost::load_cluster(path).inter.beta_streams == 0);
  CHECK_FALSE(cost::load_cluster(path).mpi.by_node);
  CHECK_FALSE(cost::load_cluster(path).mpi.open_mpi);
  write(before + "mpi_by_node 2\n");
  expect_error<ValueError>([&] { cost::load_cluster(path); }, {"'mpi_by_node' 0 or 1", "2"});
  write(before + "mpi_by_node 1\n");
  CHECK(cost::load_cluster(path).mpi.by_node);
  write(before + "mpi_by_node 1\nmpi_open_mpi 1\n");
  expect_error<ValueError>([&] { cost::load_cluster(path); }, {"got both"});
  write(whole + "ranks 8\n");
  expect_error<ValueError>([&] { cost::load_cluster(path); }, {"'ranks' given twice"});
  write(whole + "speed 3\n");
  expect_error<ValueError>([&] { cost::load_cluster(path); }, {"unknown key 'speed'"});
  write("ranks two\n");
  expect_error<ValueError>([&] { cost::load_cluster(path); }, {":1:", "expected 'key value'", "ranks two"});
  write("ranks 8\n");
  expect_error<ValueError>([&] { cost::load_cluster(path); }, {"expected a line for"});
  write(whole.replace(whole.find("ranks_per_node 2"), 16, "ranks_per_node 3"));
  expect_error<ValueError>([&] { cost::load_cluster(path); }, {"ranks_per_node", "3", "8"});
  expect_error<IOError>([] { cost::load_cluster("/nonexistent/cluster.txt"); }, {"/nonexistent/cluster.txt"});
}

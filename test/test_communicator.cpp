// Communicator suite: run under mpiexec (2, 3 and 4 ranks; with KUSARI_RANKS_PER_NODE=2 for pretend
// nodes). Every rank runs every case in the same order; expected values are computed locally from
// the data every rank contributes, which each rank can regenerate.

#include "testing.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <kusari/distributed/mpi_interop.h>
#include <kusari/distributed/detail/mpi_launcher.h>
#include <kusari/distributed/detail/nccl_pattern.h>
#include <kusari/distributed/detail/stall_inspector.h>

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_error;

namespace {

// Empty, tiny and odd sizes, one of them larger than several chunks.
const std::vector<int64_t> kSizes = {0, 1, 7, 1000, 4099, 3};
const std::vector<Dtype> kWires = {Dtype::float32, Dtype::float16, Dtype::bfloat16};

// Options with tiny chunks, so that small tests still pipeline many messages.
CommunicatorOptions small_chunks(Dtype wire) {
  return {.wire_dtype = wire, .chunk_bytes = 1024, .pipeline_depth = 2, .hybrid_threshold_bytes = 4096};
}

// Integer-valued contribution of `rank` to array `index` (exact in every wire dtype once summed).
std::vector<float> integer_values(int rank, size_t index, int64_t n) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    values[static_cast<size_t>(j)] = static_cast<float>((rank + 1) * ((static_cast<int64_t>(index) * 7 + j * 3) % 11 - 5));
  }
  return values;
}

// Uniform contribution of `rank` to array `index`.
Array uniform_values(int rank, size_t index, int64_t n) {
  return Array::uniform({n}, -1, 1, static_cast<uint64_t>(1000 * rank + static_cast<int>(index)), Dtype::float32);
}

// Asserts that every rank holds bitwise the same `array`.
void expect_identical_on_all_ranks(const Communicator& comm, const Array& array) {
  const Array all = comm.allgather(array);
  const size_t bytes = static_cast<size_t>(array.nbytes());
  const auto* base = static_cast<const std::byte*>(all.raw_data());
  for (int r = 1; r < comm.size(); ++r) {
    INFO("rank ", r, " differs from rank 0");
    CHECK(std::memcmp(base, base + bytes * static_cast<size_t>(r), bytes) == 0);
  }
}

// Machine epsilon of the wire dtype (float32 results are compared with a fixed tolerance).
double wire_epsilon(Dtype wire) {
  switch (wire) {
    case Dtype::float16: return std::ldexp(1.0, -11);
    case Dtype::bfloat16: return std::ldexp(1.0, -8);
    default: return 1e-7;
  }
}

// Sums integer-valued arrays of every size in kSizes with allreduce_sum: exact in every wire dtype.
void check_integer_sums(const Communicator& comm) {
  std::vector<Array> arrays;
  for (size_t i = 0; i < kSizes.size(); ++i) {
    arrays.push_back(Array::from_vector(integer_values(comm.rank(), i, kSizes[i]), {kSizes[i]}));
  }
  comm.allreduce_sum(arrays);
  for (size_t i = 0; i < kSizes.size(); ++i) {
    std::vector<float> expected(static_cast<size_t>(kSizes[i]), 0.0f);
    for (int r = 0; r < comm.size(); ++r) {
      const std::vector<float> part = integer_values(r, i, kSizes[i]);
      for (size_t j = 0; j < part.size(); ++j) expected[j] += part[j];
    }
    INFO("array ", i);
    CHECK(arrays[i].to_vector<float>() == expected);
  }
  expect_identical_on_all_ranks(comm, arrays[4]);
}

// Averages uniform arrays with allreduce_grad: within 2·size·ε of the wire dtype of the exact mean.
void check_averages(const Communicator& comm) {
  std::vector<Array> grads;
  for (size_t i = 0; i < kSizes.size(); ++i) grads.push_back(uniform_values(comm.rank(), i, kSizes[i]));
  comm.allreduce_grad(grads);
  const double tolerance = 2.0 * comm.size() * wire_epsilon(comm.options().wire_dtype);
  for (size_t i = 0; i < kSizes.size(); ++i) {
    std::vector<double> mean(static_cast<size_t>(kSizes[i]), 0.0);
    for (int r = 0; r < comm.size(); ++r) {
      const std::vector<double> part = uniform_values(r, i, kSizes[i]).to_vector<double>();
      for (size_t j = 0; j < part.size(); ++j) mean[j] += part[j] / comm.size();
    }
    INFO("array ", i);
    kusari::testing::expect_values(grads[i], mean, tolerance);
  }
  expect_identical_on_all_ranks(comm, grads[3]);
}

}  // namespace

TEST_CASE("topology: ranks, nodes and pretend nodes") {
  const Communicator comm = create_communicator("ring");
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  CHECK(comm.size() == world_size);
  CHECK(comm.rank() == world_rank());
  CHECK(comm.intra_size() * comm.inter_size() == comm.size());
  CHECK(comm.inter_rank() * comm.intra_size() + comm.intra_rank() == comm.rank());
  if (const int k = ranks_per_node_from_env(); k > 0) {
    CHECK(comm.intra_size() == k);
    CHECK(comm.intra_rank() == comm.rank() % k);
    CHECK(comm.inter_rank() == comm.rank() / k);
  }
  const Communicator single = create_communicator("ring", {.ranks_per_node = 1});
  CHECK(single.intra_size() == 1);
  CHECK(single.inter_size() == comm.size());
  CHECK(single.inter_rank() == comm.rank());
  CHECK(single.topology().homogeneous);
  expect_error<ValueError>([&] { create_communicator("ring", {.ranks_per_node = comm.size() + 1}); },
                           {"ranks_per_node", std::to_string(comm.size() + 1)});
  const ThreadLevel level = mpi_thread_level();
  CHECK((level == ThreadLevel::multiple || level == ThreadLevel::serialized));
}

TEST_CASE("create_communicator: ranks that ask for different algorithms or options all throw, naming both") {
  const int rank = create_communicator("flat").rank();
  if (create_communicator("flat").size() < 2) return;
  expect_error<ValueError>([&] { create_communicator("ring", {.colors = 4 + rank}); },
                           {"disagree on colors", "rank 0 has 4", "rank 1 has 5"});
  expect_error<ValueError>([&] { create_communicator(rank == 0 ? "ring" : "flat"); },
                           {"disagree on the algorithm", "rank 0 has ring", "rank 1 has flat"});
  expect_error<ValueError>([&] { create_communicator(rank == 0 ? "ring" : "rung"); },
                           {"rank 1 has an unknown name"});
  expect_error<ValueError>(
      [&] { create_communicator("ring", {.wire_dtype = rank == 0 ? Dtype::float16 : Dtype::float32}); },
      {"disagree on wire_dtype", "rank 0 has float16", "rank 1 has float32"});
}

TEST_CASE("on CUDA arrays each algorithm takes its NCCL pattern, or is refused naming the choices") {
  const CommunicatorOptions defaults;
  CHECK(nccl_pattern("flat", defaults, 100) == NcclPattern::all);
  CHECK(nccl_pattern("nccl", defaults, 100) == NcclPattern::all);
  CHECK(nccl_pattern("hierarchical", defaults, 1 << 30) == NcclPattern::hierarchical);
  CHECK(nccl_pattern("two_dimensional", defaults, 1) == NcclPattern::two_dimensional);
  // Jia's hybrid as on a CPU: the ring (NCCL's own over every rank) from the threshold up, hierarchical below.
  const CommunicatorOptions threshold{.hybrid_threshold_bytes = 4096};
  CHECK(nccl_pattern("hybrid", threshold, 4095) == NcclPattern::hierarchical);
  CHECK(nccl_pattern("hybrid", threshold, 4096) == NcclPattern::all);
  // Kumar's multi-color: its colors' rings at once, one NCCL group each.
  CHECK(nccl_pattern("multi_color", {.colors = 3}, 100) == NcclPattern::multi_color);
  for (const char* name : {"naive", "ring"}) {
    expect_error<ValueError>([&] { check_cuda_communicator(name, defaults); },
                             {name, "not built on NCCL", "nccl", "hierarchical", "two_dimensional", "hybrid",
                              "multi_color"});
  }
  expect_error<ValueError>([] { check_cuda_communicator("hybrid", {.chunk_bytes = 4096}); },
                           {"chunk_bytes (4096)", "pipeline_depth (4)", "NCCL chunks and pipelines itself"});
  expect_error<ValueError>([] { check_cuda_communicator("nccl", {.pipeline_depth = 2}); }, {"pipeline_depth (2)"});
  check_cuda_communicator("hybrid", defaults);
  // nccl is the library's own all-reduce: MPI's on CPU arrays.
  std::vector<float> values = {1.5f, 2.5f};
  const Array a = Array::from_vector(values, {2});
  create_communicator("nccl").allreduce_grad({a});
  CHECK(a.data<float>()[0] == doctest::Approx(1.5));
}

TEST_CASE("create_communicator rejects unknown algorithms and bad options") {
  expect_error<ValueError>([] { create_communicator("butterfly"); }, {"butterfly", "ring", "multi_color", "hybrid"});
  expect_error<DtypeError>([] { create_communicator("ring", {.wire_dtype = Dtype::float64}); }, {"wire", "float64"});
  expect_error<ValueError>([] { create_communicator("ring", {.chunk_bytes = 8}); }, {"chunk_bytes", "8"});
  expect_error<ValueError>([] { create_communicator("multi_color", {.colors = 0}); }, {"colors", "0"});
  const char* previous = std::getenv("KUSARI_RANKS_PER_NODE");
  const std::string saved = previous ? previous : "";
  setenv("KUSARI_RANKS_PER_NODE", "two", 1);
  expect_error<ValueError>([] { create_communicator("ring"); }, {"KUSARI_RANKS_PER_NODE", "two"});
  if (previous) {
    setenv("KUSARI_RANKS_PER_NODE", saved.c_str(), 1);
  } else {
    unsetenv("KUSARI_RANKS_PER_NODE");
  }
}

TEST_CASE("algorithm x wire dtype: exact integer sums, averages within the wire error, same bits on every rank") {
  for (const std::string& name : allreduce_algorithm_names()) {
    for (const Dtype wire : kWires) {
      INFO("algorithm ", name, ", wire ", wire);
      const Communicator comm = create_communicator(name, small_chunks(wire));
      check_integer_sums(comm);
      check_averages(comm);
    }
  }
}

// `value` on every rank, through allreduce_grad: the mean, after checking that the ranks agree.
float averaged(const Communicator& comm, float value) {
  const Array x = Array::full({1}, value, Dtype::float32);
  comm.allreduce_grad({x});
  expect_identical_on_all_ranks(comm, x);
  return x.item<float>();
}

TEST_CASE("algorithm x averaging policy in float16: automatic neither overflows nor flushes to zero; inf and NaN "
          "from one rank reach every rank") {
  for (const std::string& name : allreduce_algorithm_names()) {
    INFO("algorithm ", name);
    CommunicatorOptions options = small_chunks(Dtype::float16);
    const Communicator automatic = create_communicator(name, options);
    const int rank = automatic.rank();
    const int ranks = automatic.size();
    // A value whose sum overflows float16, one whose 1/P share is below its smallest subnormal.
    const float tiny = 2e-8f * static_cast<float>(rank + 1);
    const double tiny_mean = 2e-8 * (ranks + 1) / 2;
    CHECK(averaged(automatic, 40000.0f) == doctest::Approx(40000).epsilon(1e-3));
    CHECK(averaged(automatic, tiny) == doctest::Approx(tiny_mean).epsilon(0.01));
    CHECK(averaged(automatic, 0.25f) == 0.25f);
    CHECK(std::isinf(averaged(automatic, rank == ranks - 1 ? INFINITY : 1.0f)));
    CHECK(std::isnan(averaged(automatic, rank == 0 ? NAN : 1.0f)));
    options.averaging = AveragingPolicy::divide_after;
    CHECK(std::isinf(averaged(create_communicator(name, options), 40000.0f)));
    options.averaging = AveragingPolicy::divide_before;
    CHECK(averaged(create_communicator(name, options), tiny) == 0.0f);
  }
}

TEST_CASE("allreduce_sum: prescale before the wire, postscale after the sum") {
  for (const Dtype wire : kWires) {
    const Communicator comm = create_communicator("ring", small_chunks(wire));
    const Array x = Array::full({9}, comm.rank() + 1.0, Dtype::float32);
    comm.allreduce_sum({x}, 0.5, 4);
    double sum = 0;
    for (int r = 0; r < comm.size(); ++r) sum += r + 1;
    CHECK(x.to_vector<float>() == std::vector<float>(9, static_cast<float>(4 * 0.5 * sum)));
    const Array big = Array::full({3}, 60000.0, Dtype::float32);
    comm.allreduce_sum({big}, 1.0 / 1024, 1024.0 / comm.size());
    INFO("wire ", wire);
    CHECK(big.to_vector<float>()[0] == doctest::Approx(60000).epsilon(wire_epsilon(wire)));
  }
}

TEST_CASE("algorithm: node-aware algorithms with one rank per node (only the ring across nodes)") {
  for (const std::string name : {"hierarchical", "two_dimensional"}) {
    INFO("algorithm ", name);
    CommunicatorOptions options = small_chunks(Dtype::float16);
    options.ranks_per_node = 1;
    const Communicator comm = create_communicator(name, options);
    REQUIRE(comm.inter_size() == comm.size());
    check_integer_sums(comm);
    check_averages(comm);
  }
}

TEST_CASE("algorithm: rings with one message in flight, and more colors than elements") {
  const Communicator shallow = create_communicator("ring", {.chunk_bytes = 64, .pipeline_depth = 1});
  check_integer_sums(shallow);
  const Communicator colorful = create_communicator("multi_color", {.wire_dtype = Dtype::bfloat16, .colors = 7});
  const Array x = Array::from_vector(integer_values(colorful.rank(), 0, 5), {5});
  colorful.allreduce_sum({x});
  std::vector<float> expected(5, 0.0f);
  for (int r = 0; r < colorful.size(); ++r) {
    const std::vector<float> part = integer_values(r, 0, 5);
    for (size_t j = 0; j < part.size(); ++j) expected[j] += part[j];
  }
  CHECK(x.to_vector<float>() == expected);
}

TEST_CASE("algorithm: hybrid takes the ring above its threshold and hierarchical below") {
  for (const Dtype wire : kWires) {
    const Communicator comm = create_communicator("hybrid", {.wire_dtype = wire, .hybrid_threshold_bytes = 64});
    for (const int64_t n : {int64_t{5}, int64_t{300}}) {
      const Array x = Array::from_vector(integer_values(comm.rank(), 0, n), {n});
      comm.allreduce_sum({x});
      std::vector<float> expected(static_cast<size_t>(n), 0.0f);
      for (int r = 0; r < comm.size(); ++r) {
        const std::vector<float> part = integer_values(r, 0, n);
        for (size_t j = 0; j < part.size(); ++j) expected[j] += part[j];
      }
      CHECK(x.to_vector<float>() == expected);
    }
  }
}

TEST_CASE("allreduce_grad stages non-float32 and non-contiguous arrays and writes them back") {
  const Communicator comm = create_communicator("ring", small_chunks(Dtype::float16));
  const Array wide = Array::full({3, 2}, comm.rank() + 1.0, Dtype::float64);
  const Array base = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Array transposed = base.transpose();
  const Array half = Array::full({5}, 2.0 * comm.rank(), Dtype::bfloat16);
  comm.allreduce_grad({wide, transposed, half});
  const double mean_rank = (comm.size() - 1) / 2.0;
  kusari::testing::expect_values(wide, std::vector<double>(6, mean_rank + 1), 1e-3);
  kusari::testing::expect_values(base, {1, 2, 3, 4, 5, 6}, 1e-3);
  CHECK(wide.dtype() == Dtype::float64);
  kusari::testing::expect_values(half, std::vector<double>(5, 2 * mean_rank), 2e-2);
}

TEST_CASE("a device's arrays are staged through the host: allreduce_grad, allreduce, bcast and allgather") {
  // loopback:0 keeps host memory behind the device seam, as a GPU's arrays are behind it.
  const Device device = Device::loopback(0);
  const Communicator comm = create_communicator("ring", small_chunks(Dtype::float32));
  const Array grad = Array::full({3, 4}, comm.rank() + 1.0, Dtype::float32, device);
  const Array strided = Array::full({4, 3}, 2.0 * comm.rank(), Dtype::float64, device).transpose();
  comm.allreduce_grad({grad, strided});
  const double mean_rank = (comm.size() - 1) / 2.0;
  CHECK(grad.device() == device);
  CHECK(strided.device() == device);
  kusari::testing::expect_values(grad.to(Device::cpu()), std::vector<double>(12, mean_rank + 1), 1e-6);
  kusari::testing::expect_values(strided.to(Device::cpu()), std::vector<double>(12, 2 * mean_rank), 1e-6);
  const Array summed = comm.allreduce(Array::full({5}, comm.rank() + 1.0, Dtype::float32, device));
  CHECK(summed.device() == device);
  kusari::testing::expect_values(summed.to(Device::cpu()), std::vector<double>(5, comm.size() * (comm.size() + 1) / 2.0));
  const Array x = Array::full({2, 3}, comm.rank(), Dtype::float32, device);
  comm.bcast(x, comm.size() - 1);
  kusari::testing::expect_values(x.to(Device::cpu()), std::vector<double>(6, comm.size() - 1));
  const Array gathered = comm.allgather(Array::full({2}, comm.rank(), Dtype::int32, device));
  CHECK(gathered.device() == device);
  CHECK(gathered.shape() == Shape{comm.size(), 2});
  CHECK(gathered.to(Device::cpu()).to_vector<int32_t>()[static_cast<size_t>(2 * comm.size() - 1)] == comm.size() - 1);
}

TEST_CASE("allreduce_grad: mismatched sizes are reported on every rank, naming both") {
  const Communicator comm = create_communicator("ring");
  const int64_t mine = 10 + comm.rank();
  expect_error<ShapeError>([&] { comm.allreduce_grad({Array::ones({mine})}); },
                           {"allreduce_grad", "differ across ranks", "rank 0 has 10", "rank 1 has 11"});
  expect_error<DtypeError>([&] { comm.allreduce_grad({Array::ones({2}, Dtype::int32)}); }, {"floating", "int32"});
  expect_error<ValueError>([&] { comm.allreduce_grad({Array()}); }, {"allreduce_grad", "defined"});
}

TEST_CASE("wire dtype rounding matches astype, specials, tails and streaming stores included (one rank)") {
  const std::vector<float> specials = {1.0f / 3, -2.5e-6f, 65519.0f, 65520.0f, 1e9f, -1e-30f, 3.0f, 0.0f, -0.0f,
                                       INFINITY, -INFINITY, NAN, 1.00390625f, 1.0f + 1.0f / 1024, 7.0f, -8.5f,
                                       3.1415926f, 1e-8f, 2.0f};
  // Long enough for the streaming-store path, and starting off alignment (a view at offset 1).
  std::vector<float> tiled(50001);
  for (size_t i = 0; i < tiled.size(); ++i) tiled[i] = specials[i % specials.size()] * (i % 7 == 6 ? 1.5f : 1.0f);
  const Array x = Array::from_vector(tiled, {static_cast<int64_t>(tiled.size())});
  for (const Dtype wire : {Dtype::float16, Dtype::bfloat16}) {
    for (const std::string name : {"ring", "flat"}) {
      INFO(name, " over ", wire);
      const Communicator self = create_communicator(name, {.wire_dtype = wire}, MPI_COMM_SELF);
      const Array y = x.copy().get_item({Slice{1, {}}});
      self.allreduce_sum({y});
      const std::vector<float> got = y.to_vector<float>();
      const std::vector<float> want = x.get_item({Slice{1, {}}}).astype(wire).to_vector<float>();
      size_t mismatches = 0;
      std::string first;
      for (size_t i = 0; i < got.size(); ++i) {
        const bool same = std::memcmp(&got[i], &want[i], 4) == 0 || (std::isnan(got[i]) && std::isnan(want[i]));
        if (!same && mismatches++ == 0) first = cat("element ", i, ": ", got[i], " vs ", want[i]);
      }
      INFO("first mismatch: ", first);
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("allreduce: sum, prod, max and min in the array's own dtype") {
  const Communicator comm = create_communicator("flat");
  const int p = comm.size();
  const double r = comm.rank();
  kusari::testing::expect_values(comm.allreduce(Array::full({2, 2}, r + 1)), std::vector<double>(4, p * (p + 1) / 2.0));
  kusari::testing::expect_values(comm.allreduce(Array::full({3}, r + 1, Dtype::int32), ReduceOp::max),
                                 std::vector<double>(3, p));
  kusari::testing::expect_values(comm.allreduce(Array::full({3}, r + 1, Dtype::float16), ReduceOp::min),
                                 std::vector<double>(3, 1));
  double factorial = 1;
  for (int i = 1; i <= p; ++i) factorial *= i;
  kusari::testing::expect_values(comm.allreduce(Array::full({1}, r + 1, Dtype::bfloat16), ReduceOp::prod), {factorial});
  kusari::testing::expect_values(comm.allreduce(Array::scalar(r + 0.5, Dtype::float64)), {p * p / 2.0});
  const Array flags = Array::from_vector<bool>({comm.rank() == 0, true}, {2});
  CHECK(comm.allreduce(flags, ReduceOp::max).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK(comm.allreduce(flags, ReduceOp::min).to_vector<bool>() == std::vector<bool>{p == 1, true});
  expect_error<DtypeError>([&] { comm.allreduce(flags); }, {"sum", "bool"});
  expect_error<DtypeError>([&] { comm.allreduce(Array::ones({2}, comm.rank() == 0 ? Dtype::float32 : Dtype::int64)); },
                           {"allreduce", "dtypes differ", "rank 0 has float32", "rank 1 has int64"});
}

TEST_CASE("bcast: root's values everywhere, also into views; sizes checked") {
  const Communicator comm = create_communicator("ring");
  const int root = comm.size() - 1;
  const Array x = Array::full({2, 3}, comm.rank());
  comm.bcast(x, root);
  kusari::testing::expect_values(x, std::vector<double>(6, root));
  const Array base = Array::full({4, 2}, comm.rank(), Dtype::float16);
  const Array column = base.get_item({Slice{}, int64_t{1}});
  comm.bcast(column, root);
  kusari::testing::expect_values(base, {double(comm.rank()), double(root), double(comm.rank()), double(root),
                                        double(comm.rank()), double(root), double(comm.rank()), double(root)});
  expect_error<ShapeError>([&] { comm.bcast(Array::ones({3 + comm.rank()}), 0); },
                           {"bcast", "rank 0 has 3", "rank 1 has 4"});
  expect_error<ValueError>([&] { comm.bcast(x, comm.size()); }, {"bcast", "root"});
}

TEST_CASE("bcast_data: every parameter of a link from root, in sorted name order") {
  const Communicator comm = create_communicator("ring");
  auto make = [&](double value) {
    auto child = std::make_shared<links::Link>();
    child->add_param("W", Array::full({3, 4}, value));
    child->add_param("b", Array::full({4}, value + 1, Dtype::float16));
    auto model = std::make_shared<links::Chain>();
    model->add_link("layer", child);
    model->add_param("scale", Array::full({1}, value + 2));
    return model;
  };
  const auto model = make(10.0 * comm.rank());
  comm.bcast_data(*model);
  // Sorted paths: /layer/W, /layer/b, /scale.
  const auto params = model->namedparams();
  kusari::testing::expect_values(params[0].second.data(), std::vector<double>(12, 0));
  kusari::testing::expect_values(params[1].second.data(), std::vector<double>(4, 1));
  kusari::testing::expect_values(params[2].second.data(), std::vector<double>(1, 2));
  const auto other = std::make_shared<links::Link>();
  other->add_param("W", Array::ones({comm.rank() == 0 ? 2 : 3}));
  expect_error<ShapeError>([&] { comm.bcast_data(*other); }, {"bcast_data", "/W", "rank 0 has 2", "rank 1 has 3"});
}

TEST_CASE("allgather, bcast_obj, gather_obj and barrier") {
  const Communicator comm = create_communicator("ring");
  const Array mine = Array::full({2, 3}, comm.rank(), Dtype::int64);
  const Array all = comm.allgather(mine.transpose());
  CHECK(all.shape() == Shape{comm.size(), 3, 2});
  std::vector<double> expected;
  for (int r = 0; r < comm.size(); ++r) expected.insert(expected.end(), 6, r);
  kusari::testing::expect_values(all, expected);

  const std::string text = comm.bcast_obj(comm.rank() == 1 ? std::string("from rank one\0!", 15) : "", 1);
  CHECK(text == std::string("from rank one\0!", 15));
  const std::vector<std::string> gathered = comm.gather_obj(std::string(static_cast<size_t>(comm.rank()), 'x'), 0);
  if (comm.rank() == 0) {
    REQUIRE(gathered.size() == static_cast<size_t>(comm.size()));
    for (int r = 0; r < comm.size(); ++r) CHECK(gathered[static_cast<size_t>(r)] == std::string(static_cast<size_t>(r), 'x'));
  } else {
    CHECK(gathered.empty());
  }
  comm.barrier();
}

TEST_CASE("stall settings: KUSARI_STALL_WARNING and KUSARI_STALL_TIMEOUT over the defaults, bad values refused") {
  std::vector<std::pair<const char*, std::optional<std::string>>> before;
  for (const char* name : {"KUSARI_STALL_WARNING", "KUSARI_STALL_TIMEOUT"}) {
    const char* value = std::getenv(name);
    before.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
  }
  const auto with = [](const char* warning, const char* timeout) {
    for (auto [name, value] : {std::pair{"KUSARI_STALL_WARNING", warning}, std::pair{"KUSARI_STALL_TIMEOUT", timeout}}) {
      if (value) {
        setenv(name, value, 1);
      } else {
        unsetenv(name);
      }
    }
    return stall_settings_from_environment();
  };
  const auto check = [&](const char* warning, const char* timeout, double want_warning, double want_timeout) {
    INFO("KUSARI_STALL_WARNING=", warning ? warning : "(unset)", " KUSARI_STALL_TIMEOUT=", timeout ? timeout : "(unset)");
    const StallSettings s = with(warning, timeout);
    CHECK(s.warning_seconds == want_warning);
    CHECK(s.timeout_seconds == want_timeout);
  };
  check(nullptr, nullptr, 60, 0);
  check("", "", 60, 0);
  check("5", "20", 5, 20);
  check("2.5", nullptr, 2.5, 0);
  check("0", nullptr, 0, 0);
  check("30", "10", 10, 10);  // a timeout below the warning brings the warning down to it
  for (const char* bad : {"abc", "-1", "5s", "nan", " "}) {
    INFO("bad value '", bad, "'");
    expect_error<ValueError>([&] { with(bad, nullptr); },
                             {"KUSARI_STALL_WARNING", "expected a number of seconds >= 0", cat("got '", bad, "'")});
    expect_error<ValueError>([&] { with(nullptr, bad); }, {"KUSARI_STALL_TIMEOUT", cat("got '", bad, "'")});
  }
  for (const auto& [name, value] : before) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
}

TEST_CASE("split: sub-communicators by color, ordered by key") {
  const Communicator comm = create_communicator("multi_color", small_chunks(Dtype::float32));
  const Communicator half = comm.split(comm.rank() % 2, -comm.rank());
  const int members = (comm.size() + 1 - comm.rank() % 2) / 2;
  CHECK(half.size() == members);
  CHECK(half.algorithm() == "multi_color");
  // Ranks are ordered by descending world rank.
  const int color = comm.rank() % 2;
  const int last = color + 2 * ((comm.size() - 1 - color) / 2);
  CHECK(half.rank() == (last - comm.rank()) / 2);
  const Array x = Array::full({5}, comm.rank());
  half.allreduce_sum({x});
  double expected = 0;
  for (int r = comm.rank() % 2; r < comm.size(); r += 2) expected += r;
  kusari::testing::expect_values(x, std::vector<double>(5, expected));
  expect_error<ValueError>([&] { comm.split(-1, 0); }, {"split", "color", "-1"});
}

TEST_CASE("another MPI's mpiexec is named: one rank here where its launcher started several") {
  namespace DD = kusari::distributed::detail;
  const std::string built = DD::mpi_library_name();
  const bool mpich = built.rfind("MPICH ", 0) == 0;
  CHECK((mpich || built.rfind("Open MPI ", 0) == 0));
  CHECK(distributed::mpi_library() == built);
  const char* foreign = mpich ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE";
  const auto environment = [foreign](const char* value) {
    return [foreign, value](const char* name) { return std::strcmp(name, foreign) == 0 ? value : nullptr; };
  };
  const std::string problem = DD::foreign_launcher_problem(1, environment("4"));
  for (const std::string& word : {built, std::string(foreign) + "=4", std::string("one of 4"),
                                  std::string(mpich ? "mpiexec.mpich" : "mpiexec.openmpi"),
                                  std::string(mpich ? "-Dmpi=openmpi" : "-Dmpi=mpich")}) {
    INFO(problem);
    CHECK(problem.find(word) != std::string::npos);
  }
  CHECK(DD::foreign_launcher_problem(4, environment("4")).empty());  // this MPI sees the ranks: consistent
  CHECK(DD::foreign_launcher_problem(1, environment("1")).empty());  // a one-process launch
  CHECK(DD::foreign_launcher_problem(1, environment("x")).empty());
  CHECK(DD::foreign_launcher_problem(1, environment(nullptr)).empty());
  // The variables of this MPI's own launcher are no sign of another.
  const char* own = mpich ? "PMI_SIZE" : "OMPI_COMM_WORLD_SIZE";
  CHECK(DD::foreign_launcher_problem(1, [own](const char* name) { return std::strcmp(name, own) == 0 ? "4" : nullptr; })
            .empty());
}

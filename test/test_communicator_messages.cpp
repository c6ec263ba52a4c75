// Communicator point-to-point and personalised collectives suite: run under mpiexec (2 and 3 ranks).
// Every rank regenerates what every other rank sends, so each checks what it received locally.

#include "testing.h"

#include <climits>

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_error;
using kusari::testing::expect_values;

namespace {

// The arrays `rank` sends along the chain: every dtype, a scalar, an empty array, a transposed view
// and one large enough (2.4 MB) to leave MPI's eager protocol.
std::vector<Array> chain_arrays(int rank) {
  const uint64_t seed = static_cast<uint64_t>(100 * rank);
  std::vector<Array> arrays;
  for (Dtype dtype :
       {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64, Dtype::int32, Dtype::int64, Dtype::uint8}) {
    arrays.push_back(Array::uniform({2, 3}, 0, 100, seed + arrays.size(), Dtype::float32).astype(dtype));
  }
  arrays.push_back(Array::from_vector<bool>({rank % 2 == 0, true, false}, {3}));
  arrays.push_back(Array::scalar(rank + 0.5, Dtype::float64));
  arrays.push_back(Array::zeros({0, 4}));
  arrays.push_back(Array::uniform({3, 4}, -1, 1, seed + 20).transpose());
  arrays.push_back(Array::uniform({300000}, -1, 1, seed + 21, Dtype::float64));
  return arrays;
}

// Asserts that two arrays have one shape and dtype and equal values.
void expect_same_array(const Array& received, const Array& sent) {
  CHECK(received.shape() == sent.shape());
  CHECK(received.dtype() == sent.dtype());
  CHECK(received.is_contiguous());
  CHECK(received.to_vector<double>() == sent.to_vector<double>());
}

}  // namespace

TEST_CASE("send and recv: arrays of every dtype, shape and layout travel along a chain of ranks") {
  const Communicator comm = create_communicator();
  const int next = (comm.rank() + 1) % comm.size(), previous = (comm.rank() + comm.size() - 1) % comm.size();
  auto send_all = [&] { for (const Array& array : chain_arrays(comm.rank())) comm.send(array, next, 7); };
  auto receive_all = [&] {
    const std::vector<Array> expected = chain_arrays(previous);
    for (const Array& array : expected) expect_same_array(comm.recv(previous, 7), array);
  };
  // Rank 0 starts the chain, so blocking sends of large arrays cannot wait on each other in a cycle.
  if (comm.rank() == 0) {
    send_all();
    receive_all();
  } else {
    receive_all();
    send_all();
  }
}

TEST_CASE("send and recv: messages match by tag, in order within a tag") {
  const Communicator comm = create_communicator();
  CHECK(comm.max_tag() >= 32767);
  if (comm.rank() == 0) {
    comm.send(Array::full({2}, 1.0), 1, 5);
    comm.send(Array::full({2}, 2.0), 1, 3);
    comm.send(Array::full({2}, 3.0), 1, 5);
    comm.send(Array::full({1}, 4.0), 1, comm.max_tag());
  } else if (comm.rank() == 1) {
    expect_values(comm.recv(0, 3), {2, 2});
    expect_values(comm.recv(0, 5), {1, 1});
    expect_values(comm.recv(0, comm.max_tag()), {4});
    expect_values(comm.recv(0, 5), {3, 3});
  }
}

TEST_CASE("send and recv: a received array that is not the expected one names both and is consumed") {
  const Communicator comm = create_communicator();
  if (comm.rank() == 0) {
    comm.send(Array::ones({2, 3}), 1, 0);
    comm.send(Array::ones({2, 3}), 1, 0);
    comm.send(Array::full({2}, 9.0, Dtype::int64), 1, 0);
  } else if (comm.rank() == 1) {
    expect_error<ShapeError>(
        [&] { comm.recv(0, 0, {3, 2}, Dtype::float32); },
        {"recv: expected an array of shape (3, 2) and dtype float32 from rank 0 (tag 0)",
         "got shape (2, 3) and dtype float32"});
    expect_error<DtypeError>(
        [&] { comm.recv(0, 0, {2, 3}, Dtype::float64); },
        {"expected an array of shape (2, 3) and dtype float64", "got shape (2, 3) and dtype float32"});
    expect_values(comm.recv(0, 0, {2}, Dtype::int64), {9, 9});
  }
}

TEST_CASE("send and recv: bad peers, tags and arrays throw ValueError before anything is sent") {
  const Communicator comm = create_communicator();
  const Array x = Array::ones({2});
  const int other = (comm.rank() + 1) % comm.size();
  for (int peer : {comm.rank(), comm.size(), -1}) {
    expect_error<ValueError>(
        [&] { comm.send(x, peer); },
        {"send: expected a peer rank in [0, " + std::to_string(comm.size()) + ") other than this rank (" +
         std::to_string(comm.rank()) + "), got " + std::to_string(peer)});
    expect_error<ValueError>([&] { comm.recv(peer); }, {"recv: expected a peer rank", "got " + std::to_string(peer)});
  }
  std::vector<int> bad_tags{-1};
  if (comm.max_tag() < INT_MAX) bad_tags.push_back(comm.max_tag() + 1);
  for (int tag : bad_tags) {
    expect_error<ValueError>([&] { comm.send(x, other, tag); },
                             {"send: expected a tag in [0, ", "got " + std::to_string(tag)});
    expect_error<ValueError>([&] { comm.recv(other, tag); }, {"recv: expected a tag in [0, "});
  }
  expect_error<ValueError>([&] { comm.send(Array(), other); }, {"send", "defined array"});
}

TEST_CASE("reduce_scatter: each rank gets the sum over the ranks of its own slice") {
  const Communicator comm = create_communicator();
  const int n = comm.size();
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::float64, Dtype::int32}) {
    INFO("dtype ", dtype);
    // Rank r's slice k holds 10·r + k + j at flat position j.
    auto slice = [&](int r, int k) {
      std::vector<double> values;
      for (int j = 0; j < 6; ++j) values.push_back(10 * r + k + j);
      return values;
    };
    std::vector<double> stacked_values;
    for (int k = 0; k < n; ++k) {
      const std::vector<double> part = slice(comm.rank(), k);
      stacked_values.insert(stacked_values.end(), part.begin(), part.end());
    }
    const Array stacked = Array::from_vector(stacked_values, {n, 2, 3}, dtype);
    std::vector<double> expected(6, 0.0);
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < 6; ++j) expected[static_cast<size_t>(j)] += slice(r, comm.rank())[static_cast<size_t>(j)];
    }
    const Array mine = comm.reduce_scatter(stacked);
    CHECK(mine.shape() == Shape{2, 3});
    CHECK(mine.dtype() == dtype);
    expect_values(mine, expected);
  }
  expect_error<ShapeError>(
      [&] { comm.reduce_scatter(Array::ones({n + 1, 2})); },
      {"reduce_scatter: expected a leading axis of " + std::to_string(n),
       "got shape (" + std::to_string(n + 1) + ", 2)"});
  expect_error<ShapeError>(
      [&] { comm.reduce_scatter(Array::ones({n, 2 + comm.rank()})); },
      {"reduce_scatter", "differ across ranks", "rank 0 has", "rank 1 has"});
}

TEST_CASE("alltoall: arrays of different shapes and dtypes reach their ranks") {
  const Communicator comm = create_communicator();
  const int n = comm.size();
  // What rank `from` sends to rank `to`: shape (to + 1, from), a dtype that depends on both.
  auto message = [](int from, int to) {
    const Dtype dtypes[] = {Dtype::float32, Dtype::int64, Dtype::float16};
    return Array::uniform({to + 1, from}, 0, 50, static_cast<uint64_t>(10 * from + to), Dtype::float32)
        .astype(dtypes[(from + to) % 3]);
  };
  std::vector<Array> outgoing;
  for (int k = 0; k < n; ++k) outgoing.push_back(message(comm.rank(), k).transpose());
  const std::vector<Array> incoming = comm.alltoall(outgoing);
  REQUIRE(incoming.size() == static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    INFO("from rank ", k);
    expect_same_array(incoming[static_cast<size_t>(k)], message(k, comm.rank()).transpose());
  }
  expect_error<ValueError>([&] { comm.alltoall({Array::ones({1})}); }, {"alltoall: expected one array per rank"});
}

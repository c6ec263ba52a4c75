#include "testing.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace kusari;
using namespace kusari::testing;
namespace D = kusari::data;

namespace {

// Examples {x[i] of shape (2,), y[i]} for i in [0, n), with x[i] = (i, 10 i) and y[i] = i.
std::shared_ptr<D::TupleDataset> numbered(int64_t n) {
  std::vector<float> x;
  for (int64_t i = 0; i < n; ++i) x.insert(x.end(), {static_cast<float>(i), static_cast<float>(10 * i)});
  return std::make_shared<D::TupleDataset>(
      std::vector<Array>{Array::from_vector(x, {n, 2}), Array::arange(0, static_cast<double>(n), 1, Dtype::int32)});
}

// The label of each example of a data set, in order.
std::vector<int64_t> labels(const D::Dataset& dataset) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < dataset.size(); ++i) out.push_back(dataset.get(i)[1].item<int64_t>());
  return out;
}

// Example {index, epoch} as int64 scalars, to see what an iterator or a view asked for.
class Recorder : public D::Dataset {
 public:
  int64_t size() const override { return 5; }

 protected:
  D::Example get_example(int64_t index, int64_t epoch) const override {
    return {Array::scalar(static_cast<double>(index), Dtype::int64),
            Array::scalar(static_cast<double>(epoch), Dtype::int64)};
  }
};

}  // namespace

TEST_CASE("TupleDataset cuts examples along axis 0 as views") {
  auto dataset = numbered(5);
  CHECK(dataset->size() == 5);
  const D::Example e = dataset->get(3);
  REQUIRE(e.size() == 2);
  CHECK(e[0].shape() == Shape{2});
  expect_values(e[0], {3, 30});
  CHECK(e[1].shape() == Shape{});
  CHECK(e[1].dtype() == Dtype::int32);
  CHECK(e[1].item<int>() == 3);
  CHECK(e[0].storage() == dataset->arrays()[0].storage());
}

TEST_CASE("Dataset::get checks the index and names it and the size") {
  auto dataset = numbered(5);
  expect_error<IndexError>([&] { dataset->get(5); }, {"index 5", "size 5"});
  expect_error<IndexError>([&] { dataset->get(-1); }, {"index -1", "size 5"});
}

TEST_CASE("TupleDataset rejects arrays of different lengths") {
  expect_error<ShapeError>([] { D::TupleDataset({Array::zeros({4, 2}), Array::zeros({3})}); },
                           {"axis 0", "array 0 has 4", "array 1 has 3"});
  expect_error<ShapeError>([] { D::TupleDataset({Array::scalar(1)}); }, {"at least one axis", "()"});
  expect_error<ValueError>([] { D::TupleDataset({}); }, {"at least one array"});
}

TEST_CASE("SubDataset views an index range or a list of indices") {
  auto base = numbered(6);
  D::SubDataset range(base, 2, 5);
  CHECK(range.size() == 3);
  CHECK(labels(range) == std::vector<int64_t>{2, 3, 4});
  D::SubDataset picked(base, std::vector<int64_t>{5, 0, 3});
  CHECK(labels(picked) == std::vector<int64_t>{5, 0, 3});
  expect_error<IndexError>([&] { range.get(3); }, {"index 3", "size 3"});
  expect_error<IndexError>([&] { D::SubDataset(base, 4, 7); }, {"finish <= 6", "start 4", "finish 7"});
  expect_error<IndexError>([&] { D::SubDataset(base, 3, 2); }, {"start 3", "finish 2"});
  expect_error<IndexError>([&] { D::SubDataset(base, std::vector<int64_t>{1, 6}); },
                           {"index 6", "position 1", "size 6"});
  expect_error<ValueError>([] { D::SubDataset(nullptr, 0, 0); }, {"SubDataset", "null"});
}

TEST_CASE("split_dataset_random splits into disjoint parts reproducibly") {
  auto base = numbered(20);
  auto [first, second] = D::split_dataset_random(base, 7, 42);
  CHECK(first->size() == 7);
  CHECK(second->size() == 13);
  std::vector<int64_t> all = labels(*first), rest = labels(*second);
  all.insert(all.end(), rest.begin(), rest.end());
  std::vector<int64_t> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> expected(20);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(sorted == expected);
  CHECK(all != expected);  // shuffled
  CHECK(labels(*D::split_dataset_random(base, 7, 42).first) == labels(*first));
  CHECK(labels(*D::split_dataset_random(base, 7, 43).first) != labels(*first));
  expect_error<IndexError>([&] { D::split_dataset_random(base, 21, 0); }, {"first_size <= 20", "21"});
}

TEST_CASE("TransformDataset applies its function and passes the epoch through views") {
  auto base = std::make_shared<Recorder>();
  D::TransformDataset doubled(base, [](D::Example e) {
    e[0] = e[0] * Array::scalar(2, Dtype::int64);
    return e;
  });
  CHECK(doubled.size() == 5);
  const D::Example e = doubled.get(3, 7);
  CHECK(e[0].item<int64_t>() == 6);
  CHECK(e[1].item<int64_t>() == 7);
  D::SubDataset view(base, 1, 4);
  CHECK(view.get(2, 9)[0].item<int64_t>() == 3);
  CHECK(view.get(2, 9)[1].item<int64_t>() == 9);
  expect_error<ValueError>([&] { D::TransformDataset(base, nullptr); }, {"transform function"});
}

TEST_CASE("random_permutation is a permutation fixed by seed and stream") {
  const std::vector<int64_t> p = D::random_permutation(50, 1, 0);
  std::set<int64_t> seen(p.begin(), p.end());
  CHECK(seen.size() == 50);
  CHECK(*seen.begin() == 0);
  CHECK(*seen.rbegin() == 49);
  CHECK(D::random_permutation(50, 1, 0) == p);
  CHECK(D::random_permutation(50, 1, 1) != p);
  CHECK(D::random_permutation(50, 2, 0) != p);
  CHECK(D::random_permutation(0, 1).empty());
}

TEST_CASE("concat_examples stacks every component along a new axis") {
  auto dataset = numbered(4);
  const D::Example batch = D::concat_examples({dataset->get(1), dataset->get(3), dataset->get(0)});
  REQUIRE(batch.size() == 2);
  CHECK(batch[0].shape() == Shape{3, 2});
  expect_values(batch[0], {1, 10, 3, 30, 0, 0});
  CHECK(batch[1].shape() == Shape{3});
  CHECK(batch[1].dtype() == Dtype::int32);
  expect_values(batch[1], {1, 3, 0});
}

TEST_CASE("concat_examples names the shapes, dtypes or counts that disagree") {
  const D::Example a{Array::zeros({2, 3}), Array::scalar(1, Dtype::int32)};
  const D::Example b{Array::zeros({3, 2}), Array::scalar(1, Dtype::int32)};
  const D::Example c{Array::zeros({2, 3}), Array::scalar(1, Dtype::int64)};
  const D::Example d{Array::zeros({2, 3})};
  expect_error<ShapeError>([&] { D::concat_examples({a, b}); }, {"component 0 of example 1", "(3, 2)", "(2, 3)"});
  expect_error<DtypeError>([&] { D::concat_examples({a, a, c}); }, {"component 1 of example 2", "int64", "int32"});
  expect_error<ValueError>([&] { D::concat_examples({a, d}); }, {"example 1 has 1 components", "expected 2"});
  expect_error<ValueError>([] { D::concat_examples({}); }, {"empty batch"});
}

#include "testing.h"

#include <algorithm>
#include <map>
#include <memory>

using namespace kusari;
using namespace kusari::testing;
namespace D = kusari::data;

namespace {

// Example {index, epoch} as int64 scalars, so a batch shows which examples an iterator fetched.
class Recorder : public D::Dataset {
 public:
  explicit Recorder(int64_t n, int64_t failing = -1) : n_(n), failing_(failing) {}
  int64_t size() const override { return n_; }

 protected:
  D::Example get_example(int64_t index, int64_t epoch) const override {
    if (index == failing_) throw ValueError(cat("cannot load example ", index));
    return {Array::scalar(static_cast<double>(index), Dtype::int64),
            Array::scalar(static_cast<double>(epoch), Dtype::int64)};
  }

 private:
  int64_t n_;
  int64_t failing_;
};

// (index, epoch) of each example of a batch.
using Entries = std::vector<std::pair<int64_t, int64_t>>;
Entries entries(const std::vector<D::Example>& batch) {
  Entries out;
  for (const D::Example& e : batch) out.emplace_back(e[0].item<int64_t>(), e[1].item<int64_t>());
  return out;
}
Entries in_epoch(const std::vector<int64_t>& indices, int64_t epoch) {
  Entries out;
  for (int64_t i : indices) out.emplace_back(i, epoch);
  return out;
}
Entries joined(Entries a, const Entries& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Keeps saved values in memory under their full keys ("scope/key"); reader() loads them back.
class MemorySerializer : public Serializer {
 public:
  explicit MemorySerializer(bool loading) : loading_(loading), values_(std::make_shared<Values>()) {}
  Serializer& operator[](const std::string& name) override {
    auto& child = children_[name];
    if (!child) child.reset(new MemorySerializer(loading_, prefix_ + name + "/", values_));
    return *child;
  }
  void operator()(const std::string& key, Array& value) override { visit(values_->arrays, key, value); }
  void operator()(const std::string& key, double& value) override { visit(values_->doubles, key, value); }
  void operator()(const std::string& key, int64_t& value) override { visit(values_->ints, key, value); }
  bool is_loading() const override { return loading_; }
  // A reader of a copy of what this serializer holds.
  MemorySerializer reader() const { return MemorySerializer(true, "", std::make_shared<Values>(*values_)); }
  // The saved keys.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : values_->arrays) out.push_back(k);
    for (const auto& [k, v] : values_->doubles) out.push_back(k);
    for (const auto& [k, v] : values_->ints) out.push_back(k);
    return out;
  }

 private:
  struct Values {
    std::map<std::string, Array> arrays;
    std::map<std::string, double> doubles;
    std::map<std::string, int64_t> ints;
  };
  MemorySerializer(bool loading, std::string prefix, std::shared_ptr<Values> values)
      : loading_(loading), prefix_(std::move(prefix)), values_(std::move(values)) {}
  template <class T>
  void visit(std::map<std::string, T>& map, const std::string& key, T& value) {
    if (loading_) {
      REQUIRE(map.count(prefix_ + key) == 1);
      value = map.at(prefix_ + key);
    } else if constexpr (std::is_same_v<T, Array>) {
      map[prefix_ + key] = value.copy();
    } else {
      map[prefix_ + key] = value;
    }
  }

  bool loading_;
  std::string prefix_;
  std::shared_ptr<Values> values_;
  std::map<std::string, std::unique_ptr<MemorySerializer>> children_;
};

}  // namespace

TEST_CASE("SerialIterator without shuffling wraps the last partial batch into the next epoch") {
  D::SerialIterator it(std::make_shared<Recorder>(10), 4, true, false);
  CHECK(it.epoch() == 0);
  CHECK(!it.previous_epoch_detail().has_value());
  CHECK(entries(it.next()) == in_epoch({0, 1, 2, 3}, 0));
  CHECK(it.epoch_detail() == doctest::Approx(0.4));
  CHECK(*it.previous_epoch_detail() == doctest::Approx(0.0));
  CHECK(!it.is_new_epoch());
  CHECK(entries(it.next()) == in_epoch({4, 5, 6, 7}, 0));
  CHECK(entries(it.next()) == joined(in_epoch({8, 9}, 0), in_epoch({0, 1}, 1)));
  CHECK(it.is_new_epoch());
  CHECK(it.epoch() == 1);
  CHECK(it.epoch_detail() == doctest::Approx(1.2));
  CHECK(*it.previous_epoch_detail() == doctest::Approx(0.8));
  CHECK(entries(it.next()) == in_epoch({2, 3, 4, 5}, 1));
  CHECK(!it.is_new_epoch());
  CHECK(it.batch_size() == 4);
}

TEST_CASE("SerialIterator without repeat ends with the remainder, then empty batches") {
  D::SerialIterator it(std::make_shared<Recorder>(10), 4, false, false);
  it.next();
  it.next();
  CHECK(entries(it.next()) == in_epoch({8, 9}, 0));
  CHECK(it.is_new_epoch());
  CHECK(it.epoch() == 1);
  CHECK(it.epoch_detail() == doctest::Approx(1.0));
  CHECK(it.next().empty());
  CHECK(it.next().empty());
  it.reset();
  CHECK(it.epoch() == 0);
  CHECK(!it.previous_epoch_detail().has_value());
  CHECK(entries(it.next()) == in_epoch({0, 1, 2, 3}, 0));
}

TEST_CASE("SerialIterator shuffles each epoch with the permutation of (seed, epoch)") {
  D::SerialIterator it(std::make_shared<Recorder>(10), 4, true, true, 7);
  const std::vector<int64_t> first = D::random_permutation(10, 7, 0), second = D::random_permutation(10, 7, 1);
  CHECK(first != second);
  auto part = [](const std::vector<int64_t>& order, size_t begin, size_t end) {
    return std::vector<int64_t>(order.begin() + static_cast<long>(begin), order.begin() + static_cast<long>(end));
  };
  CHECK(entries(it.next()) == in_epoch(part(first, 0, 4), 0));
  CHECK(entries(it.next()) == in_epoch(part(first, 4, 8), 0));
  CHECK(entries(it.next()) == joined(in_epoch(part(first, 8, 10), 0), in_epoch(part(second, 0, 2), 1)));
  CHECK(entries(it.next()) == in_epoch(part(second, 2, 6), 1));
  D::SerialIterator other_seed(std::make_shared<Recorder>(10), 4, true, true, 8);
  CHECK(entries(other_seed.next()) != in_epoch(part(first, 0, 4), 0));
}

TEST_CASE("a batch larger than the data set spans several epochs") {
  D::SerialIterator it(std::make_shared<Recorder>(3), 7, true, false);
  CHECK(entries(it.next()) == joined(joined(in_epoch({0, 1, 2}, 0), in_epoch({0, 1, 2}, 1)), in_epoch({0}, 2)));
  CHECK(it.epoch() == 2);
  CHECK(it.is_new_epoch());
  CHECK(it.epoch_detail() == doctest::Approx(2 + 1.0 / 3));
}

TEST_CASE("a resumed SerialIterator continues exactly like the saved one") {
  auto dataset = std::make_shared<Recorder>(10);
  D::SerialIterator it(dataset, 4, true, true, 3);
  for (int i = 0; i < 5; ++i) it.next();  // mid-epoch 1
  MemorySerializer saved(false);
  it.serialize(saved);
  const std::vector<std::string> keys = saved.keys();
  for (const char* key : {"current_position", "epoch", "is_new_epoch", "order", "previous_epoch_detail", "seed"}) {
    CHECK(std::find(keys.begin(), keys.end(), key) != keys.end());
  }
  D::SerialIterator resumed(dataset, 4, true, true, 99);  // the seed comes from the snapshot
  MemorySerializer reader = saved.reader();
  resumed.serialize(reader);
  CHECK(resumed.epoch() == it.epoch());
  CHECK(resumed.epoch_detail() == doctest::Approx(it.epoch_detail()));
  CHECK(*resumed.previous_epoch_detail() == doctest::Approx(*it.previous_epoch_detail()));
  CHECK(resumed.is_new_epoch() == it.is_new_epoch());
  for (int i = 0; i < 12; ++i) CHECK(entries(resumed.next()) == entries(it.next()));
}

TEST_CASE("iterators reject bad arguments") {
  expect_error<ValueError>([] { D::SerialIterator(std::make_shared<Recorder>(3), 0); }, {"batch size", "got 0"});
  expect_error<ValueError>([] { D::SerialIterator(std::make_shared<Recorder>(0), 2); }, {"non-empty", "0 examples"});
  expect_error<ValueError>([] { D::SerialIterator(nullptr, 2); }, {"SerialIterator", "null"});
  expect_error<ValueError>([] { D::MultithreadIterator(std::make_shared<Recorder>(3), 2, true, true, 0, -1); },
                           {"n_threads", "-1"});
  D::SerialIterator empty_once(std::make_shared<Recorder>(0), 2, false);
  CHECK(empty_once.next().empty());
}

TEST_CASE("MultithreadIterator yields the batches of SerialIterator") {
  auto dataset = std::make_shared<Recorder>(23);
  for (bool repeat : {true, false}) {
    for (bool shuffle : {true, false}) {
      D::SerialIterator serial(dataset, 5, repeat, shuffle, 11);
      D::MultithreadIterator threaded(dataset, 5, repeat, shuffle, 11, 3);
      for (int i = 0; i < 12; ++i) {
        INFO("repeat ", repeat, ", shuffle ", shuffle, ", batch ", i);
        CHECK(entries(threaded.next()) == entries(serial.next()));
        CHECK(threaded.epoch() == serial.epoch());
        CHECK(threaded.is_new_epoch() == serial.is_new_epoch());
        CHECK(threaded.epoch_detail() == doctest::Approx(serial.epoch_detail()));
        CHECK(threaded.previous_epoch_detail() == serial.previous_epoch_detail());
      }
    }
  }
}

TEST_CASE("a shuffled iterator resumes through a strict load_npz") {
  TempDir dir;
  auto dataset = std::make_shared<Recorder>(11);
  D::SerialIterator it(dataset, 4, true, true, 9);
  for (int i = 0; i < 4; ++i) it.next();
  serializers::save_npz(dir / "iterator.npz", it);
  D::SerialIterator resumed(dataset, 4, true, true, 0);
  serializers::load_npz(dir / "iterator.npz", resumed);
  for (int i = 0; i < 6; ++i) CHECK(entries(resumed.next()) == entries(it.next()));
  auto bigger = std::make_shared<Recorder>(12);
  D::SerialIterator other_size(bigger, 4, true, true, 0);
  expect_error<ShapeError>([&] { serializers::load_npz(dir / "iterator.npz", other_size); },
                           {"order", "(12,)", "(11,)"});
  CHECK(entries(other_size.next()) == entries(D::SerialIterator(bigger, 4, true, true, 0).next()));  // untouched
}

TEST_CASE("MultithreadIterator resumes, resets and reports worker errors") {
  auto dataset = std::make_shared<Recorder>(17);
  D::MultithreadIterator it(dataset, 4, true, true, 5, 2);
  for (int i = 0; i < 6; ++i) it.next();
  MemorySerializer saved(false);
  it.serialize(saved["updater"]["iterator"]);
  D::SerialIterator serial(dataset, 4, true, true, 0);
  MemorySerializer reader = saved.reader();
  serial.serialize(reader["updater"]["iterator"]);
  for (int i = 0; i < 8; ++i) CHECK(entries(it.next()) == entries(serial.next()));
  // Loading into a running iterator drops what it had prefetched.
  MemorySerializer again = saved.reader();
  it.serialize(again["updater"]["iterator"]);
  D::SerialIterator replay(dataset, 4, true, true, 0);
  MemorySerializer replay_reader = saved.reader();
  replay.serialize(replay_reader["updater"]["iterator"]);
  CHECK(entries(it.next()) == entries(replay.next()));
  it.reset();
  CHECK(it.epoch() == 0);
  CHECK(entries(it.next()) == entries(D::SerialIterator(dataset, 4, true, true, 5).next()));

  D::MultithreadIterator failing(std::make_shared<Recorder>(6, 4), 3, true, false, 0, 2);
  CHECK(entries(failing.next()) == in_epoch({0, 1, 2}, 0));
  expect_error<ValueError>([&] { failing.next(); }, {"cannot load example 4"});
  CHECK(entries(failing.next()) == in_epoch({0, 1, 2}, 1));
}

TEST_CASE("iterator batches feed concat_examples") {
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto dataset = std::make_shared<D::TupleDataset>(std::vector<Array>{
      Array::from_vector(x, {6, 2}), Array::arange(0, 6, 1, Dtype::int32)});
  D::MultithreadIterator it(dataset, 4, true, false, 0, 2);
  const D::Example batch = D::concat_examples(it.next());
  CHECK(batch[0].shape() == Shape{4, 2});
  expect_values(batch[0], {0, 1, 2, 3, 4, 5, 6, 7});
  expect_values(batch[1], {0, 1, 2, 3});
}

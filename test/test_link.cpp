#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// y = x * scale + shift, elementwise over a feature axis of size n.
class Affine : public L::Cloneable<Affine, L::Link> {
 public:
  explicit Affine(int64_t n) {
    add_param("scale", Array::ones({n}));
    add_param("shift", Array::zeros({n}));
    add_persistent("calls", Array::zeros({}, Dtype::int64));
  }
  Variable forward(const Variable& x) override {
    persistent("calls") = persistent("calls") + 1.0;
    return x * param("scale") + param("shift");
  }
};

class Net : public L::Cloneable<Net, L::Chain> {
 public:
  std::shared_ptr<Affine> first = std::make_shared<Affine>(3);
  std::shared_ptr<Affine> second = std::make_shared<Affine>(3);
  Net() {
    add_link("first", first);
    add_link("second", second);
  }
  Variable forward(const Variable& x) override { return second->forward(first->forward(x)); }
};

}  // namespace

TEST_CASE("namedparams are sorted paths and count_params counts scalars") {
  Net net;
  const auto named = net.namedparams();
  std::vector<std::string> names;
  for (const auto& [name, v] : named) names.push_back(name);
  CHECK(names == std::vector<std::string>{"/first/scale", "/first/shift", "/second/scale", "/second/shift"});
  CHECK(net.count_params() == 12);
  const auto links = net.namedlinks();
  REQUIRE(links.size() == 3);
  CHECK(links[0].first == "/");
  CHECK(links[1].first == "/first");
}

TEST_CASE("backward fills parameter gradients and cleargrads removes them") {
  Net net;
  Variable x(Array::from_vector<float>({1, 2, 3}, {3}));
  Variable y = net(x);
  y.set_grad(Array::ones({3}));
  y.backward();
  expect_values(net.first->param("scale").grad(), {1, 2, 3});
  expect_values(net.second->param("shift").grad(), {1, 1, 1});
  net.cleargrads();
  CHECK_FALSE(net.first->param("scale").grad().defined());
  net.zerograds();
  expect_values(net.first->param("scale").grad(), {0, 0, 0});
}

TEST_CASE("copy is deep: parameters, persistents and member pointers are the copy's own") {
  Net net;
  auto copied = std::dynamic_pointer_cast<Net>(net.copy());
  REQUIRE(copied);
  CHECK(copied->first != net.first);
  CHECK(copied->child<Affine>("first") == copied->first);
  copied->first->param("scale").data().fill(5.0);
  copied->first->persistent("calls").fill(7.0);
  expect_values(net.first->param("scale").data(), {1, 1, 1});
  expect_values(net.first->persistent("calls"), {0});
  Variable y = (*copied)(Variable(Array::ones({3})));
  expect_values(y.data(), {5, 5, 5});
  net.copyparams(*copied);
  expect_values(net.first->param("scale").data(), {5, 5, 5});
  expect_values(net.first->persistent("calls"), {8});
}

TEST_CASE("train flag propagates to children") {
  Net net;
  net.set_train(false);
  CHECK_FALSE(net.first->is_train());
  CHECK_FALSE(net.second->is_train());
}

TEST_CASE("uninitialised parameters get their shape later") {
  L::Link link;
  link.add_uninitialized_param("W", [](const Array& a) { a.fill(2.0); });
  CHECK(link.namedparams().empty());
  CHECK(link.namedparams(true).size() == 1);
  Variable w = link.initialize_param("W", {2, 2});
  expect_values(w.data(), {2, 2, 2, 2});
  expect_error<ValueError>([&] { link.initialize_param("W", {2}); }, {"'W'", "already", "(2, 2)"});
  expect_error<ValueError>([&] { link.add_param("W", Array::ones({1})); }, {"'W'", "already registered"});
  expect_error<ValueError>([&] { link.param("b"); }, {"no parameter named 'b'"});
}

TEST_CASE("an uninitialised parameter is made on the device to_device named: initialised or loaded") {
  const Device device = Device::loopback(0);
  TempDir dir;
  L::Link saved;  // a snapshot written on the CPU
  saved.add_param("W", Array::full({2}, 5.0));
  saved.add_param("b", Array::ones({3}));
  serializers::save_npz(dir / "link.npz", saved);
  for (const bool loaded : {false, true}) {
    CAPTURE(loaded);
    L::Link link;
    link.add_uninitialized_param("W", [](const Array& a) { a.fill(2.0); });
    link.add_uninitialized_param("b", nullptr);
    link.to_device(device);
    if (loaded) {
      serializers::load_npz(dir / "link.npz", link);
    } else {
      link.initialize_param("W", {2});
      link.initialize_param("b", {3});
    }
    CHECK(link.param("W").data().device() == device);
    CHECK(link.param("b").data().device() == device);
    expect_values(link.param("W").data().to(Device::cpu()), {loaded ? 5.0 : 2.0, loaded ? 5.0 : 2.0});
    const double b = loaded ? 1.0 : 0.0;  // zeros without an initializer
    expect_values(link.param("b").data().to(Device::cpu()), {b, b, b});
  }
}

TEST_CASE("a link that does not derive from Cloneable says so on copy") {
  L::Link plain;
  expect_error<ValueError>([&] { plain.copy(); }, {"Cloneable"});
}

TEST_CASE("Sequential applies links and functions in order and copies deeply") {
  L::Sequential seq;
  auto affine = std::make_shared<Affine>(2);
  affine->param("scale").data().fill(-1.0);
  seq.append(affine).append([](const Variable& x) { return x * 3.0; });
  Variable y = seq(Variable(Array::from_vector<float>({1, 2}, {2})));
  expect_values(y.data(), {-3, -6});
  auto copied = seq.copy();
  affine->param("scale").data().fill(1.0);
  expect_values(copied->forward(Variable(Array::from_vector<float>({1, 2}, {2}))).data(), {-3, -6});
  CHECK(seq.namedparams().front().first == "/0/scale");
}

TEST_CASE("a std::shared_ptr<Link> field is re-pointed by copy()") {
  class Holder : public L::Cloneable<Holder, L::Chain> {
   public:
    std::shared_ptr<L::Link> inner = std::make_shared<Affine>(2);
    Holder() { add_link("inner", inner); }
  };
  Holder holder;
  auto copied = std::dynamic_pointer_cast<Holder>(holder.copy());
  CHECK(copied->inner != holder.inner);
  CHECK(copied->inner == copied->child<L::Link>("inner"));
}

TEST_CASE("replace_child re-points fields and list entries, and refuses what cannot stand there") {
  Net net;
  auto other = std::make_shared<Affine>(3);
  other->param("scale").data().fill(2.0);
  net.replace_child("first", other);
  CHECK(net.first == other);
  CHECK(net.child<Affine>("first") == other);
  expect_values(net(Variable(Array::from_vector<float>({1, 2, 3}, {3}))).data(), {2, 4, 6});
  expect_error<ValueError>([&] { net.replace_child("first", std::make_shared<L::Sequential>()); },
                           {"child 'first' cannot hold a link of another type"});
  CHECK(net.first == other);
  expect_error<ValueError>([&] { net.replace_child("third", other); }, {"no child named 'third'"});
  expect_error<ValueError>([&] { net.replace_child("first", nullptr); }, {"replacement of child 'first' is null"});

  L::Sequential seq;
  seq.append(std::make_shared<Affine>(2)).append([](const Variable& x) { return x * 3.0; });
  auto doubling = std::make_shared<Affine>(2);
  doubling->param("scale").data().fill(2.0);
  seq.replace_child("0", doubling);
  expect_values(seq(Variable(Array::from_vector<float>({1, 2}, {2}))).data(), {6, 12});
  expect_error<ValueError>([&] { seq.replace_child("1", doubling); }, {"Sequential", "no child named '1'"});
  expect_error<ValueError>([&] { Affine(2).replace_child("x", doubling); }, {"no child named 'x'"});
}

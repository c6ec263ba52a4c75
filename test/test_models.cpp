#include "testing.h"

#include <cmath>
#include <filesystem>
#include <tuple>

#include <unistd.h>

using namespace kusari;
using namespace kusari::testing;
namespace M = L::models;
namespace S = serializers;

namespace {

std::vector<std::string> param_names(const L::Link& link) {
  std::vector<std::string> names;
  for (const auto& [name, v] : link.namedparams()) names.push_back(name);
  return names;
}

// Batch-normalization settings other than the defaults, which every BN layer of a model should get.
M::NormalizationConfig custom_config(bool use_running_average) {
  return {.eps = 1e-3, .decay = 0.8, .use_running_average = use_running_average, .group_size = 4, .zero_gamma = true};
}

// Checks that every BatchNormalization in model's tree has config's settings and that there are
// `expected` of them.
void expect_configured(const L::Link& model, const M::NormalizationConfig& config, int64_t expected) {
  int64_t layers = 0;
  for (const auto& entry : model.namedlinks()) {
    const auto& path = std::get<0>(entry);
    const auto& link = std::get<1>(entry);
    const auto* bn = dynamic_cast<const L::BatchNormalization*>(link);
    if (bn == nullptr) continue;
    INFO(path);
    CHECK(bn->eps() == config.eps);
    CHECK(bn->decay() == config.decay);
    CHECK(bn->use_running_average() == config.use_running_average);
    CHECK(bn->group_size() == config.group_size);
    ++layers;
  }
  CHECK(layers == expected);
}

// The large models, built once for the whole suite (initialising their parameters takes seconds).
const M::ResNet50& resnet50_zero_gamma() {
  static const M::ResNet50 net(1000, custom_config(false));
  return net;
}
M::AlexNet& alexnet() {
  static M::AlexNet net;
  return net;
}
M::AlexNetBN& alexnet_bn() {
  static M::AlexNetBN net(1000, custom_config(false));
  return net;
}
M::AlexNetPool5BN& alexnet_pool5_bn() {
  static M::AlexNetPool5BN net(1000, custom_config(true));
  return net;
}

bool all_finite(const Array& a) {
  for (const double v : a.to_vector<double>()) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("MLP has Chainer's l1, l2, l3 with an inferred input size") {
  M::MLP mlp(10, 3);
  CHECK(param_names(mlp) == std::vector<std::string>{"/l1/b", "/l2/W", "/l2/b", "/l3/W", "/l3/b"});
  const Variable x(random({4, 2, 3}, 1, Dtype::float32));
  const Variable y = mlp(x);
  CHECK(y.shape() == Shape{4, 3});
  CHECK(mlp.child<L::Linear>("l1")->param("W").shape() == Shape{10, 6});
  const auto l = [&](const char* name) { return mlp.child<L::Linear>(name); };
  const Variable expected = (*l("l3"))(F::relu((*l("l2"))(F::relu((*l("l1"))(x)))));
  expect_close(y.data(), expected.data());
  M::MLP single(5, 2, 1);
  CHECK(single(x).shape() == Shape{4, 2});
  CHECK(param_names(single) == std::vector<std::string>{"/l1/W", "/l1/b"});
  expect_error<ValueError>([] { M::MLP(5, 2, 0); }, {"MLP", "n_layers >= 1", "0"});
}

TEST_CASE("ResNet-20 maps (2, 1, 28, 28) to (2, 10) and backward reaches every parameter") {
  M::ResNet net(20, 1, 10);
  const Variable x(random({2, 1, 28, 28}, 2, Dtype::float32));
  const Variable y = net(x);
  CHECK(y.shape() == Shape{2, 10});
  F::softmax_cross_entropy(y, Variable(Array::from_vector<int32_t>({3, 7}, {2}))).backward();
  int64_t with_grad = 0;
  for (const auto& entry : net.namedparams()) {
    const auto& name = std::get<0>(entry);
    const auto& p = std::get<1>(entry);
    INFO(name);
    CHECK(p.grad().defined());
    CHECK(p.grad().shape() == p.shape());
    with_grad += p.grad().defined() ? 1 : 0;
  }
  // 19 convolutions (1 stem + 3 stages x 3 blocks x 2) + 2 projections = 21 W, 21 BN x (gamma, beta),
  // fc W and b: 65 tensors.
  CHECK(with_grad == 65);
}

TEST_CASE("ResNet-20 has the layout of He et al.'s CIFAR network") {
  M::ResNet net;
  // conv1 16*3*9 = 432, bn1 32;
  // stage 1: 3 blocks x (2 x 16*16*9 + 2 x 32) = 3 x 4672 = 14016;
  // stage 2: block 0 32*16*9 + 32*32*9 + 2 x 64 + projection 32*16 + 64 = 4608 + 9216 + 128 + 576 = 14528,
  //          blocks 1-2: 2 x (2 x 9216 + 128) = 37120;
  // stage 3: block 0 64*32*9 + 64*64*9 + 2 x 128 + projection 64*32 + 128 = 18432 + 36864 + 256 + 2176 = 57728,
  //          blocks 1-2: 2 x (2 x 36864 + 256) = 147968;
  // fc 64*10 + 10 = 650. Sum: 432 + 32 + 14016 + 14528 + 37120 + 57728 + 147968 + 650 = 272474.
  CHECK(net.count_params() == 272474);
  CHECK(net.namedparams().size() == 65);
  CHECK(net.child<L::Sequential>("res3")->size() == 3);
  auto first = std::dynamic_pointer_cast<M::ResidualBlock>((*net.child<L::Sequential>("res3"))[0]);
  REQUIRE(first);
  CHECK(first->child<L::Convolution2D>("conv1")->conv_params().stride == F::Int2(2));
  CHECK(first->child<L::Convolution2D>("shortcut_conv")->param("W").shape() == Shape{32, 16, 1, 1});
  CHECK(M::ResNet(56).count_params() > M::ResNet(32).count_params());
  expect_error<ValueError>([] { M::ResNet(21); }, {"ResNet", "6n + 2", "21"});
}

TEST_CASE("zero_gamma starts the last scale of every residual branch at 0") {
  M::ResNet net(20, 3, 10, {.zero_gamma = true});
  int64_t zeroed = 0;
  for (const auto& entry : net.namedparams()) {
    const auto& name = std::get<0>(entry);
    const auto& p = std::get<1>(entry);
    if (!name.ends_with("/gamma")) continue;
    const bool last_of_branch = name.ends_with("/bn2/gamma");
    INFO(name);
    CHECK(p.data().to_vector<double>().front() == (last_of_branch ? 0.0 : 1.0));
    zeroed += last_of_branch ? 1 : 0;
  }
  CHECK(zeroed == 9);
  auto block = std::dynamic_pointer_cast<M::ResidualBlock>((*resnet50_zero_gamma().child<L::Sequential>("res4"))[2]);
  REQUIRE(block);
  expect_values(block->child<L::BatchNormalization>("bn3")->param("gamma").data(), std::vector<double>(1024, 0.0));
  expect_values(block->child<L::BatchNormalization>("bn2")->param("gamma").data(), std::vector<double>(256, 1.0));
}

TEST_CASE("a NormalizationConfig reaches every batch normalization of each model") {
  expect_configured(M::ResNet(20, 1, 10, custom_config(false)), custom_config(false), 21);
  expect_configured(M::ResNet(20, 1, 10, custom_config(true)), custom_config(true), 21);
  expect_configured(M::ResNet(), M::NormalizationConfig{}, 21);
  expect_configured(resnet50_zero_gamma(), custom_config(false), 53);
  expect_configured(alexnet_bn(), custom_config(false), 6);
  expect_configured(alexnet_pool5_bn(), custom_config(true), 1);
  // Without a residual branch, zero_gamma zeroes nothing.
  for (const auto& entry : alexnet_bn().namedparams()) {
    const auto& name = std::get<0>(entry);
    const auto& p = std::get<1>(entry);
    INFO(name);
    if (name.ends_with("/gamma")) CHECK(ops::amin(p.data()).item<double>() == 1.0);
  }
  // options() gives the plain options: no zero_gamma, no activation.
  const M::NormalizationConfig config{.eps = 1e-4, .decay = 0.7, .use_running_average = false, .group_size = 2,
                                      .zero_gamma = true};
  const L::BatchNormalization layer(config.options(8));
  CHECK(layer.size() == 8);
  CHECK(layer.eps() == 1e-4);
  CHECK(layer.decay() == 0.7);
  CHECK_FALSE(layer.use_running_average());
  CHECK(layer.group_size() == 2);
  CHECK(layer.activation() == F::Activation::none);
  expect_values(layer.param("gamma").data(), std::vector<double>(8, 1.0));
}

TEST_CASE("ResNet-50 has 25,557,032 parameters in 161 tensors") {
  const M::ResNet50& net = resnet50_zero_gamma();
  CHECK(net.count_params() == 25557032);
  // 53 convolutions without bias + 53 BN x (gamma, beta) + fc W, b.
  CHECK(net.namedparams().size() == 161);
  CHECK(net.child<L::Linear>("fc")->param("W").shape() == Shape{1000, 2048});
  auto first = std::dynamic_pointer_cast<M::ResidualBlock>((*net.child<L::Sequential>("res3"))[0]);
  REQUIRE(first);
  CHECK(first->child<L::Convolution2D>("conv1")->conv_params().stride == F::Int2(1));
  CHECK(first->child<L::Convolution2D>("conv2")->conv_params().stride == F::Int2(2));
  CHECK(first->child<L::Convolution2D>("shortcut_conv")->param("W").shape() == Shape{512, 256, 1, 1});
  CHECK(net.child<L::Convolution2D>("conv1")->param("W").shape() == Shape{64, 3, 7, 7});
}

TEST_CASE("ResNet-50 runs on a small input in evaluation mode") {
  auto net = std::dynamic_pointer_cast<M::ResNet50>(resnet50_zero_gamma().copy());
  REQUIRE(net);
  net->set_train(false);
  auto no_graph = no_backprop_mode();
  const Variable y = (*net)(Variable(random({1, 3, 64, 64}, 3, Dtype::float32)));
  CHECK(y.shape() == Shape{1, 1000});
  CHECK(all_finite(y.data()));
}

TEST_CASE("AlexNet and AlexNet-BN have the parameter counts of their layouts") {
  M::AlexNet& net = alexnet();
  CHECK_FALSE(net.child<L::Linear>("fc6")->is_initialized("W"));  // shaped by the first images
  {
    auto no_graph = no_backprop_mode();
    net(Variable(random({1, 3, 224, 224}, 7, Dtype::float32)));
    alexnet_bn()(Variable(random({1, 3, 224, 224}, 7, Dtype::float32)));
  }
  // conv1 96*3*11*11 + 96 = 34944; conv2 256*96*5*5 + 256 = 614656; conv3 384*256*3*3 + 384 = 885120;
  // conv4 384*384*3*3 + 384 = 1327488; conv5 256*384*3*3 + 256 = 884992; fc6 4096*9216 + 4096 = 37752832;
  // fc7 4096*4096 + 4096 = 16781312; fc8 1000*4096 + 1000 = 4097000. Sum: 62378344.
  CHECK(net.count_params() == 62378344);
  CHECK(net.namedparams().size() == 16);
  const M::AlexNetBN& net_bn = alexnet_bn();
  // The convolutions lose their biases (96 + 256 + 384 + 384 + 256 = 1376) and the BNs after them add
  // 2 x 1376 = 2752, bn_pool5 2 x 256 = 512: 62378344 - 1376 + 2752 + 512 = 62380232.
  CHECK(net_bn.count_params() == 62380232);
  CHECK(net_bn.namedparams().size() == 11 + 6 * 2);
  CHECK(param_names(net_bn).front() == "/bn1/beta");
}

TEST_CASE("AlexNetPool5BN is AlexNet without LRN and with one batch normalization, after pool5") {
  M::AlexNetPool5BN& net = alexnet_pool5_bn();
  {
    auto no_graph = no_backprop_mode();
    net(Variable(random({1, 3, 224, 224}, 8, Dtype::float32)));
  }
  // AlexNet's 62378344 parameters (biased convolutions) plus bn_pool5's 2 x 256.
  CHECK(net.count_params() == 62378344 + 512);
  CHECK(net.namedparams().size() == 16 + 2);
  int64_t bns = 0;
  for (const auto& [path, link] : net.namedlinks()) bns += dynamic_cast<const L::BatchNormalization*>(link) ? 1 : 0;
  CHECK(bns == 1);
  CHECK(net.child<L::BatchNormalization>("bn_pool5")->size() == 256);
  CHECK(net.child<L::Convolution2D>("conv1")->is_initialized("b"));
  auto no_graph = no_backprop_mode();
  const Variable y = net(Variable(random({2, 3, 224, 224}, 9, Dtype::float32)));
  CHECK(y.shape() == Shape{2, 1000});
  CHECK(all_finite(y.data()));
  CHECK(net.child<L::BatchNormalization>("bn_pool5")->persistent("avg_mean").to_vector<double>() !=
        std::vector<double>(256, 0.0));
  auto copied = std::dynamic_pointer_cast<M::AlexNetPool5BN>(net.copy());
  REQUIRE(copied);
  CHECK(copied->child<L::BatchNormalization>("bn_pool5") != net.child<L::BatchNormalization>("bn_pool5"));
}

TEST_CASE("AlexNet and AlexNet-BN map 227x227 images to logits") {
  auto no_graph = no_backprop_mode();
  const Variable x(random({1, 3, 227, 227}, 4, Dtype::float32));
  alexnet().set_train(false);
  const Variable y = alexnet()(x);
  alexnet().set_train(true);
  CHECK(y.shape() == Shape{1, 1000});
  CHECK(all_finite(y.data()));
  const Variable y_bn = alexnet_bn()(x);
  CHECK(y_bn.shape() == Shape{1, 1000});
  CHECK(all_finite(y_bn.data()));
  CHECK(alexnet_bn().child<L::BatchNormalization>("bn_pool5")->persistent("avg_mean").to_vector<double>() !=
        std::vector<double>(256, 0.0));
}

TEST_CASE("a copied model is independent of its source") {
  M::ResNet net(8, 1, 3);
  net.set_train(false);
  auto copied = std::dynamic_pointer_cast<M::ResNet>(net.copy());
  REQUIRE(copied);
  const Variable x(random({2, 1, 8, 8}, 5, Dtype::float32));
  expect_close((*copied)(x).data(), net(x).data());
  const auto mine = net.namedparams(), theirs = copied->namedparams();
  REQUIRE(mine.size() == theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    CHECK(mine[i].first == theirs[i].first);
    CHECK_FALSE(mine[i].second.is(theirs[i].second));
  }
  for (const auto& [name, p] : copied->namedparams()) p.data().fill(0.0);
  copied->set_train(true);
  (*copied)(x);
  CHECK(ops::amax(ops::abs(net.child<L::Linear>("fc")->param("W").data())).item<double>() > 0);
  auto block = std::dynamic_pointer_cast<M::ResidualBlock>((*net.child<L::Sequential>("res2"))[0]);
  expect_values(block->child<L::BatchNormalization>("bn1")->persistent("avg_mean"), std::vector<double>(16, 0.0));
  expect_values(net.child<L::BatchNormalization>("bn1")->persistent("avg_mean"), std::vector<double>(16, 0.0));

  auto copied_alexnet = std::dynamic_pointer_cast<M::AlexNetBN>(alexnet_bn().copy());
  REQUIRE(copied_alexnet);
  CHECK(copied_alexnet->child<L::BatchNormalization>("bn3") != alexnet_bn().child<L::BatchNormalization>("bn3"));
  CHECK(copied_alexnet->count_params() == alexnet_bn().count_params());
  M::MLP mlp(4, 2);
  auto copied_mlp = std::dynamic_pointer_cast<M::MLP>(mlp.copy());
  REQUIRE(copied_mlp);
  (*copied_mlp)(Variable(random({1, 5}, 6, Dtype::float32)));
  CHECK(copied_mlp->child<L::Linear>("l1")->is_initialized("W"));
  CHECK_FALSE(mlp.child<L::Linear>("l1")->is_initialized("W"));
}

TEST_CASE("a trained model survives an NPZ round trip, lazy layers and running statistics included") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("kusari_models_" + std::to_string(::getpid()) + ".npz")).string();
  const Variable x(random({2, 1, 8, 8}, 7, Dtype::float32));
  M::ResNet trained(8, 1, 3);
  trained(x);
  M::MLP mlp(4, 2);
  mlp(Variable(random({1, 5}, 8, Dtype::float32)));
  S::save_npz(path, trained);
  M::ResNet restored(8, 1, 3);
  S::load_npz(path, restored);
  trained.set_train(false);
  restored.set_train(false);
  expect_close(restored(x).data(), trained(x).data());
  S::save_npz(path, mlp);
  M::MLP fresh(4, 2);
  S::load_npz(path, fresh);
  CHECK(fresh.child<L::Linear>("l1")->param("W").shape() == Shape{4, 5});
  std::filesystem::remove(path);
}

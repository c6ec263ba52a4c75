// The communicator's NCCL path for device arrays against its MPI path for the same values on the host:
// allreduce_grad of float32, float64 and float16 arrays (strided ones too) over a float32 and a float16
// wire, by NCCL's all-reduce, the two-level algorithms' and multi_color's NCCL groups, written back in
// place on the device (an odd element count, so two_dimensional pads where a node has several ranks);
// the multi-node optimizer on a device, its buckets all-reduced on the communication stream during
// backward, against the same training on the CPU; ranks that disagree on the path or the sizes refused.
// Two programs: test_cuda_nccl on GPUs (one rank per GPU: NCCL refuses two ranks on one device; exits
// 77, skipped, where the process sees no CUDA device) and on the host emulation's cuda:0 under mpiexec
// with 2 to 4 ranks (each process's device its own, the emulation's NCCL between them), and
// test_nccl_path on loopback:0 with
// KUSARI_LOOPBACK_NCCL=1 under mpiexec, MPI groups on host copies standing in for NCCL's: every step of
// the path but the NCCL calls, with as many ranks as a test likes.
#include "testing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <kusari/kernels/cuda/runtime.h>
#include <kusari/kusari.h>

using namespace kusari;
using namespace kusari::distributed;

namespace {

// The device the NCCL path serves in this run: this rank's GPU, or loopback:0 standing in.
Device path_device(const Communicator& comm) {
  const char* stand_in = std::getenv("KUSARI_LOOPBACK_NCCL");
  if (stand_in && std::string(stand_in) == "1") return Device::loopback(0);
  return Device::cuda(comm.intra_rank() % cuda::device_count());
}

// This rank's contribution: values that differ by rank and index, exact in float16.
Array contribution(const Shape& shape, int rank, Dtype dtype) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((rank + 1) * static_cast<int>(i % 13) - 6);
  return Array::from_vector(v, shape).astype(dtype);
}

// linear -> relu -> linear -> relu -> linear, wide enough that backward outlasts the first buckets'
// all-reduces.
class Mlp : public links::Chain {
 public:
  Mlp() {
    add_link("l1", l1);
    add_link("l2", l2);
    add_link("l3", l3);
  }
  Variable forward(const Variable& x) override {
    return l3->forward(functions::relu(l2->forward(functions::relu(l1->forward(x)))));
  }
  std::shared_ptr<links::Linear> l1 = std::make_shared<links::Linear>(64, 512);
  std::shared_ptr<links::Linear> l2 = std::make_shared<links::Linear>(512, 512);
  std::shared_ptr<links::Linear> l3 = std::make_shared<links::Linear>(512, 10);
};

// Inputs and targets of step `step` (every rank's own rows), on `device`.
std::pair<Array, Array> batch_of(int step, int rank, const Device& device) {
  const int64_t rows = 32;
  std::vector<double> x(static_cast<size_t>(rows * 64)), t(static_cast<size_t>(rows * 10));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i) + step + 7 * rank);
  for (size_t i = 0; i < t.size(); ++i) t[i] = std::cos(0.11 * static_cast<double>(i) - step + 3 * rank);
  return {Array::from_vector(x, {rows, 64}).astype(Dtype::float32).to(device),
          Array::from_vector(t, {rows, 10}).astype(Dtype::float32).to(device)};
}

}  // namespace

TEST_CASE("multi-node optimizer on the path's device: buckets averaged on the communication stream equal the CPU's "
          "training") {
  const Communicator comm = create_communicator();
  const Communicator half = create_communicator("hierarchical", {.wire_dtype = Dtype::float16});
  const Device target = path_device(comm);
  const std::vector<std::pair<const Communicator*, distributed::MultiNodeOptions>> settings = {
      {&comm, {}}, {&comm, {.bucket_bytes = 4096}}, {&comm, {.bucket_bytes = 4096, .overlap = false}},
      {&half, {.bucket_bytes = 4096}}};
  for (const auto& setting : settings) {
    const distributed::MultiNodeOptions& options = setting.second;
    CAPTURE(setting.first->algorithm());
    CAPTURE(options.bucket_bytes);
    CAPTURE(options.overlap);
    constexpr int kSteps = 4;
    default_generator().set_state(17, 0);
    auto net = std::make_shared<Mlp>();
    net->to_device(target);
    auto optimizer =
        create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.05, 0.9), *setting.first, options);
    optimizer->setup(net);
    // Every rank starts from the same parameters, so the first update is a step.
    for (int step = 1; step <= kSteps; ++step) {
      const std::pair<Array, Array> batch = batch_of(step, comm.rank(), target);
      CHECK(optimizer->update([&] {
        return functions::mean_squared_error((*net)(Variable(batch.first, false)), Variable(batch.second, false));
      }));
    }
    // One process on every rank's rows.
    default_generator().set_state(17, 0);
    auto reference = std::make_shared<Mlp>();
    optimizers::MomentumSGD plain(0.05, 0.9);
    plain.setup(reference);
    for (int step = 1; step <= kSteps; ++step) {
      std::vector<Array> xs, ts;
      for (int r = 0; r < comm.size(); ++r) {
        const auto [x, t] = batch_of(step, r, Device::cpu());
        xs.push_back(x);
        ts.push_back(t);
      }
      const Array x = ops::concatenate(xs, 0), t = ops::concatenate(ts, 0);
      plain.update([&] { return functions::mean_squared_error((*reference)(Variable(x, false)), Variable(t, false)); });
    }
    const auto got = net->namedparams(), want = reference->namedparams();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(got[i].first);
      CHECK(got[i].second.data().device() == target);
      const std::vector<double> a = got[i].second.data().to(Device::cpu()).to_vector<double>();
      const std::vector<double> b = want[i].second.data().to_vector<double>();
      REQUIRE(a.size() == b.size());
      double worst = 0;
      for (size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(a[k] - b[k]) / (1e-3 + std::abs(b[k])));
      // A float16 wire rounds every gradient to 11 bits (its four steps end within 0.3% here).
      CHECK(worst < (setting.first->options().wire_dtype == Dtype::float16 ? 1e-2 : 1e-3));
    }
  }
}

TEST_CASE("allreduce_grad of one GPU's arrays through NCCL equals the MPI path's on the host") {
  // nccl: NCCL's own all-reduce; hierarchical and two_dimensional: intra- and inter-node NCCL groups;
  // hybrid: one or the other by size; multi_color: three colors' NCCL groups at once.
  if (create_communicator("nccl").size() == 1) {
    MESSAGE("skipped what one rank cannot show: with one GPU each pattern's NCCL calls run but every sum is the rank's "
            "own array; the compositions across ranks are checked on CPUs (suite group_allreduce)");
  }
  for (const char* algorithm : {"nccl", "hierarchical", "two_dimensional", "hybrid", "multi_color"})
  for (const Dtype wire : {Dtype::float32, Dtype::float16}) {
    CAPTURE(algorithm);
    CAPTURE(wire);
    const Communicator comm =
        create_communicator(algorithm, {.wire_dtype = wire, .colors = 3, .hybrid_threshold_bytes = 64});
    const Device target = path_device(comm);
    const std::vector<std::pair<Shape, Dtype>> specs = {{{3, 4}, Dtype::float32}, {{5}, Dtype::float64},
                                                        {{7}, Dtype::float16}, {{5, 5}, Dtype::float32}};
    std::vector<Array> host, device;
    for (const auto& [shape, dtype] : specs) {
      host.push_back(contribution(shape, comm.rank(), dtype));
      device.push_back(host.back().to(target));
    }
    device.back() = device.back().transpose().copy().transpose();  // a strided array is written back too
    comm.allreduce_grad(host);
    comm.allreduce_grad(device);
    for (size_t i = 0; i < host.size(); ++i) {
      CAPTURE(i);
      CHECK(device[i].device() == target);
      CHECK(device[i].to(Device::cpu()).to_vector<double>() == host[i].to_vector<double>());
    }
    // One contiguous float32 array (a multi-node optimizer's bucket): a plain sum on a float32 wire is
    // made in its own memory (no copy to write back), an average on another wire is written back.
    const Array bucket_on_host = contribution({9}, comm.rank(), Dtype::float32);
    const Array bucket = bucket_on_host.to(target);
    comm.allreduce_sum({bucket_on_host}, 1, 1);
    comm.allreduce_sum({bucket}, 1, 1);
    CHECK(bucket.to(Device::cpu()).to_vector<double>() == bucket_on_host.to_vector<double>());
    // Nothing to sum: every rank returns at once (no rank left waiting in a collective).
    CHECK_NOTHROW(comm.allreduce_grad({Array::zeros({0}, Dtype::float32, target)}));
  }
}

TEST_CASE("ring and naive refuse the path's arrays on every rank, naming the algorithms that serve them") {
  for (const char* algorithm : {"ring", "naive"}) {
    CAPTURE(algorithm);
    const Communicator comm = create_communicator(algorithm);
    const Array array = contribution({6}, comm.rank(), Dtype::float32).to(path_device(comm));
    kusari::testing::expect_error<ValueError>([&] { comm.allreduce_grad({array}); },
                                              {"on CUDA arrays", "nccl (NCCL's own ring or tree)", "multi_color"});
  }
}

TEST_CASE("ranks that disagree on the path or on the element count are refused on every rank") {
  const Communicator comm = create_communicator("nccl");
  if (comm.size() == 1) {
    MESSAGE("skipped: one rank always agrees with itself");
    return;
  }
  const Device target = path_device(comm);
  // Rank 0's array on the host (the MPI path), the others' on the device (the NCCL path).
  const Array host = contribution({6}, comm.rank(), Dtype::float32);
  const Array mixed = comm.rank() == 0 ? host : host.to(target);
  kusari::testing::expect_error<ValueError>([&] { comm.allreduce_grad({mixed}); },
                                            {"allreduce_grad", "ranks disagree on whether the arrays are on one GPU"});
  const Array uneven = contribution({comm.rank() == 0 ? 5 : 6}, comm.rank(), Dtype::float32).to(target);
  kusari::testing::expect_error<ShapeError>([&] { comm.allreduce_grad({uneven}); },
                                            {"allreduce_grad", "buffer sizes (elements) differ across ranks"});
  // Agreed again, the path still sums.
  const Array again = host.to(target);
  comm.allreduce_grad({again});
  comm.allreduce_grad({host});
  CHECK(again.to(Device::cpu()).to_vector<double>() == host.to_vector<double>());
}

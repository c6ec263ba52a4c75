#pragma once
// bench/allreduce's settings, shared with bench/allreduce_calibrate (which predicts each before timing
// it): ResNet-50's gradient set on this rank, the two MPI_Allreduce baselines, and every kusari
// algorithm with every wire dtype, each timed as the median over rounds of the slowest rank's time.

#include <mpi.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <kusari/kusari.h>

#include "allreduce_common.h"

namespace bench {

// ResNet-50's 161 gradients on this rank (uniform in [-1, 1), seeded by rank and tensor) and their
// initial values, as plain float32 tensors too for the MPI baselines.
struct GradientSet {
  std::vector<kusari::Array> initial, grads;
  std::vector<Tensor> tensors;
  std::vector<float> fused;  // the MPI fused baseline's buffer
  int64_t total = 0;

  explicit GradientSet(int rank) {
    for (int64_t n : resnet50_gradient_sizes()) {
      const auto seed = static_cast<uint64_t>(rank * 1000 + static_cast<int>(initial.size()));
      initial.push_back(kusari::Array::uniform({n}, -1, 1, seed));
      grads.push_back(initial.back().copy());
      total += n;
    }
    for (const kusari::Array& g : grads) tensors.push_back({g.data<float>(), g.size()});
    fused.resize(static_cast<size_t>(total));
  }
  // Rewrites the gradients from their initial values, as backward would: every setting then starts from
  // the same values and the same cache state.
  void refill() {
    for (size_t i = 0; i < grads.size(); ++i) {
      std::memcpy(grads[i].host_data(), initial[i].host_data(), static_cast<size_t>(grads[i].nbytes()));
    }
  }
};

// One way of averaging the gradients across the ranks.
struct AllreduceSetting {
  std::string name;
  std::function<void()> average;
  std::string algorithm;  // the kusari algorithm, or what the cost model prices an MPI baseline as
  kusari::distributed::CommunicatorOptions options;  // what the communicator was created with
  bool baseline = false;  // an MPI_Allreduce baseline
  std::vector<double> times = {};
};

// The MPI baselines, then each algorithm with the float32, float16 and bfloat16 wires (only the wire set).
inline std::vector<AllreduceSetting> allreduce_settings(GradientSet& set, const std::vector<std::string>& algorithms) {
  namespace dist = kusari::distributed;
  std::vector<AllreduceSetting> settings;
  const dist::CommunicatorOptions unchecked{.check_sizes = false};
  settings.push_back({"mpi_per_tensor_float32", [&set] { average_per_tensor(set.tensors, MPI_COMM_WORLD); }, "naive",
                      unchecked, true});
  settings.push_back({"mpi_fused_float32", [&set] { average_fused(set.tensors, set.fused, MPI_COMM_WORLD); }, "flat",
                      unchecked, true});
  for (const std::string& name : algorithms) {
    for (const kusari::Dtype wire : {kusari::Dtype::float32, kusari::Dtype::float16, kusari::Dtype::bfloat16}) {
      const dist::CommunicatorOptions options{.wire_dtype = wire};
      const dist::Communicator comm = dist::create_communicator(name, options);
      settings.push_back({name + "_" + kusari::dtype_name(wire), [&set, comm] { comm.allreduce_grad(set.grads); },
                          name, options});
    }
  }
  return settings;
}

// Times every setting `rounds` times, every round visiting every setting so that load changes on a shared
// machine hit all alike; the milliseconds land in each setting's times. Each timed call follows an
// untimed one of the same setting, so it finds its buffers in the host pool as a training step finds
// the last step's: otherwise the other settings' sizes push its largest blocks out of the pool and it
// pays for fresh pages (flat's 102 MB buffer: 133 ms a call instead of 80 on a 2-core EPYC).
inline void time_settings(std::vector<AllreduceSetting>& settings, GradientSet& set, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    for (AllreduceSetting& setting : settings) {
      set.refill();
      setting.average();
      set.refill();
      setting.times.push_back(time_once(setting.average));
    }
  }
}

}  // namespace bench

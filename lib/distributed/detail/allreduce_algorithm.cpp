// The registry of all-reduce algorithms by name.

#include <kusari/distributed/detail/allreduce_algorithm.h>

#include <functional>
#include <utility>

#include <kusari/distributed/communicator.h>

namespace kusari::distributed {
namespace {

using Factory = std::function<std::unique_ptr<AllreduceAlgorithm>(const CommunicatorOptions&)>;

// Every algorithm with its factory, in the order allreduce_algorithm_names() lists them.
const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> algorithms = {
      {"naive", [](const CommunicatorOptions&) { return make_naive_allreduce(); }},
      {"flat", [](const CommunicatorOptions&) { return make_flat_allreduce(); }},
      // The library's own all-reduce under the name GPU users know it by: MPI's on CPU arrays, NCCL's on CUDA ones.
      {"nccl", [](const CommunicatorOptions&) { return make_flat_allreduce(); }},
      {"ring", make_ring_allreduce},
      {"hierarchical", make_hierarchical_allreduce},
      {"two_dimensional", make_two_dimensional_allreduce},
      {"multi_color", make_multi_color_allreduce},
      {"hybrid", make_hybrid_allreduce},
  };
  return algorithms;
}

}  // namespace

std::vector<std::string> allreduce_algorithm_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

std::unique_ptr<AllreduceAlgorithm> make_allreduce_algorithm(const std::string& name, const CommunicatorOptions& options) {
  for (const auto& [known, factory] : registry()) {
    if (known == name) return factory(options);
  }
  std::string names;
  for (const std::string& known : allreduce_algorithm_names()) names += (names.empty() ? "" : ", ") + known;
  throw ValueError(cat("create_communicator: expected an algorithm name (", names, "), got \"", name, "\""));
}

}  // namespace kusari::distributed

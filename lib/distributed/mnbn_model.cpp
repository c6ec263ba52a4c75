#include <kusari/distributed/mnbn_model.h>

#include <map>

#include <kusari/distributed/multi_node_batch_normalization.h>

namespace kusari::distributed {
namespace {

using Replacements = std::map<const links::Link*, std::shared_ptr<links::Link>>;

// The multi-node replacement of `link` if it is a plain BatchNormalization (one per layer), else null.
std::shared_ptr<links::Link> replacement(const std::shared_ptr<links::Link>& link, const Communicator& comm,
                                         Replacements& done) {
  if (auto it = done.find(link.get()); it != done.end()) return it->second;
  auto bn = std::dynamic_pointer_cast<links::BatchNormalization>(link);
  if (!bn || std::dynamic_pointer_cast<links::MultiNodeBatchNormalization>(link)) return nullptr;
  return done[link.get()] = std::make_shared<links::MultiNodeBatchNormalization>(*bn, comm);
}

// Throws ValueError, before anything is replaced, when a BatchNormalization in link's tree normalises
// ghost-batch groups (local by definition, so they cannot become multi-node).
void require_local_batches(const links::Link& link) {
  for (const auto& [path, child] : link.namedlinks()) {
    const auto* bn = dynamic_cast<const links::BatchNormalization*>(child);
    if (bn != nullptr) links::require_whole_batch_statistics(*bn, "create_mnbn_model", path);
  }
}

void replace_below(links::Link& parent, const Communicator& comm, Replacements& done) {
  for (const auto& [name, child] : parent.children()) {
    if (std::shared_ptr<links::Link> mnbn = replacement(child, comm, done)) {
      parent.replace_child(name, mnbn);
    } else {
      replace_below(*child, comm, done);
    }
  }
}

}  // namespace

std::shared_ptr<links::Link> create_mnbn_model(const std::shared_ptr<links::Link>& model, const Communicator& comm) {
  if (!model) throw ValueError("create_mnbn_model: expected a model, got null");
  require_local_batches(*model);
  Replacements done;
  if (std::shared_ptr<links::Link> mnbn = replacement(model, comm, done)) return mnbn;
  replace_below(*model, comm, done);
  return model;
}

}  // namespace kusari::distributed

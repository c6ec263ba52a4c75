#include <kusari/training/multi_node_evaluator.h>

#include <kusari/serializers/array_dict.h>

namespace kusari::training {
namespace {

// The bytes of a summary's keys, weighted sums and weights.
std::string summary_bytes(DictSummary summary) {
  serializers::DictSerializer serializer;
  summary.serialize(serializer);
  return serializers::pack_array_dict(serializer.values());
}

// The summary held by summary_bytes() output; `source` names the sender in errors.
DictSummary summary_from_bytes(const std::string& bytes, const std::string& source) {
  serializers::DictDeserializer deserializer(serializers::unpack_array_dict(bytes, source));
  DictSummary summary;
  summary.serialize(deserializer);
  return summary;
}

}  // namespace

DictSummary merge_across_ranks(const DictSummary& local, const distributed::Communicator& comm) {
  const std::vector<std::string> parts = comm.gather_obj(summary_bytes(local));
  std::string merged;
  if (comm.rank() == 0) {
    DictSummary total;
    for (size_t r = 0; r < parts.size(); ++r) total.merge(summary_from_bytes(parts[r], cat("the summary of rank ", r)));
    merged = summary_bytes(total);
  }
  return summary_from_bytes(comm.bcast_obj(merged), "the merged summary");
}

MultiNodeEvaluator::MultiNodeEvaluator(std::shared_ptr<Evaluator> evaluator, distributed::Communicator comm)
    : evaluator_(std::move(evaluator)), comm_(std::move(comm)) {
  if (!evaluator_) throw ValueError("MultiNodeEvaluator: expected an evaluator, got null");
}

Observation MultiNodeEvaluator::evaluate() {
  return evaluator_->prefixed_means(merge_across_ranks(evaluator_->summarize(), comm_));
}

void MultiNodeEvaluator::operator()(Trainer&) {
  report_observation(evaluate());
}

std::shared_ptr<MultiNodeEvaluator> create_multi_node_evaluator(std::shared_ptr<Evaluator> evaluator,
                                                                const distributed::Communicator& comm) {
  return std::make_shared<MultiNodeEvaluator>(std::move(evaluator), comm);
}

}  // namespace kusari::training

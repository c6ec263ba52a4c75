#pragma once
// MultiNodeBatchNormalization: a BatchNormalization whose training statistics span every rank.

#include <memory>
#include <string>

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>
#include <kusari/distributed/multi_node_normalization.h>
#include <kusari/links/batch_normalization.h>

namespace kusari::links {

// BatchNormalization over the batch formed by every rank's input together (see
// distributed::multi_node_batch_normalization): one all-reduce in forward and one in backward, exact
// for unequal local batch sizes. The running averages fold in those global statistics (unbiased
// with the global count); without running averages (Akiba et al. 2017), last_mean and last_var keep
// the last training batch's E[x] and Var[x] over all ranks, which the forward's single all-reduce of
// [Σx, Σx², count] already averaged, so evaluation needs no communication. Evaluation is local. The
// ranks' channel counts are compared at the first training forward only (they are gamma's, which
// cannot change); a rank computing in another dtype than the others makes every rank's forward throw.
class KUSARI_API MultiNodeBatchNormalization : public BatchNormalization {
 public:
  // A layer configured by options whose statistics are summed over comm.
  MultiNodeBatchNormalization(const BatchNormalizationOptions& options, distributed::Communicator comm);
  // A multi-node layer sharing bn's settings, parameters and persistent values (the same arrays).
  MultiNodeBatchNormalization(const BatchNormalization& bn, distributed::Communicator comm);
  // The communicator the statistics are summed over.
  const distributed::Communicator& communicator() const { return comm_; }

 protected:
  std::string type_name() const override { return "MultiNodeBatchNormalization"; }
  std::shared_ptr<Link> shallow_clone() const override;
  functions::BatchNormalizationResult normalize_batch(const Variable& x, const Variable& gamma, const Variable& beta,
                                                      const Variable& residual) override;

 private:
  distributed::Communicator comm_;
  bool channels_agreed_ = false;  // whether the ranks compared their channel counts
};

// bn, after throwing ValueError "<op>: ghost batch normalization groups are local-only; ..." naming
// `path` (when given) and bn's group size unless bn normalises whole batches (group size 0): ghost-batch
// groups' statistics are local by definition, so such a layer cannot become multi-node.
KUSARI_API const BatchNormalization& require_whole_batch_statistics(const BatchNormalization& bn, const std::string& op,
                                                                    const std::string& path = "");

}  // namespace kusari::links

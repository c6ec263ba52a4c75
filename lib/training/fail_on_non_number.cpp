#include <kusari/training/fail_on_non_number.h>

#include <kusari/optimizers/numerics.h>
#include <kusari/training/trainer.h>

namespace kusari::training {

FailOnNonNumber::FailOnNonNumber(FailOnNonNumberOptions options) : options_(options) {
  if (options_.every < 1) throw ValueError(cat("FailOnNonNumber: expected every >= 1, got ", options_.every));
}

void FailOnNonNumber::operator()(Trainer& trainer) {
  Updater& updater = trainer.updater();
  if (updater.iteration() % options_.every != 0 && !updater.is_new_epoch()) return;
  const auto named = updater.optimizer().target()->namedparams();
  std::vector<Array> data;
  for (const auto& [path, param] : named) data.push_back(param.data());
  if (optimizers::all_finite(data)) return;  // one host read in the common case
  for (const auto& [path, param] : named) {
    if (optimizers::all_finite({param.data()})) continue;
    throw ValueError(cat("FailOnNonNumber: parameter '", path, "' holds NaN or infinity after iteration ",
                         updater.iteration(), "; training diverged"));
  }
}

}  // namespace kusari::training

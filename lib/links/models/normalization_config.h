#pragma once
// NormalizationConfig: the batch-normalization settings a model builder gives every BN layer it makes.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/links/batch_normalization.h>

namespace kusari::links::models {

// Settings shared by every batch normalization of a model (see BatchNormalizationOptions).
struct KUSARI_API NormalizationConfig {
  double eps = 2e-5;                // added to the variance before the square root
  double decay = 0.9;               // weight of the old running averages
  bool use_running_average = true;  // evaluation with the running averages (else the last batch's statistics)
  int64_t group_size = 0;           // ghost batch normalization's examples per group (0: the whole local batch)
  bool zero_gamma = false;          // the last BN of each residual branch starts its scale at 0 (Goyal et al. 2017)

  // The options of a layer of `channels` channels with these settings (zero_gamma is left to the caller).
  BatchNormalizationOptions options(int64_t channels) const;
};

}  // namespace kusari::links::models

#include <kusari/links/models/normalization_config.h>

namespace kusari::links::models {

BatchNormalizationOptions NormalizationConfig::options(int64_t channels) const {
  return BatchNormalizationOptions(channels)
      .eps(eps)
      .decay(decay)
      .use_running_average(use_running_average)
      .group_size(group_size);
}

}  // namespace kusari::links::models

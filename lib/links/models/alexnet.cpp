#include <kusari/links/models/alexnet.h>

#include <kusari/functions/activation.h>
#include <kusari/functions/local_response_normalization.h>

namespace kusari::links::models {

Variable AlexNet::activate(int64_t index, const Variable& conv_output) {
  const Variable h = functions::relu(conv_output);
  return index < 2 ? functions::local_response_normalization(h) : h;
}

}  // namespace kusari::links::models

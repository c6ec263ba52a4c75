#include <kusari/distributed/detail/gradient_anchor.h>

namespace kusari::distributed {

Variable gradient_anchor(bool requires_grad) { return Variable(Array::scalar(0, Dtype::float32, Device::cpu()), requires_grad); }

}  // namespace kusari::distributed

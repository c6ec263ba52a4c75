// Communicator::send and recv: arrays over the communicator's point-to-point MPI communicator.

#include <kusari/distributed/detail/communicator_impl.h>

#include <kusari/distributed/detail/array_message.h>
#include <kusari/distributed/detail/communicator_checks.h>

namespace kusari::distributed {

void Communicator::send(const Array& array, int dest, int tag) const {
  require_host_array(array, "send");
  require_peer(dest, rank(), size(), "send");
  require_tag(tag, max_tag(), "send");
  send_array(array, dest, tag, impl_->point_to_point.get());
}

Array Communicator::recv(int source, int tag) const {
  require_peer(source, rank(), size(), "recv");
  require_tag(tag, max_tag(), "recv");
  return recv_array(source, tag, impl_->point_to_point.get());
}

Array Communicator::recv(int source, int tag, const Shape& shape, Dtype dtype) const {
  Array received = recv(source, tag);
  if (received.shape() == shape && received.dtype() == dtype) return received;
  const std::string message =
      cat("recv: expected an array of shape ", shape, " and dtype ", dtype, " from rank ", source, " (tag ", tag,
          "), got shape ", received.shape(), " and dtype ", received.dtype());
  if (received.shape() == shape) throw DtypeError(message);
  throw ShapeError(message);
}

int Communicator::max_tag() const { return impl_->max_tag; }

}  // namespace kusari::distributed

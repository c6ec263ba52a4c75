#include <kusari/distributed/detail/communicator_checks.h>

namespace kusari::distributed {

void require_defined_array(const Array& array, const char* op) {
  if (!array.defined()) throw ValueError(cat(op, ": expected a defined array"));
}

void require_host_array(const Array& array, const char* op) {
  require_defined_array(array, op);
  if (array.device().type != DeviceType::cpu) {
    throw DeviceError(cat(op, ": expected an array on the CPU, got one on ", array.device()));
  }
}

void require_root(int root, int size, const char* op) {
  if (root < 0 || root >= size) throw ValueError(cat(op, ": expected a root in [0, ", size, "), got ", root));
}

void require_peer(int peer, int self, int size, const char* op) {
  if (peer < 0 || peer >= size || peer == self) {
    throw ValueError(
        cat(op, ": expected a peer rank in [0, ", size, ") other than this rank (", self, "), got ", peer));
  }
}

void require_tag(int tag, int max_tag, const char* op) {
  if (tag < 0 || tag > max_tag) throw ValueError(cat(op, ": expected a tag in [0, ", max_tag, "], got ", tag));
}

}  // namespace kusari::distributed

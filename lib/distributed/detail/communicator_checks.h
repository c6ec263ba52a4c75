#pragma once
// Argument checks shared by the Communicator's methods. Internal header.

#include <kusari/core/array.h>

namespace kusari::distributed {

// Throws ValueError unless `array` is defined (on any device: the collectives that take device arrays
// stage them through the host).
void require_defined_array(const Array& array, const char* op);
// Throws ValueError unless `array` is defined, DeviceError unless it is in host memory.
void require_host_array(const Array& array, const char* op);
// Throws ValueError unless root is a rank of a communicator of `size` ranks.
void require_root(int root, int size, const char* op);
// Throws ValueError unless peer is a rank of a communicator of `size` ranks other than `self`.
void require_peer(int peer, int self, int size, const char* op);
// Throws ValueError unless 0 <= tag <= max_tag.
void require_tag(int tag, int max_tag, const char* op);

}  // namespace kusari::distributed

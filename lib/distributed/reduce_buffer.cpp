// ReduceBuffer's wire dtype bookkeeping.

#include <kusari/distributed/reduce_buffer.h>

#include <kusari/distributed/wire_format.h>

namespace kusari::distributed {

ReduceBuffer::ReduceBuffer(Dtype wire) : wire_(wire), itemsize_(itemsize(wire)) {
  wire::check_wire_dtype(wire, "ReduceBuffer");
}

}  // namespace kusari::distributed

// ReduceBuffer's wire dtype bookkeeping and scratch memory.

#include <kusari/distributed/detail/reduce_buffer.h>

#include <kusari/distributed/detail/wire_format.h>

namespace kusari::distributed {

ReduceBuffer::ReduceBuffer(Dtype wire) : wire_(wire), itemsize_(itemsize(wire)) {
  wire::check_wire_dtype(wire, "ReduceBuffer");
}

Array scratch(size_t nbytes) { return Array::empty({static_cast<int64_t>(nbytes)}, Dtype::uint8, Device::cpu()); }

}  // namespace kusari::distributed

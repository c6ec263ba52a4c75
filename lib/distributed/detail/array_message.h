#pragma once
// Arrays as point-to-point MPI messages: a header (dtype and extents) followed by the elements, so
// the receiver learns the shape and dtype from the message itself. Internal header (includes <mpi.h>).

#include <mpi.h>

#include <kusari/core/array.h>

namespace kusari::distributed {

// Sends a host array to rank dest of comm with `tag`; blocks until the buffers can be reused.
void send_array(const Array& array, int dest, int tag, MPI_Comm comm);
// Receives an array that rank source sent with send_array and `tag`, as a new contiguous array.
Array recv_array(int source, int tag, MPI_Comm comm);

}  // namespace kusari::distributed

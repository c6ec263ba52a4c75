#pragma once
// send and recv: differentiable point-to-point transfers that split one model over several ranks.
//
// Rank a calls `Variable d = send(h, comm, b)`; rank b calls `Variable y = recv(comm, a)`. The array
// travels with its shape and dtype, so recv needs neither. When h needs a gradient (it requires one and
// backprop is enabled on rank a), y's backward sends y's gradient back to rank a, where d's backward
// receives it as h's gradient: a calls d.backward() (or backward through a graph that contains d) and
// b calls backward through y, in whichever order. Both ranks must then run that backward, and b must
// record y's graph (not under no_backprop_mode), or the ranks wait for each other forever.
//
// A rank that both sends and receives passes its send's delegate to recv, which chains it into the
// received variable's graph: one backward() from a loss computed from y first sends y's gradient to the
// peer and then receives h's, the order in which the peers' backward passes meet.
//
// Data travels on MPI tag 2·tag and gradients on 2·tag + 1 of the communicator's point-to-point
// channel (see Communicator::send), so forward data can never be taken for a gradient. Gradients that
// arrive from another rank are constants: backward through send or recv is first-order only.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/distributed/communicator.h>

namespace kusari::distributed {

// Sends x's data to rank `peer` and returns the delegate, a float32 scalar 0 whose backward receives
// x's gradient from peer (where recv's output met its own gradient). Throws ValueError for a peer out
// of range or equal to this rank, or a tag outside [0, max_p2p_tag(comm)].
KUSARI_API Variable send(const Variable& x, const Communicator& comm, int peer, int tag = 0);
// Receives the variable rank `peer` sent with send(..., tag); its backward sends its gradient to peer
// when the sender asked for one. `delegate` (optional) is a delegate from an earlier send on this
// rank, run after this recv's backward (its gradient is zero). Throws like send.
KUSARI_API Variable recv(const Communicator& comm, int peer, int tag = 0, const Variable& delegate = Variable());
// The largest tag send and recv accept on comm: (comm.max_tag() - 1) / 2.
KUSARI_API int max_p2p_tag(const Communicator& comm);

}  // namespace kusari::distributed

#pragma once
// KernelState: what a backend's forward kernel hands to its backward kernels, opaque to the caller.

#include <memory>

#include <kusari/core/api.h>

namespace kusari {

// A backend's own record from a forward kernel (the winners of a max pooling, a cuDNN workspace): the
// function node keeps it and gives it back to that backend's backward kernels, never looking inside.
struct KUSARI_API KernelState {
  virtual ~KernelState() = default;
};

// A forward kernel's state, shared by the backward nodes that need it.
using KernelStatePtr = std::shared_ptr<const KernelState>;

}  // namespace kusari

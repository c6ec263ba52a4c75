#pragma once
// MpiError: what kusari::distributed throws when an MPI call fails or MPI is unusable.

#include <kusari/core/error.h>

namespace kusari::distributed {

// An MPI call that returned an error, or MPI used after it was finalised.
class MpiError : public Error {
 public:
  using Error::Error;
};

}  // namespace kusari::distributed

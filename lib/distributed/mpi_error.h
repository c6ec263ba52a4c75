#pragma once
// MpiError: what kusari::distributed throws when an MPI call fails or MPI is unusable.

#include <kusari/core/api.h>
#include <kusari/core/error.h>

namespace kusari::distributed {

// An MPI call that returned an error, or MPI used after it was finalised.
class KUSARI_API MpiError : public Error {
 public:
  using Error::Error;
};

}  // namespace kusari::distributed

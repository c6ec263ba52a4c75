#pragma once
// Checks that a value (a buffer size, a dtype) is the same on every rank before a collective that
// would otherwise hang or corrupt memory. Internal header.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <kusari/core/dtype.h>

namespace kusari::distributed {

// Throws ShapeError on every rank, naming two ranks and their counts, unless every rank's `count`
// equals the reference rank's: "<op>: <what> differ across ranks: rank 0 has 12, rank 1 has 10".
void require_same_count(MPI_Comm comm, int reference, int64_t count, const char* op, const std::string& what);
// With one allgather: throws ShapeError as require_same_count does unless every rank's `count` equals
// the reference rank's, then DtypeError naming two ranks and their dtypes unless all dtypes agree.
void require_same_layout(MPI_Comm comm, int reference, int64_t count, Dtype dtype, const char* op,
                         const std::string& what);
// Throws ValueError on every rank unless every rank's `values` equal rank 0's (one allgather), naming
// the first that differs by names[i] and rank 0's and another rank's value as show(i, value) writes
// them: "<op>: ranks disagree on wire_dtype: rank 0 has float16, rank 2 has float32".
void require_same_values(MPI_Comm comm, const std::vector<int64_t>& values, const std::vector<std::string>& names,
                         const char* op, const std::function<std::string(size_t, int64_t)>& show);
// With one allgather: require_same_values's check of `values`, then require_same_count's of `count`
// against rank 0's.
void require_same_values_and_count(MPI_Comm comm, const std::vector<int64_t>& values,
                                   const std::vector<std::string>& names, const char* op,
                                   const std::function<std::string(size_t, int64_t)>& show, int64_t count,
                                   const std::string& what);

}  // namespace kusari::distributed

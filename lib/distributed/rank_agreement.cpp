// Agreement checks: every rank gathers every rank's value, so that all of them throw together.

#include <kusari/distributed/rank_agreement.h>

#include <vector>

#include <kusari/distributed/mpi_util.h>

namespace kusari::distributed {
namespace {

// Every rank's value; the first rank whose value differs from the reference's, or -1.
std::pair<std::vector<int64_t>, int> gather_and_compare(MPI_Comm comm, int reference, int64_t value) {
  std::vector<int64_t> values(static_cast<size_t>(comm_size(comm)));
  check_mpi(MPI_Allgather(&value, 1, MPI_INT64_T, values.data(), 1, MPI_INT64_T, comm), "MPI_Allgather");
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != values[static_cast<size_t>(reference)]) return {values, static_cast<int>(i)};
  }
  return {values, -1};
}

}  // namespace

void require_same_count(MPI_Comm comm, int reference, int64_t count, const char* op, const std::string& what) {
  const auto [counts, differing] = gather_and_compare(comm, reference, count);
  if (differing < 0) return;
  throw ShapeError(cat(op, ": ", what, " differ across ranks: rank ", reference, " has ",
                       counts[static_cast<size_t>(reference)], ", rank ", differing, " has ",
                       counts[static_cast<size_t>(differing)]));
}

void require_same_dtype(MPI_Comm comm, int reference, Dtype dtype, const char* op) {
  const auto [codes, differing] = gather_and_compare(comm, reference, static_cast<int64_t>(dtype));
  if (differing < 0) return;
  throw DtypeError(cat(op, ": dtypes differ across ranks: rank ", reference, " has ",
                       static_cast<Dtype>(codes[static_cast<size_t>(reference)]), ", rank ", differing, " has ",
                       static_cast<Dtype>(codes[static_cast<size_t>(differing)])));
}

void require_same_values(MPI_Comm comm, const std::vector<int64_t>& values, const std::vector<std::string>& names,
                         const char* op, const std::function<std::string(size_t, int64_t)>& show) {
  const size_t n = values.size();
  std::vector<int64_t> all(n * static_cast<size_t>(comm_size(comm)));
  check_mpi(MPI_Allgather(values.data(), static_cast<int>(n), MPI_INT64_T, all.data(), static_cast<int>(n),
                          MPI_INT64_T, comm),
            "MPI_Allgather");
  for (size_t i = 0; i < n; ++i) {
    for (size_t r = 1; r * n < all.size(); ++r) {
      if (all[r * n + i] == all[i]) continue;
      throw ValueError(cat(op, ": ranks disagree on ", names[i], ": rank 0 has ", show(i, all[i]), ", rank ", r,
                           " has ", show(i, all[r * n + i])));
    }
  }
}

}  // namespace kusari::distributed

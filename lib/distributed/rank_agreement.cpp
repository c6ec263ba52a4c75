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

}  // namespace kusari::distributed

// Agreement checks: every rank gathers every rank's value, so that all of them throw together.

#include <kusari/distributed/detail/rank_agreement.h>

#include <vector>

#include <kusari/distributed/detail/mpi_util.h>

namespace kusari::distributed {
namespace {

// Every rank's `values` (n of them, rank r's at [r·n, r·n + n)) and, for each position, the first
// rank whose value there differs from the reference rank's (-1 where none does); one allgather.
std::pair<std::vector<int64_t>, std::vector<int>> gather_and_compare(MPI_Comm comm, int reference,
                                                                     const std::vector<int64_t>& values) {
  const size_t n = values.size();
  std::vector<int64_t> all(n * static_cast<size_t>(comm_size(comm)));
  check_mpi(MPI_Allgather(values.data(), static_cast<int>(n), MPI_INT64_T, all.data(), static_cast<int>(n),
                          MPI_INT64_T, comm),
            "MPI_Allgather");
  std::vector<int> differing(n, -1);
  const size_t base = static_cast<size_t>(reference) * n;
  for (size_t i = 0; i < n; ++i) {
    for (size_t r = 0; r * n < all.size(); ++r) {
      if (all[r * n + i] == all[base + i]) continue;
      differing[i] = static_cast<int>(r);
      break;
    }
  }
  return {all, differing};
}

}  // namespace

void require_same_count(MPI_Comm comm, int reference, int64_t count, const char* op, const std::string& what) {
  const auto [counts, differing] = gather_and_compare(comm, reference, {count});
  if (differing[0] < 0) return;
  throw ShapeError(cat(op, ": ", what, " differ across ranks: rank ", reference, " has ",
                       counts[static_cast<size_t>(reference)], ", rank ", differing[0], " has ",
                       counts[static_cast<size_t>(differing[0])]));
}

void require_same_layout(MPI_Comm comm, int reference, int64_t count, Dtype dtype, const char* op,
                         const std::string& what) {
  const auto [all, differing] = gather_and_compare(comm, reference, {count, static_cast<int64_t>(dtype)});
  const auto at = [&all = all](int rank, size_t i) { return all[static_cast<size_t>(rank) * 2 + i]; };
  if (differing[0] >= 0) {
    throw ShapeError(cat(op, ": ", what, " differ across ranks: rank ", reference, " has ", at(reference, 0),
                         ", rank ", differing[0], " has ", at(differing[0], 0)));
  }
  if (differing[1] >= 0) {
    throw DtypeError(cat(op, ": dtypes differ across ranks: rank ", reference, " has ",
                         static_cast<Dtype>(at(reference, 1)), ", rank ", differing[1], " has ",
                         static_cast<Dtype>(at(differing[1], 1))));
  }
}

void require_same_values(MPI_Comm comm, const std::vector<int64_t>& values, const std::vector<std::string>& names,
                         const char* op, const std::function<std::string(size_t, int64_t)>& show) {
  require_same_values_and_count(comm, values, names, op, show, 0, "");
}

void require_same_values_and_count(MPI_Comm comm, const std::vector<int64_t>& values,
                                   const std::vector<std::string>& names, const char* op,
                                   const std::function<std::string(size_t, int64_t)>& show, int64_t count,
                                   const std::string& what) {
  std::vector<int64_t> gathered = values;
  gathered.push_back(count);  // last: a differing count is a shape, checked after the values
  const auto [all, differing] = gather_and_compare(comm, 0, gathered);
  const size_t n = gathered.size();
  for (size_t i = 0; i < n; ++i) {
    if (differing[i] < 0) continue;
    const int64_t ours = all[i], theirs = all[static_cast<size_t>(differing[i]) * n + i];
    if (i + 1 == n) {
      throw ShapeError(cat(op, ": ", what, " differ across ranks: rank 0 has ", ours, ", rank ", differing[i],
                           " has ", theirs));
    }
    throw ValueError(cat(op, ": ranks disagree on ", names[i], ": rank 0 has ", show(i, ours), ", rank ",
                         differing[i], " has ", show(i, theirs)));
  }
}

}  // namespace kusari::distributed

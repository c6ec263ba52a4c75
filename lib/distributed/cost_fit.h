#pragma once
// Calibrating the cost model (cost_model.h) from measured times: a link's latency and inverse bandwidth,
// and a local pass's cost per element.

#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/distributed/cost_model.h>

namespace kusari::distributed::cost {

// One measurement: an amount (bytes of a message, or elements of a local pass) and its seconds.
struct KUSARI_API Timing {
  double amount = 0;
  double seconds = 0;
};

// α and β of seconds = α + β·bytes by least squares in relative error (each timing weighted by
// 1/seconds², so that the small messages that set α count as much as the large ones that set β); a
// negative α or β is refitted as 0. ValueError unless there are two distinct sizes and positive times.
KUSARI_API Link fit_link(const std::vector<Timing>& timings);

// Seconds per element of a local pass: the least-squares slope through the origin (each timing weighted
// by 1/seconds²). ValueError unless there is a timing of a positive amount and every time is positive.
KUSARI_API double fit_per_element(const std::vector<Timing>& timings);

// Writes a cluster's parameters to `path` as "key value" lines (written under a temporary name and
// renamed into place; IOError naming the path on failure): what bench/allreduce_calibrate measured, for
// bench/predict_seeds --recommend.
KUSARI_API void save_cluster(const Cluster& cluster, const std::string& path);
// Reads what save_cluster wrote; IOError for an unreadable file, ValueError naming the line for a
// missing, unknown, repeated or malformed key (the β_streams keys, mpi_by_node and mpi_open_mpi may be
// missing: files from before them load with the links' β_streams not measured and MPICH's flat choices).
KUSARI_API Cluster load_cluster(const std::string& path);

}  // namespace kusari::distributed::cost

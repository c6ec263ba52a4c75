#pragma once
// The stall inspector (Horovod's, for kusari's collectives): a rank that has waited in a collective for
// KUSARI_STALL_WARNING seconds (default 60; 0 turns the inspector off) prints which operation it is and
// which ranks have not joined it; after KUSARI_STALL_TIMEOUT seconds (default: never) it ends the whole
// job with that message and exit status 1. Waiting ranks report to world rank 0 after a second, and
// rank 0 answers with the ranks missing, so no message is sent while collectives complete promptly.
// Internal header (includes <mpi.h>).

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <kusari/core/error.h>

namespace kusari::distributed {

// The inspector's settings.
struct StallSettings {
  double warning_seconds = 60;  // print after this long in one collective (0: no inspector)
  double timeout_seconds = 0;   // end the job after this long (0: never)
};
// KUSARI_STALL_WARNING and KUSARI_STALL_TIMEOUT over the defaults (a timeout shorter than the warning
// brings the warning down to it); throws ValueError for a value that is not a number of seconds >= 0.
StallSettings stall_settings_from_environment();

// Which communicator a collective runs on, alike on every member rank: its ranks in MPI_COMM_WORLD and
// how many communicators of those ranks this process made before it, plus the count of its collectives.
struct CollectiveChannel {
  // Collective over comm: the world ranks of comm's members and the ordinal.
  explicit CollectiveChannel(MPI_Comm comm);
  std::vector<int> members;
  int ordinal = 0;
  int64_t calls = 0;
};

// Whether the inspector's thread runs (collectives are recorded only then).
bool stall_inspector_running();

// A collective in progress on this thread, from construction to destruction: what the inspector
// reports when it takes too long (recorded only while the inspector runs).
class CollectiveScope {
 public:
  // cat(what...) names the operation ("allreduce_grad of ", 3, " elements"), formatted only while the
  // inspector runs; the thread's label is appended.
  template <class... Parts>
  explicit CollectiveScope(CollectiveChannel& channel, const Parts&... what) : call_(channel.calls++) {
    if (stall_inspector_running()) open(channel, cat(what...));
  }
  ~CollectiveScope();
  CollectiveScope(const CollectiveScope&) = delete;
  CollectiveScope& operator=(const CollectiveScope&) = delete;

 private:
  void open(const CollectiveChannel& channel, std::string what);
  int64_t call_ = 0;  // the channel's count of collectives before this one
  int64_t id_ = -1;   // the inspector's record of this collective (-1: no inspector)
};

// Extra words for the collectives this thread starts while it lives ("bucket 2 of 5, 6291456 bytes");
// the label must outlive the scope.
class CollectiveLabel {
 public:
  explicit CollectiveLabel(const std::string& label);
  explicit CollectiveLabel(std::string&&) = delete;  // a temporary would not outlive the scope
  ~CollectiveLabel();
  CollectiveLabel(const CollectiveLabel&) = delete;
  CollectiveLabel& operator=(const CollectiveLabel&) = delete;

 private:
  const std::string* previous_;
};

// Starts the inspector's thread over a duplicate of MPI_COMM_WORLD (collective over MPI_COMM_WORLD: the
// first world-wide communicator calls it; every rank duplicates whatever its environment). Does nothing
// more when it ran already, when KUSARI_STALL_WARNING is 0 or when MPI lacks MPI_THREAD_MULTIPLE
// (saying so once).
void start_stall_inspector();

}  // namespace kusari::distributed

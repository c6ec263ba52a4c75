// A job in which rank 1 throws while the other ranks wait in a collective: abort_on_exception must end
// every rank with rank 1's message (test/expect_abort.sh checks the message, the status and the time).

#include <kusari/kusari.h>

int main() {
  kusari::distributed::abort_on_exception([] {
    const auto comm = kusari::distributed::create_communicator("ring");
    if (comm.rank() == 1) throw kusari::ValueError("rank one failed on purpose");
    comm.barrier();
  });
  return 0;
}

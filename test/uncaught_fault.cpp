// A job in which rank 1 lets an exception escape main while rank 0 waits in a collective: the handler
// create_communicator installs must end every rank with rank 1's message (test/expect_abort.sh).

#include <kusari/kusari.h>

int main() {
  const auto comm = kusari::distributed::create_communicator("ring");
  if (comm.rank() == 1) throw kusari::ValueError("rank one let this escape");
  comm.barrier();
  return 0;
}

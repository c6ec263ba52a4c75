#include <kusari/training/reporter.h>

namespace kusari::training {

void Reporter::report(const std::vector<std::pair<std::string, ReportValue>>& values) {
  const ReportScope into_this(observation_);
  kusari::report(values);
}

}  // namespace kusari::training

#include <kusari/data/bad_image.h>

#include <cstdio>
#include <mutex>
#include <unordered_set>

#include <kusari/core/error.h>

namespace kusari::data {

void report_bad_image(const std::string& path, const std::string& reason) {
  static std::mutex mutex;
  static std::unordered_set<std::string> reported;
  std::lock_guard lock(mutex);
  if (!reported.insert(path).second) return;
  if (reason.rfind(path, 0) == 0) {  // the reason names the path already
    std::fprintf(stderr, "kusari: skipping %s\n", reason.c_str());
  } else {
    std::fprintf(stderr, "kusari: skipping %s: %s\n", path.c_str(), reason.c_str());
  }
}

Example load_or_skip(int64_t index, const std::vector<LabeledPath>& entries, BadImagePolicy policy,
                     FunctionRef<Example(int64_t)> load) {
  if (policy == BadImagePolicy::error) return load(index);
  const auto size = static_cast<int64_t>(entries.size());
  const auto path_of = [&entries](int64_t i) -> const std::string& { return entries[static_cast<size_t>(i)].path; };
  for (int64_t k = 0; k < size; ++k) {
    const int64_t j = (index + k) % size;
    try {
      return load(j);
    } catch (const IOError& e) {
      report_bad_image(path_of(j), e.what());
    }
  }
  throw IOError(cat(path_of(index), ": skipped, and none of the data set's ", size, " images could be decoded"));
}

}  // namespace kusari::data

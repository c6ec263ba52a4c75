#include <kusari/training/snapshot.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>

#include <kusari/training/trainer.h>

namespace kusari::training {
namespace {

const std::string kIteration = "{iteration}";
const std::string kEpoch = "{epoch}";

// `pattern` with every occurrence of `placeholder` replaced by `value`.
std::string replace_all(std::string pattern, const std::string& placeholder, const std::string& value) {
  size_t at = pattern.find(placeholder);
  while (at != std::string::npos) {
    pattern.replace(at, placeholder.size(), value);
    at = pattern.find(placeholder, at + value.size());
  }
  return pattern;
}

// A regular expression matching the names `pattern` produces, with one group per placeholder.
std::string name_expression(const std::string& pattern) {
  std::string expression;
  for (size_t i = 0; i < pattern.size();) {
    const std::string* placeholder = nullptr;
    for (const std::string* candidate : {&kIteration, &kEpoch}) {
      if (pattern.compare(i, candidate->size(), *candidate) == 0) placeholder = candidate;
    }
    if (placeholder) {
      expression += "([0-9]{1,18})";  // fits int64_t
      i += placeholder->size();
      continue;
    }
    if (std::string_view("\\^$.|?*+()[]{}").find(pattern[i]) != std::string_view::npos) expression += '\\';
    expression += pattern[i++];
  }
  return expression;
}

std::regex name_regex(const std::string& pattern) { return std::regex(name_expression(pattern)); }

// Removes the temporary files (serializers::AtomicFile's "<name>.tmp-<pid>-<n>") that writes of `pattern`
// left in `directory` when their process died; returns how many.
int remove_unfinished_writes(const std::string& pattern, const std::string& directory) {
  const std::regex temporary(name_expression(pattern) + "\\.tmp-[0-9]+-[0-9]+");
  int removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (!entry.is_regular_file() || !std::regex_match(entry.path().filename().string(), temporary)) continue;
    std::error_code ignored;
    if (std::filesystem::remove(entry.path(), ignored)) ++removed;
  }
  return removed;
}

}  // namespace

Snapshot::Snapshot(serializers::SerializeFunction target, SnapshotOptions options, std::string name)
    : target_(std::move(target)), options_(std::move(options)), name_(std::move(name)) {
  const std::filesystem::path filename(options_.filename);
  if (options_.filename.empty() || filename.has_parent_path()) {
    throw ValueError(cat("snapshot: expected a file name without a directory, got '", options_.filename, "'"));
  }
  if (options_.n_retains < -1 || options_.n_retains == 0) {
    throw ValueError(cat("snapshot: expected n_retains >= 1 or -1 (keep all), got ", options_.n_retains));
  }
}

serializers::SerializeFunction Snapshot::target_for(Trainer& trainer) const {
  if (target_) return target_;
  return [&trainer](Serializer& serializer) { trainer.serialize(serializer); };
}

void Snapshot::operator()(Trainer& trainer) {
  const Updater& updater = trainer.updater();
  std::string name = replace_all(options_.filename, kIteration, std::to_string(updater.iteration()));
  name = replace_all(name, kEpoch, std::to_string(updater.epoch()));
  serializers::save_npz((std::filesystem::path(trainer.out()) / name).string(), target_for(trainer),
                        options_.compress);
  if (options_.n_retains < 0) return;
  const std::vector<std::string> files = find_snapshots(trainer.out());
  for (size_t i = static_cast<size_t>(options_.n_retains); i < files.size(); ++i) {
    std::error_code error;
    if (!std::filesystem::remove(files[i], error) && error) {
      throw IOError(cat("snapshot: cannot remove the old snapshot '", files[i], "': ", error.message()));
    }
  }
}

std::vector<std::string> Snapshot::find_snapshots(const std::string& directory) const {
  const std::regex regex = name_regex(options_.filename);
  std::vector<std::pair<std::vector<int64_t>, std::string>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    std::smatch match;
    if (!entry.is_regular_file() || !std::regex_match(name, match, regex)) continue;
    std::vector<int64_t> numbers;
    for (size_t g = 1; g < match.size(); ++g) numbers.push_back(std::stoll(match[g].str()));
    found.emplace_back(std::move(numbers), entry.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<std::string> paths;
  for (auto& [numbers, path] : found) paths.push_back(std::move(path));
  return paths;
}

void Snapshot::restore(Trainer& trainer) {
  // No write of this run has begun yet, so any temporary file is a dead process's unfinished one.
  if (const int removed = remove_unfinished_writes(options_.filename, trainer.out())) {
    std::fprintf(stderr, "kusari: snapshot: removed %d unfinished snapshot write%s from '%s'\n", removed,
                 removed == 1 ? "" : "s", trainer.out().c_str());
  }
  if (!options_.autoload) return;
  const std::vector<std::string> candidates = find_snapshots(trainer.out());
  std::string failures;
  for (const std::string& path : candidates) {
    try {
      serializers::load_npz(path, target_for(trainer), options_.strict);
      autoloaded_ = path;
      if (!failures.empty()) {
        std::fprintf(stderr, "kusari: snapshot: resumed from '%s', skipping newer ones that do not load:%s\n",
                     path.c_str(), failures.c_str());
      }
      return;
    } catch (const Error& e) {
      failures += cat("\n  ", path, ": ", e.what());
    }
  }
  if (!candidates.empty()) throw IOError(cat("snapshot: no snapshot in '", trainer.out(), "' loads:", failures));
}

std::shared_ptr<Snapshot> snapshot(SnapshotOptions options) {
  return std::make_shared<Snapshot>(serializers::SerializeFunction(), std::move(options));
}

}  // namespace kusari::training

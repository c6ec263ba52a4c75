#include <kusari/data/label_list.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <kusari/core/error.h>

namespace kusari::data {

std::vector<LabeledPath> read_label_list(const std::string& list_file, const std::string& root) {
  std::ifstream in(list_file);
  if (!in) throw IOError(cat(list_file, ": cannot open the list file"));
  std::vector<LabeledPath> entries;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string path, label, extra;
    if (!(fields >> path)) continue;  // blank line
    int32_t value = 0;
    const bool has_label = static_cast<bool>(fields >> label);
    const auto [end, error] = std::from_chars(label.data(), label.data() + label.size(), value);
    if (!has_label || error != std::errc() || end != label.data() + label.size() || (fields >> extra)) {
      throw IOError(cat(list_file, ": line ", number, ": expected \"path label\" with an integer label, got \"", line,
                        "\""));
    }
    entries.push_back({(std::filesystem::path(root) / path).string(), value});
  }
  if (in.bad()) throw IOError(cat(list_file, ": read error"));
  return entries;
}

}  // namespace kusari::data

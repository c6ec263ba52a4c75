#pragma once
// The list files of labeled image data sets: one "relative/path label" pair per line.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::data {

// One line of a list file, with the path already joined to the root directory.
struct KUSARI_API LabeledPath {
  std::string path;   // root / relative path
  int32_t label = 0;  // class index
};

// Reads `list_file` (blank lines skipped); throws IOError naming the file and the line number when a
// line is not a path and an integer label.
KUSARI_API std::vector<LabeledPath> read_label_list(const std::string& list_file, const std::string& root);

}  // namespace kusari::data

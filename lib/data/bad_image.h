#pragma once
// BadImagePolicy::skip: a file that cannot be decoded is reported once and replaced by the next one.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/function_ref.h>
#include <kusari/data/dataset.h>
#include <kusari/data/image_transform.h>
#include <kusari/data/label_list.h>

namespace kusari::data {

// Prints "kusari: skipping <path>: <reason>" to stderr the first time this process sees `path`.
KUSARI_API void report_bad_image(const std::string& path, const std::string& reason);
// load(index) under `policy`: with skip, an IOError of load(j) is reported (naming the path of
// entries[j]) and load(j + 1) tried, wrapping round, until one succeeds; IOError naming the first
// path when none of the entries' examples loads. With error the IOError goes to the caller.
KUSARI_API Example load_or_skip(int64_t index, const std::vector<LabeledPath>& entries, BadImagePolicy policy,
                                FunctionRef<Example(int64_t)> load);

}  // namespace kusari::data

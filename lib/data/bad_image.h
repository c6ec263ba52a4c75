#pragma once
// BadImagePolicy::skip: a file that cannot be decoded is reported once and replaced by the next one.

#include <cstdint>
#include <string>

#include <kusari/core/function_ref.h>
#include <kusari/data/dataset.h>
#include <kusari/data/image_transform.h>

namespace kusari::data {

// Prints "kusari: skipping <path>: <reason>" to stderr the first time this process sees `path`.
void report_bad_image(const std::string& path, const std::string& reason);
// load(index) under `policy`: with skip, an IOError of load(j) is reported (naming the path
// path_of(j)) and load(j + 1) tried, wrapping round, until one succeeds; IOError naming the first
// path when none of the `size` examples loads. With error the IOError goes to the caller.
Example load_or_skip(int64_t index, int64_t size, BadImagePolicy policy, FunctionRef<Example(int64_t)> load,
                     FunctionRef<std::string(int64_t)> path_of);

}  // namespace kusari::data

#include <kusari/distributed/detail/parameter_agreement.h>

#include <cstring>
#include <sstream>

namespace kusari::distributed {
namespace {

// One line per parameter: "/fc/W (10, 64) float32", with " (no gradient)" for frozen ones.
std::vector<std::string> describe(const std::vector<std::pair<std::string, Variable>>& params) {
  std::vector<std::string> lines;
  for (const auto& [name, param] : params) {
    lines.push_back(cat(name, " ", param.shape(), " ", param.dtype(), param.requires_grad() ? "" : " (no gradient)"));
  }
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// FNV-1a: the same 64 bits on every rank for the same text.
int64_t fingerprint(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  int64_t out;
  std::memcpy(&out, &hash, sizeof(out));
  return out;
}

}  // namespace

void require_same_parameters(const Communicator& comm, const std::vector<std::pair<std::string, Variable>>& params,
                             const char* op) {
  const std::string mine = join(describe(params));
  const Array hash = Array::empty({1}, Dtype::int64, Device::cpu());
  hash.data<int64_t>()[0] = fingerprint(mine);
  const std::vector<int64_t> hashes = comm.allgather(hash).to_vector<int64_t>();
  int differing = -1;
  for (int r = 1; r < comm.size() && differing < 0; ++r) {
    if (hashes[static_cast<size_t>(r)] != hashes[0]) differing = r;
  }
  if (differing < 0) return;
  const std::vector<std::string> first = split_lines(comm.bcast_obj(mine, 0));
  const std::vector<std::string> other = split_lines(comm.bcast_obj(mine, differing));
  size_t i = 0;
  while (i < first.size() && i < other.size() && first[i] == other[i]) ++i;
  const auto at = [i](const std::vector<std::string>& lines) {
    return i < lines.size() ? cat("'", lines[i], "'") : std::string("nothing");
  };
  throw ValueError(cat(op, ": the parameters differ across ranks (", first.size(), " on rank 0, ", other.size(),
                       " on rank ", differing, "): parameter #", i, " is ", at(first), " on rank 0 but ", at(other),
                       " on rank ", differing));
}

}  // namespace kusari::distributed

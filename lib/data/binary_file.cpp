#include <kusari/data/binary_file.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <zlib.h>

#include <kusari/core/error.h>

namespace kusari::data {
namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

[[noreturn]] void throw_errno(const std::string& path, const char* what) {
  throw IOError(cat(path, ": cannot ", what, " (", std::strerror(errno), ")"));
}

// A first guess of the decompressed size: what the last gzip member records (modulo 2^32), trusted only
// up to 8 times the compressed size, since a truncated file ends in arbitrary bytes.
size_t initial_capacity(const std::vector<uint8_t>& compressed) {
  size_t recorded = 0;
  if (compressed.size() >= 18) {
    const uint8_t* t = compressed.data() + compressed.size() - 4;
    recorded = static_cast<size_t>(t[0]) | static_cast<size_t>(t[1]) << 8 | static_cast<size_t>(t[2]) << 16 |
               static_cast<size_t>(t[3]) << 24;
  }
  return std::clamp<size_t>(recorded, 1 << 16, std::max<size_t>(8 * compressed.size(), 1 << 16));
}

// A zlib inflate stream that frees itself.
class Inflater {
 public:
  explicit Inflater(const std::string& name) {
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) throw IOError(cat(name, ": cannot start gzip decompression"));
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
};

}  // namespace

std::vector<uint8_t> read_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw_errno(path, "open the file");
  if (std::fseek(file.get(), 0, SEEK_END) != 0) throw_errno(path, "seek in the file");
  const long length = std::ftell(file.get());
  if (length < 0) throw_errno(path, "tell the file size");
  std::rewind(file.get());
  std::vector<uint8_t> bytes(static_cast<size_t>(length));
  if (std::fread(bytes.data(), 1, bytes.size(), file.get()) != bytes.size()) throw_errno(path, "read the file");
  return bytes;
}

bool is_gzip(const std::vector<uint8_t>& bytes) { return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b; }

std::vector<uint8_t> gunzip(const std::vector<uint8_t>& compressed, const std::string& name) {
  Inflater inflater(name);
  z_stream& z = inflater.stream();
  std::vector<uint8_t> out(initial_capacity(compressed));
  size_t produced = 0;
  size_t consumed = 0;
  for (;;) {
    if (produced == out.size()) out.resize(out.size() * 2);
    // zlib counts in uInt; feed and drain at most 1 GiB per call.
    const size_t in_chunk = std::min<size_t>(compressed.size() - consumed, size_t{1} << 30);
    const size_t out_chunk = std::min<size_t>(out.size() - produced, size_t{1} << 30);
    z.next_in = const_cast<Bytef*>(compressed.data() + consumed);
    z.avail_in = static_cast<uInt>(in_chunk);
    z.next_out = out.data() + produced;
    z.avail_out = static_cast<uInt>(out_chunk);
    const int status = inflate(&z, Z_NO_FLUSH);
    consumed += in_chunk - z.avail_in;
    produced += out_chunk - z.avail_out;
    if (status == Z_STREAM_END) {
      if (consumed == compressed.size()) break;
      if (compressed.size() - consumed < 2 || compressed[consumed] != 0x1f || compressed[consumed + 1] != 0x8b) {
        throw IOError(cat(name, ": unexpected bytes after the gzip stream at compressed byte offset ", consumed,
                          " of ", compressed.size()));
      }
      inflateReset(&z);  // another gzip member follows
    } else if (status == Z_BUF_ERROR && consumed == compressed.size() && z.avail_out > 0) {
      throw IOError(cat(name, ": gzip stream truncated: the data ends at compressed byte offset ", consumed,
                        " before the end of the stream"));
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      throw IOError(cat(name, ": corrupt gzip data near compressed byte offset ", consumed, " (",
                        z.msg ? z.msg : "zlib error", ")"));
    }
  }
  out.resize(produced);
  return out;
}

std::vector<uint8_t> read_maybe_gzip(const std::string& path) {
  std::vector<uint8_t> bytes = read_file(path);
  return is_gzip(bytes) ? gunzip(bytes, path) : bytes;
}

}  // namespace kusari::data

#include <kusari/serializers/zip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <kusari/core/error.h>
#include <kusari/serializers/detail/byte_io.h>

namespace kusari::serializers {
namespace {

using detail::ByteReader;
using detail::put_le;

constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint16_t kZip64ExtraTag = 0x0001;
constexpr uint32_t kMax32 = 0xffffffffu;
constexpr uint16_t kMax16 = 0xffffu;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kEndRecordSize = 22;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kZip64EndRecordSize = 56;
// Entries carry a fixed timestamp (1980-01-01 00:00 in MS-DOS format) so equal content gives equal files.
constexpr uint16_t kDosTime = 0;
constexpr uint16_t kDosDate = (1 << 5) | 1;
// Deflate expands data at most about 1032-fold; a larger recorded size means a corrupt directory.
constexpr uint64_t kMaxDeflateRatio = 1100;
// zlib counts in 32-bit units; larger buffers go through in pieces of this size.
constexpr size_t kZlibChunk = size_t{1} << 30;

uint16_t version_needed(bool zip64) { return zip64 ? 45 : 20; }

// General-purpose flags: bit 11 marks UTF-8 names.
uint16_t name_flags(const std::string& name) {
  const bool ascii = std::all_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 128; });
  return ascii ? 0 : (1 << 11);
}

std::string hex32(uint32_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

uint32_t crc32_of(std::string_view data) {
  uLong crc = ::crc32(0, nullptr, 0);
  for (size_t pos = 0; pos < data.size(); pos += kZlibChunk) {
    const size_t n = std::min(kZlibChunk, data.size() - pos);
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(data.data() + pos), static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(crc);
}

// Raw deflate (no zlib header), as zip stores it.
std::string deflate_raw(std::string_view data, const std::string& context) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw IOError(cat(context, ": zlib could not start compressing"));
  }
  std::string out;
  size_t in_pos = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (z.avail_in == 0 && in_pos < data.size()) {
      const size_t n = std::min(kZlibChunk, data.size() - in_pos);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
      z.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    const size_t used = out.size(), room = std::max<size_t>(size_t{1} << 16, z.avail_in / 2);
    out.resize(used + room);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(room);
    status = deflate(&z, in_pos == data.size() ? Z_FINISH : Z_NO_FLUSH);
    out.resize(used + room - z.avail_out);
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
      deflateEnd(&z);
      throw IOError(cat(context, ": zlib failed while compressing (status ", status, ")"));
    }
  }
  deflateEnd(&z);
  return out;
}

// Inflates raw deflate data that must expand to exactly `size` bytes.
std::string inflate_raw(std::string_view data, uint64_t size, const std::string& context) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw IOError(cat(context, ": zlib could not start decompressing"));
  std::string out(size + 1, '\0');  // one spare byte detects data longer than declared
  size_t in_pos = 0, out_pos = 0;
  std::string problem;
  while (problem.empty()) {
    if (z.avail_in == 0 && in_pos < data.size()) {
      const size_t n = std::min(kZlibChunk, data.size() - in_pos);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
      z.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    if (z.avail_out == 0 && out_pos < out.size()) {
      const size_t n = std::min(kZlibChunk, out.size() - out_pos);
      z.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
      z.avail_out = static_cast<uInt>(n);
      out_pos += n;
    }
    const int status = inflate(&z, Z_NO_FLUSH);
    if (status == Z_STREAM_END) break;
    if (status == Z_DATA_ERROR) {
      problem = cat("corrupt deflate data (zlib: ", z.msg ? z.msg : "no detail", ")");
    } else if (status == Z_BUF_ERROR || (status == Z_OK && z.avail_in == 0 && in_pos == data.size())) {
      problem = z.avail_out == 0 && out_pos == out.size() ? cat("inflates to more than the recorded ", size, " bytes")
                                                          : "the deflate stream ends early (truncated)";
    } else if (status != Z_OK) {
      problem = cat("zlib failed while decompressing (status ", status, ")");
    }
  }
  inflateEnd(&z);
  const uint64_t produced = out_pos - z.avail_out;
  if (problem.empty() && produced != size) {
    problem = cat("inflates to ", produced, " bytes, the directory records ", size);
  }
  if (!problem.empty()) throw IOError(cat(context, " is corrupt: ", problem));
  out.resize(size);
  return out;
}

// The 4-byte little-endian signature at `pos` of `bytes` (the caller keeps pos + 4 in range).
uint32_t signature_at(std::string_view bytes, size_t pos) {
  return ByteReader(bytes.substr(pos, 4), "").get<uint32_t>();
}

// The ZIP64 extended-information extra field holding the given 64-bit values.
std::string zip64_extra(std::initializer_list<uint64_t> values) {
  std::string out;
  put_le(out, kZip64ExtraTag);
  put_le(out, static_cast<uint16_t>(8 * values.size()));
  for (uint64_t v : values) put_le(out, v);
  return out;
}

// The 32-bit field for `value`, or the ZIP64 marker when the real value lives in an extra field.
uint32_t field32(uint64_t value, bool zip64) { return zip64 ? kMax32 : static_cast<uint32_t>(value); }

}  // namespace

ZipWriter::ZipWriter(std::string path, bool force_zip64) : file_(std::move(path)), force_zip64_(force_zip64) {}

void ZipWriter::add(const std::string& name, std::string_view data, bool compress) {
  if (name.size() > kMax16) {
    throw ValueError(cat("ZipWriter: expected an entry name of at most 65535 bytes, got ", name.size()));
  }
  if (!names_.insert(name).second) {
    throw ValueError(cat("ZipWriter: entry '", name, "' is added twice to '", file_.path(), "'"));
  }
  Entry entry{name, compress ? kMethodDeflate : kMethodStored, crc32_of(data), 0, data.size(), file_.size()};
  const std::string deflated = compress ? deflate_raw(data, cat("'", file_.path(), "': entry '", name, "'")) : "";
  const std::string_view body = compress ? std::string_view(deflated) : data;
  entry.compressed_size = body.size();
  const bool zip64 = force_zip64_ || entry.size >= kMax32 || entry.compressed_size >= kMax32;
  const std::string extra = zip64 ? zip64_extra({entry.size, entry.compressed_size}) : "";
  std::string header;
  put_le(header, kLocalSignature);
  put_le(header, version_needed(zip64));
  put_le(header, name_flags(name));
  put_le(header, entry.method);
  put_le(header, kDosTime);
  put_le(header, kDosDate);
  put_le(header, entry.crc);
  put_le(header, field32(entry.compressed_size, zip64));
  put_le(header, field32(entry.size, zip64));
  put_le(header, static_cast<uint16_t>(name.size()));
  put_le(header, static_cast<uint16_t>(extra.size()));
  header += name;
  header += extra;
  file_.write(header);
  file_.write(body);
  entries_.push_back(std::move(entry));
}

void ZipWriter::finish() {
  const uint64_t directory_offset = file_.size();
  std::string directory;
  for (const Entry& entry : entries_) {
    const bool zip64 =
        force_zip64_ || entry.size >= kMax32 || entry.compressed_size >= kMax32 || entry.offset >= kMax32;
    const std::string extra = zip64 ? zip64_extra({entry.size, entry.compressed_size, entry.offset}) : "";
    put_le(directory, kCentralSignature);
    put_le(directory, static_cast<uint16_t>((3 << 8) | version_needed(zip64)));  // made by: Unix
    put_le(directory, version_needed(zip64));
    put_le(directory, name_flags(entry.name));
    put_le(directory, entry.method);
    put_le(directory, kDosTime);
    put_le(directory, kDosDate);
    put_le(directory, entry.crc);
    put_le(directory, field32(entry.compressed_size, zip64));
    put_le(directory, field32(entry.size, zip64));
    put_le(directory, static_cast<uint16_t>(entry.name.size()));
    put_le(directory, static_cast<uint16_t>(extra.size()));
    put_le(directory, uint16_t{0});             // comment length
    put_le(directory, uint16_t{0});             // disk number
    put_le(directory, uint16_t{0});             // internal attributes
    put_le(directory, uint32_t{0100644} << 16);  // external attributes: regular file, rw-r--r--
    put_le(directory, field32(entry.offset, zip64));
    directory += entry.name;
    directory += extra;
  }
  file_.write(directory);
  const uint64_t count = entries_.size(), directory_size = directory.size();
  const bool zip64 = force_zip64_ || count >= kMax16 || directory_size >= kMax32 || directory_offset >= kMax32;
  std::string end;
  if (zip64) {
    const uint64_t zip64_end_offset = file_.size();
    put_le(end, kZip64EndSignature);
    put_le(end, uint64_t{kZip64EndRecordSize - 12});  // size of the rest of the record
    put_le(end, static_cast<uint16_t>((3 << 8) | version_needed(true)));
    put_le(end, version_needed(true));
    put_le(end, uint32_t{0});  // this disk
    put_le(end, uint32_t{0});  // disk holding the directory
    put_le(end, count);
    put_le(end, count);
    put_le(end, directory_size);
    put_le(end, directory_offset);
    put_le(end, kZip64LocatorSignature);
    put_le(end, uint32_t{0});
    put_le(end, zip64_end_offset);
    put_le(end, uint32_t{1});  // disks in all
  }
  put_le(end, kEndSignature);
  put_le(end, uint16_t{0});
  put_le(end, uint16_t{0});
  put_le(end, zip64 ? kMax16 : static_cast<uint16_t>(count));
  put_le(end, zip64 ? kMax16 : static_cast<uint16_t>(count));
  put_le(end, field32(directory_size, zip64));
  put_le(end, field32(directory_offset, zip64));
  put_le(end, uint16_t{0});  // comment length
  file_.write(end);
  file_.commit();
}

ZipReader::ZipReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw IOError(cat("cannot open '", path_, "': ", std::strerror(errno)));
  try {
    struct stat info {};
    if (::fstat(fd_, &info) != 0) throw IOError(cat("cannot stat '", path_, "': ", std::strerror(errno)));
    if (!S_ISREG(info.st_mode)) throw IOError(cat("cannot read '", path_, "': not a regular file"));
    file_size_ = static_cast<uint64_t>(info.st_size);
    read_central_directory();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

ZipReader::~ZipReader() { ::close(fd_); }

std::vector<std::string> ZipReader::names() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

std::string ZipReader::read_at(uint64_t offset, uint64_t size, const std::string& what) const {
  if (offset > file_size_ || size > file_size_ - offset) {
    throw IOError(cat(path_, ": truncated or corrupt: ", what, " spans bytes ", offset, " to ", offset + size,
                      " but the file has ", file_size_));
  }
  std::string out(size, '\0');
  for (uint64_t done = 0; done < size;) {
    const ssize_t n = ::pread(fd_, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw IOError(cat(path_, ": reading ", what, " at offset ", offset + done, " failed: ",
                        n < 0 ? std::strerror(errno) : "unexpected end of file"));
    }
    done += static_cast<uint64_t>(n);
  }
  return out;
}

void ZipReader::read_central_directory() {
  if (file_size_ < kEndRecordSize) {
    throw IOError(cat(path_, ": not a zip archive: ", file_size_,
                      " bytes is too short to hold an end-of-central-directory record (truncated or empty file)"));
  }
  const uint64_t tail_size = std::min<uint64_t>(file_size_, kEndRecordSize + kMax16);
  const uint64_t tail_offset = file_size_ - tail_size;
  const std::string tail = read_at(tail_offset, tail_size, "the end-of-central-directory record");
  // The record sits at the end, followed only by a comment of at most 65535 bytes: search backwards.
  size_t pos = tail.size() - kEndRecordSize + 1;
  while (pos-- > 0 && signature_at(tail, pos) != kEndSignature) {
  }
  if (pos == std::string::npos) {
    throw IOError(cat(path_, ": not a zip archive, or truncated: no end-of-central-directory record found"));
  }
  const uint64_t end_offset = tail_offset + pos;
  ByteReader end(std::string_view(tail).substr(pos), cat(path_, ": end-of-central-directory record"), end_offset);
  end.get<uint32_t>();
  const auto disk = end.get<uint16_t>(), directory_disk = end.get<uint16_t>();
  end.get<uint16_t>();
  uint64_t count = end.get<uint16_t>(), directory_size = end.get<uint32_t>(), directory_offset = end.get<uint32_t>();
  if (disk != 0 || directory_disk != 0) throw IOError(cat(path_, ": multi-disk zip archives are not supported"));

  const std::string locator_bytes =
      end_offset >= kZip64LocatorSize ? read_at(end_offset - kZip64LocatorSize, kZip64LocatorSize, "the ZIP64 locator")
                                      : "";
  if (!locator_bytes.empty() && signature_at(locator_bytes, 0) == kZip64LocatorSignature) {
    ByteReader locator(locator_bytes, cat(path_, ": ZIP64 locator"), end_offset - kZip64LocatorSize);
    locator.take(8);
    const auto record_offset = locator.get<uint64_t>();
    const std::string record_bytes =
        read_at(record_offset, kZip64EndRecordSize, "the ZIP64 end-of-central-directory record");
    ByteReader record(record_bytes, cat(path_, ": ZIP64 end-of-central-directory record"), record_offset);
    if (record.get<uint32_t>() != kZip64EndSignature) {
      throw IOError(cat(path_, ": corrupt archive: bad signature of the ZIP64 end-of-central-directory record at ",
                        "offset ", record_offset));
    }
    record.take(20);  // record size, versions, disk numbers
    record.get<uint64_t>();
    count = record.get<uint64_t>();
    directory_size = record.get<uint64_t>();
    directory_offset = record.get<uint64_t>();
  }

  const std::string directory = read_at(directory_offset, directory_size, "the central directory");
  ByteReader in(directory, cat(path_, ": central directory"), directory_offset);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t record_offset = directory_offset + in.position();
    if (in.get<uint32_t>() != kCentralSignature) {
      throw IOError(cat(path_, ": corrupt archive: bad signature of central directory entry ", i, " at offset ",
                        record_offset));
    }
    in.take(4);  // versions
    Entry entry;
    entry.flags = in.get<uint16_t>();
    entry.method = in.get<uint16_t>();
    in.take(4);  // time and date
    entry.crc = in.get<uint32_t>();
    entry.compressed_size = in.get<uint32_t>();
    entry.size = in.get<uint32_t>();
    const auto name_size = in.get<uint16_t>(), extra_size = in.get<uint16_t>(), comment_size = in.get<uint16_t>();
    in.take(8);  // disk number, attributes
    entry.offset = in.get<uint32_t>();
    const std::string name(in.take(name_size));
    ByteReader extra(in.take(extra_size), cat(path_, ": extra fields of entry '", name, "'"));
    in.take(comment_size);
    for (size_t used = 0; used + 4 <= extra_size; used = extra.position()) {
      const auto tag = extra.get<uint16_t>(), field_size = extra.get<uint16_t>();
      ByteReader field(extra.take(field_size), cat(path_, ": ZIP64 field of entry '", name, "'"));
      if (tag != kZip64ExtraTag) continue;
      if (entry.size == kMax32) entry.size = field.get<uint64_t>();
      if (entry.compressed_size == kMax32) entry.compressed_size = field.get<uint64_t>();
      if (entry.offset == kMax32) entry.offset = field.get<uint64_t>();
    }
    if (entry.flags & 1) throw IOError(cat(path_, ": entry '", name, "' is encrypted, which is not supported"));
    if (entry.method != kMethodStored && entry.method != kMethodDeflate) {
      throw IOError(cat(path_, ": entry '", name, "' uses compression method ", entry.method,
                        "; only stored (0) and deflate (8) are supported"));
    }
    entries_.emplace(name, entry);
  }
}

std::string ZipReader::read(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw ValueError(cat(path_, ": the archive has no entry '", name, "'"));
  const Entry& entry = it->second;
  const std::string what = cat("entry '", name, "'");
  const std::string header = read_at(entry.offset, kLocalHeaderSize, cat("the local header of ", what));
  ByteReader local(header, cat(path_, ": local header of ", what), entry.offset);
  if (local.get<uint32_t>() != kLocalSignature) {
    throw IOError(cat(path_, ": corrupt archive: bad signature of the local header of ", what, " at offset ",
                      entry.offset));
  }
  local.take(22);  // versions, flags, method, time, date, CRC and sizes (the directory's are authoritative)
  const auto name_size = local.get<uint16_t>(), extra_size = local.get<uint16_t>();
  const uint64_t data_offset = entry.offset + kLocalHeaderSize + name_size + extra_size;
  std::string stored = read_at(data_offset, entry.compressed_size, cat("the data of ", what));
  const std::string context = cat(path_, ": ", what);
  if (entry.method == kMethodStored && entry.compressed_size != entry.size) {
    throw IOError(cat(context, " is corrupt: stored with ", entry.compressed_size, " bytes but recorded as ",
                      entry.size));
  }
  if (entry.method == kMethodDeflate && entry.size / kMaxDeflateRatio > entry.compressed_size) {
    throw IOError(cat(context, " is corrupt: ", entry.compressed_size, " deflated bytes cannot hold the recorded ",
                      entry.size, " bytes"));
  }
  std::string data = entry.method == kMethodDeflate ? inflate_raw(stored, entry.size, context) : std::move(stored);
  const uint32_t crc = crc32_of(data);
  if (crc != entry.crc) {
    throw IOError(cat(context, " is corrupt: its CRC-32 is ", hex32(crc), ", the directory records ",
                      hex32(entry.crc)));
  }
  return data;
}

}  // namespace kusari::serializers

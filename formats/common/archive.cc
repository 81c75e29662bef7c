#include "formats/common/archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

namespace restack {
namespace fs = std::filesystem;

Compression detectCompression(std::string_view bytes) {
  auto at = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  if (bytes.size() >= 2 && at(0) == 0x1f && at(1) == 0x8b) return Compression::kGzip;
  if (bytes.size() >= 4 && at(0) == 0x28 && at(1) == 0xb5 && at(2) == 0x2f && at(3) == 0xfd) return Compression::kZstd;
  if (bytes.size() >= 4 && at(0) == 0x50 && at(1) == 0x4b && at(2) == 0x03 && at(3) == 0x04) return Compression::kZip;
  return Compression::kNone;
}

const char* compressionName(Compression compression) {
  switch (compression) {
    case Compression::kNone:
      return "none";
    case Compression::kGzip:
      return "gzip";
    case Compression::kZstd:
      return "zstd";
    case Compression::kZip:
      return "zip";
  }
  return "none";
}

namespace {

constexpr size_t kChunk = 1 << 16;

// How many output bytes `compressed` input bytes may produce under `limits`.
uint64_t allowedOutput(uint64_t compressed, const UnpackLimits& limits) {
  uint64_t allowed = limits.max_bytes;
  if (limits.max_ratio != 0) {
    uint64_t by_ratio = compressed > UINT64_MAX / limits.max_ratio ? UINT64_MAX : compressed * limits.max_ratio;
    by_ratio = std::max(by_ratio, kRatioAllowanceBytes);
    allowed = std::min(allowed, by_ratio);
  }
  return allowed;
}

// The error for output past allowedOutput(): names the limit that was hit and its config key.
Error limitError(const std::string& what, uint64_t compressed, const UnpackLimits& limits) {
  if (allowedOutput(compressed, limits) == limits.max_bytes) {
    return tooLarge(what + " decompresses to more than limits.max_upload_bytes (" + std::to_string(limits.max_bytes) +
                    " bytes)");
  }
  return tooLarge(what + " decompresses to more than " + std::to_string(limits.max_ratio) + " times its " +
                  std::to_string(compressed) +
                  " compressed bytes (limits.max_decompression_ratio); a decompression bomb is refused");
}

// Errors writing an entry whose name the uploader chose: the ones the name can cause are the
// upload's fault (kMalformedInput); a full or broken disk is the worker's (kIo).
Error writeError(const std::string& what, int error_number, bool name_from_upload) {
  std::string message = what + ": " + std::strerror(error_number);
  switch (error_number) {
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EROFS:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return ioError(message);
    default:
      return name_from_upload ? malformed(message) : ioError(message);
  }
}

// A new file written with plain system calls: O_EXCL|O_NOFOLLOW refuse an existing file or a
// symbolic link, and errno tells a full disk from a bad name.
class OutputFile {
 public:
  ~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status open(const std::string& path, bool name_from_upload) {
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0) return writeError("cannot create " + path, errno, name_from_upload);
    return Status::ok();
  }
  Status write(const char* data, size_t size) {
    while (size > 0) {
      ssize_t n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return writeError("cannot write " + path_, n < 0 ? errno : EIO, false);
      data += n;
      size -= static_cast<size_t>(n);
    }
    return Status::ok();
  }
  Status close() {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return writeError("cannot write " + path_, errno, false);
    return Status::ok();
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// Hands out the input in chunks: from memory, or read from a file. 0 at the end.
class InputReader {
 public:
  Status open(const PackedInput& input) {
    if (input.path.empty()) {
      memory_ = input.bytes;
      size_ = input.bytes.size();
      return Status::ok();
    }
    path_ = input.path;
    fd_ = ::open(input.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return ioError("cannot open " + input.path + ": " + std::strerror(errno));
    struct stat info{};
    if (::fstat(fd_, &info) != 0) return ioError("cannot read " + input.path + ": " + std::strerror(errno));
    if (!S_ISREG(info.st_mode)) return ioError(input.path + " is not a regular file");
    size_ = static_cast<uint64_t>(info.st_size);
    return Status::ok();
  }
  ~InputReader() {
    if (fd_ >= 0) ::close(fd_);
  }
  uint64_t size() const { return size_; }
  Expected<size_t> read(char* buffer, size_t capacity) {
    if (fd_ < 0) {
      size_t n = std::min(capacity, memory_.size());
      std::memcpy(buffer, memory_.data(), n);
      memory_.remove_prefix(n);
      return n;
    }
    while (true) {
      ssize_t n = ::read(fd_, buffer, capacity);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ioError("cannot read " + path_ + ": " + std::strerror(errno));
    }
  }

 private:
  std::string_view memory_;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

using Sink = std::function<Status(const char*, size_t)>;

// Inflates gzip (concatenated members accepted), handing each chunk to `sink`; stops past `limit`.
Status inflateGzip(InputReader& input, uint64_t limit, const std::function<Error()>& over_limit, const Sink& sink) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return Error(ErrorCode::kInternal, "zlib init failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&stream, inflateEnd);
  std::vector<char> in_buffer(kChunk), out_buffer(kChunk);
  uint64_t total = 0;
  bool member_ended = false;
  bool any_input = false;
  while (true) {
    if (stream.avail_in == 0) {
      auto n = input.read(in_buffer.data(), in_buffer.size());
      if (!n) return n.error();
      if (*n == 0) break;
      any_input = true;
      stream.next_in = reinterpret_cast<Bytef*>(in_buffer.data());
      stream.avail_in = static_cast<uInt>(*n);
    }
    if (member_ended) {
      inflateReset(&stream);
      member_ended = false;
    }
    const uInt before_in = stream.avail_in;
    stream.next_out = reinterpret_cast<Bytef*>(out_buffer.data());
    stream.avail_out = static_cast<uInt>(out_buffer.size());
    int result = inflate(&stream, Z_NO_FLUSH);
    if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) {
      return malformed(std::string("gzip data is corrupt: ") + (stream.msg ? stream.msg : "inflate failed"));
    }
    size_t produced = out_buffer.size() - stream.avail_out;
    // No input taken and nothing produced with room on both sides: zlib cannot go on.
    if (produced == 0 && stream.avail_in == before_in && result != Z_STREAM_END) {
      return malformed("gzip data is corrupt: inflate made no progress");
    }
    total += produced;
    if (total > limit) return over_limit();
    RESTACK_RETURN_IF_ERROR(sink(out_buffer.data(), produced));
    if (result == Z_STREAM_END) member_ended = true;
  }
  if (!any_input) return malformed("gzip data is empty");
  if (!member_ended) return malformed("gzip data is truncated");
  return Status::ok();
}

Status decompressZstd(InputReader& input, uint64_t limit, const std::function<Error()>& over_limit, const Sink& sink) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!context) return Error(ErrorCode::kInternal, "zstd init failed");
  ZSTD_DCtx_setParameter(context.get(), ZSTD_d_windowLogMax, kMaxZstdWindowLog);
  std::vector<char> in_buffer(ZSTD_DStreamInSize()), out_buffer(ZSTD_DStreamOutSize());
  uint64_t total = 0;
  size_t last = 0;
  bool any_input = false;
  while (true) {
    auto n = input.read(in_buffer.data(), in_buffer.size());
    if (!n) return n.error();
    if (*n == 0) break;
    any_input = true;
    ZSTD_inBuffer in{in_buffer.data(), *n, 0};
    // A full output buffer may leave decoded bytes inside the context: call again until it
    // stops filling the buffer, even when all input was taken.
    bool output_full = true;
    while (in.pos < in.size || output_full) {
      ZSTD_outBuffer out{out_buffer.data(), out_buffer.size(), 0};
      last = ZSTD_decompressStream(context.get(), &out, &in);
      if (ZSTD_isError(last)) {
        if (ZSTD_getErrorCode(last) == ZSTD_error_frameParameter_windowTooLarge) {
          return tooLarge("zstd data needs a window larger than " + std::to_string(1ull << kMaxZstdWindowLog) +
                          " bytes (compressed with --long=28 or more); recompress without --long");
        }
        return malformed(std::string("zstd data is corrupt: ") + ZSTD_getErrorName(last));
      }
      output_full = out.pos == out.size;
      total += out.pos;
      if (total > limit) return over_limit();
      RESTACK_RETURN_IF_ERROR(sink(out_buffer.data(), out.pos));
    }
  }
  if (!any_input) return malformed("zstd data is empty");
  if (last != 0) return malformed("zstd data is truncated");
  return Status::ok();
}

// Splits a zip entry name into folder components, refusing names that could leave the folder
// or that the file system could not hold. "." and empty components ("a//b", "./a") are dropped.
Expected<std::vector<std::string>> entryComponents(const std::string& name) {
  if (name.empty()) return malformed("a zip entry has an empty name");
  if (name.front() == '/' || name.front() == '\\') {
    return malformed("zip entry '" + name + "' has an absolute path and would be written outside the upload folder");
  }
  if (name.size() > 4096) return malformed("a zip entry's name is longer than 4096 bytes");
  std::vector<std::string> components;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return malformed("zip entry '" + name + "' would be written outside the upload folder");
    if (part.size() > 255) return malformed("zip entry '" + name + "' has a path component longer than 255 bytes");
    components.push_back(std::move(part));
  }
  if (components.empty()) return malformed("zip entry '" + name + "' names no file");
  return components;
}

// Reads `size` bytes at `offset` of the input (memory or file); fewer at its end.
Expected<std::string> readAt(const PackedInput& input, int fd, uint64_t offset, uint64_t size) {
  if (input.path.empty()) {
    if (offset >= input.bytes.size()) return std::string();
    return std::string(input.bytes.substr(offset, size));
  }
  std::string out(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ioError("cannot read " + input.path + ": " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  out.resize(done);
  return out;
}

uint64_t le(std::string_view bytes, size_t at, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return value;
}

// libzip turns a NUL inside an entry name into a space, so the raw names are checked here, in
// the central directory (zip64 included). Anything this walk does not recognise is left to
// libzip, which has already accepted the archive's structure.
constexpr uint64_t kMaxCentralDirectoryBytes = 16 << 20;
Status checkRawEntryNames(const PackedInput& input, uint64_t archive_size) {
  int fd = -1;
  if (!input.path.empty()) {
    fd = ::open(input.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ioError("cannot open " + input.path + ": " + std::strerror(errno));
  }
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) {
    if (*f >= 0) ::close(*f);
  });
  const uint64_t tail_size = std::min<uint64_t>(archive_size, 22 + 0xffff);
  auto tail = readAt(input, fd, archive_size - tail_size, tail_size);
  if (!tail) return tail.error();
  if (tail->size() < 22) return Status::ok();
  size_t end = tail->size() - 22 + 1;
  while (end-- > 0) {
    if (le(*tail, end, 4) == 0x06054b50) break;
  }
  if (end == static_cast<size_t>(-1)) return Status::ok();
  uint64_t cd_size = le(*tail, end + 12, 4), cd_offset = le(*tail, end + 16, 4);
  if (cd_size == 0xffffffff || cd_offset == 0xffffffff || le(*tail, end + 10, 2) == 0xffff) {
    const uint64_t end_offset = archive_size - tail_size + end;
    if (end_offset < 20) return Status::ok();
    auto locator = readAt(input, fd, end_offset - 20, 20);
    if (!locator) return locator.error();
    if (locator->size() < 20 || le(*locator, 0, 4) != 0x07064b50) return Status::ok();
    auto record = readAt(input, fd, le(*locator, 8, 8), 56);
    if (!record) return record.error();
    if (record->size() < 56 || le(*record, 0, 4) != 0x06064b50) return Status::ok();
    cd_size = le(*record, 40, 8);
    cd_offset = le(*record, 48, 8);
  }
  if (cd_size > kMaxCentralDirectoryBytes) {
    return malformed("the zip upload's entry list is " + std::to_string(cd_size) + " bytes, more than " +
                     std::to_string(kMaxCentralDirectoryBytes) +
                     "; split it into several uploads (each .dSYM bundle or symbol file may travel alone)");
  }
  auto directory = readAt(input, fd, cd_offset, cd_size);
  if (!directory) return directory.error();
  const std::string_view cd = *directory;
  for (size_t at = 0, index = 0; at + 46 <= cd.size() && le(cd, at, 4) == 0x02014b50; ++index) {
    const size_t name_size = le(cd, at + 28, 2);
    const size_t next = at + 46 + name_size + le(cd, at + 30, 2) + le(cd, at + 32, 2);
    if (at + 46 + name_size > cd.size()) break;
    const std::string_view name = cd.substr(at + 46, name_size);
    if (name.find('\0') != std::string_view::npos) {
      std::string shown;
      for (char c : name.substr(0, 64)) shown += c == '\0' ? std::string("\\x00") : std::string(1, c);
      return malformed("zip entry " + std::to_string(index) + "'s name holds a NUL byte ('" + shown + "')");
    }
    at = next;
  }
  return Status::ok();
}

// zip_t opened on a file or on bytes in memory; zip_discard on destruction.
Expected<std::unique_ptr<zip_t, void (*)(zip_t*)>> openZip(const PackedInput& input) {
  using Handle = std::unique_ptr<zip_t, void (*)(zip_t*)>;
  auto discard = [](zip_t* z) {
    if (z) zip_discard(z);
  };
  zip_error_t error;
  zip_error_init(&error);
  zip_t* archive = nullptr;
  if (!input.path.empty()) {
    int code = 0;
    archive = zip_open(input.path.c_str(), ZIP_RDONLY, &code);
    if (!archive) zip_error_init_with_code(&error, code);
  } else {
    zip_source_t* source = zip_source_buffer_create(input.bytes.data(), input.bytes.size(), 0, &error);
    if (source) {
      archive = zip_open_from_source(source, ZIP_RDONLY, &error);
      if (!archive) zip_source_free(source);
    }
  }
  if (!archive) {
    std::string message = std::string("cannot read the zip upload") + (input.path.empty() ? "" : " " + input.path) +
                          ": " + zip_error_strerror(&error);
    zip_error_fini(&error);
    return malformed(message);
  }
  zip_error_fini(&error);
  return Handle(archive, discard);
}

}  // namespace

Status decompressToFile(const PackedInput& input, Compression compression, const std::string& output_path,
                        const UnpackLimits& limits) {
  if (compression != Compression::kGzip && compression != Compression::kZstd) {
    return invalidArgument(std::string("decompressToFile cannot handle ") + compressionName(compression));
  }
  InputReader reader;
  RESTACK_RETURN_IF_ERROR(reader.open(input));
  OutputFile out;
  RESTACK_RETURN_IF_ERROR(out.open(output_path, /*name_from_upload=*/false));
  const uint64_t compressed = reader.size();
  const std::string what = std::string("the ") + compressionName(compression) + " upload";
  auto over_limit = [&]() { return limitError(what, compressed, limits); };
  auto sink = [&](const char* data, size_t size) { return out.write(data, size); };
  const uint64_t limit = allowedOutput(compressed, limits);
  Status status = compression == Compression::kGzip ? inflateGzip(reader, limit, over_limit, sink)
                                                    : decompressZstd(reader, limit, over_limit, sink);
  RESTACK_RETURN_IF_ERROR(status);
  return out.close();
}

Status extractZip(const PackedInput& input, const std::string& directory, const UnpackLimits& limits) {
  auto opened = openZip(input);
  if (!opened) return opened.error();
  zip_t* archive = opened->get();
  uint64_t archive_size = input.bytes.size();
  if (!input.path.empty()) {
    std::error_code error;
    archive_size = fs::file_size(input.path, error);
    if (error) return ioError("cannot read " + input.path + ": " + error.message());
  }
  RESTACK_RETURN_IF_ERROR(checkRawEntryNames(input, archive_size));
  const zip_int64_t entries = zip_get_num_entries(archive, 0);
  if (entries < 0) return malformed("cannot read the zip upload's entry list");
  if (static_cast<uint64_t>(entries) > limits.max_zip_entries) {
    return malformed("the zip upload lists " + std::to_string(entries) + " entries, more than the limit of " +
                     std::to_string(limits.max_zip_entries) +
                     "; split it into several uploads (each .dSYM bundle or symbol file may travel alone)");
  }

  const fs::path root(directory);
  const uint64_t total_limit = allowedOutput(archive_size, limits);
  uint64_t total = 0;
  // Relative paths ("a/b") written so far, as files and as folders (implicit parents included).
  std::unordered_set<std::string> files, folders;
  std::vector<char> buffer(kChunk);
  for (zip_int64_t i = 0; i < entries; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive, index, ZIP_FL_ENC_RAW, &stat) != 0 || !(stat.valid & ZIP_STAT_NAME) || !stat.name) {
      return malformed("zip entry " + std::to_string(i) + " cannot be read: " + zip_strerror(archive));
    }
    const std::string raw_name(stat.name);
    if (raw_name.starts_with("__MACOSX/")) continue;  // Finder's resource-fork shadows
    auto components = entryComponents(raw_name);
    if (!components) return components.error();
    const bool is_folder = raw_name.back() == '/';

    zip_uint8_t opsys = 0;
    zip_uint32_t attributes = 0;
    if (zip_file_get_external_attributes(archive, index, 0, &opsys, &attributes) == 0 && opsys == ZIP_OPSYS_UNIX &&
        ((attributes >> 16) & S_IFMT) == S_IFLNK) {
      return malformed("zip entry '" + raw_name + "' is a symbolic link; zip the files themselves (zip -r, not -y)");
    }
    if ((stat.valid & ZIP_STAT_ENCRYPTION_METHOD) && stat.encryption_method != ZIP_EM_NONE) {
      return malformed("zip entry '" + raw_name + "' is encrypted; upload it without a password");
    }

    // Folders on the way: none of them may be a file of the archive.
    std::string relative;
    fs::path target = root;
    for (size_t c = 0; c + 1 < components->size(); ++c) {
      relative += (relative.empty() ? "" : "/") + (*components)[c];
      target /= (*components)[c];
      if (files.contains(relative)) {
        return malformed("zip entry '" + raw_name + "' needs '" + relative +
                         "' to be a folder, but the archive holds a file of that name");
      }
      if (folders.insert(relative).second) {
        std::error_code error;
        fs::create_directory(target, error);
        if (error) return writeError("cannot create the folder " + target.string(), error.value(), true);
      }
    }
    relative += (relative.empty() ? "" : "/") + components->back();
    target /= components->back();
    if (is_folder) {
      if (files.contains(relative)) {
        return malformed("zip entry '" + raw_name + "' is a folder, but the archive also holds a file '" + relative +
                         "'");
      }
      if (folders.insert(relative).second) {
        std::error_code error;
        fs::create_directory(target, error);
        if (error) return writeError("cannot create the folder " + target.string(), error.value(), true);
      }
      continue;
    }
    if (folders.contains(relative)) {
      return malformed("zip entry '" + raw_name + "' is a file, but the archive also holds a folder '" + relative +
                       "'");
    }
    if (!files.insert(relative).second) {
      return malformed("the zip upload holds '" + relative + "' twice");
    }

    const uint64_t entry_compressed = (stat.valid & ZIP_STAT_COMP_SIZE) ? stat.comp_size : archive_size;
    const uint64_t entry_limit = allowedOutput(entry_compressed, limits);
    const std::string what = "zip entry '" + raw_name + "'";
    if ((stat.valid & ZIP_STAT_SIZE) && stat.size > limits.max_bytes) {
      return tooLarge(what + " declares " + std::to_string(stat.size) + " bytes, more than limits.max_upload_bytes (" +
                      std::to_string(limits.max_bytes) + " bytes)");
    }
    zip_file_t* file = zip_fopen_index(archive, index, 0);
    if (!file) return malformed("cannot read " + what + ": " + zip_strerror(archive));
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file_guard(file, zip_fclose);
    OutputFile out;
    RESTACK_RETURN_IF_ERROR(out.open(target.string(), /*name_from_upload=*/true));
    uint64_t written = 0;
    while (true) {
      zip_int64_t n = zip_fread(file, buffer.data(), buffer.size());
      if (n < 0) return malformed(what + " is corrupt: " + zip_file_strerror(file));
      if (n == 0) break;
      written += static_cast<uint64_t>(n);
      total += static_cast<uint64_t>(n);
      if (written > entry_limit) return limitError(what, entry_compressed, limits);
      if (total > total_limit) return limitError("the zip upload", archive_size, limits);
      RESTACK_RETURN_IF_ERROR(out.write(buffer.data(), static_cast<size_t>(n)));
    }
    RESTACK_RETURN_IF_ERROR(out.close());
  }
  return Status::ok();
}

}  // namespace restack

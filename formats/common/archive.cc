#include "formats/common/archive.h"

#include <zip.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
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

// Feeds chunks of decompressed output to `sink`; stops with an error past `limit`.
// Inflates gzip from memory (`more` empty) or from a reader (`more` fills a buffer, 0 at EOF),
// handing each decompressed chunk to `sink`. Concatenated gzip members are accepted.
template <typename Sink>
Status inflateGzip(std::string_view input, uint64_t limit, Sink&& sink,
                   const std::function<size_t(char*, size_t)>& more) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK) return Error(ErrorCode::kInternal, "zlib init failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&stream, inflateEnd);
  std::vector<char> in_buffer(1 << 16), out_buffer(1 << 16);
  if (!more) {
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    stream.avail_in = static_cast<uInt>(input.size());
  }
  uint64_t total = 0;
  bool member_ended = false;
  while (true) {
    if (stream.avail_in == 0) {
      if (!more) break;
      size_t n = more(in_buffer.data(), in_buffer.size());
      if (n == 0) break;
      stream.next_in = reinterpret_cast<Bytef*>(in_buffer.data());
      stream.avail_in = static_cast<uInt>(n);
    }
    if (member_ended) {
      inflateReset(&stream);
      member_ended = false;
    }
    stream.next_out = reinterpret_cast<Bytef*>(out_buffer.data());
    stream.avail_out = static_cast<uInt>(out_buffer.size());
    int result = inflate(&stream, Z_NO_FLUSH);
    if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) {
      return malformed(std::string("gzip data is corrupt: ") + (stream.msg ? stream.msg : "inflate failed"));
    }
    size_t produced = out_buffer.size() - stream.avail_out;
    total += produced;
    if (total > limit) {
      return tooLarge("decompressed upload exceeds the limit of " + std::to_string(limit) + " bytes");
    }
    RESTACK_RETURN_IF_ERROR(sink(out_buffer.data(), produced));
    if (result == Z_STREAM_END) member_ended = true;
  }
  if (!member_ended) return malformed("gzip data is truncated");
  return Status::ok();
}

template <typename Sink>
Status decompressZstd(std::string_view input, uint64_t limit, Sink&& sink,
                      const std::function<size_t(char*, size_t)>& more) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  std::vector<char> in_buffer(ZSTD_DStreamInSize()), out_buffer(ZSTD_DStreamOutSize());
  uint64_t total = 0;
  size_t last = 0;
  auto drain = [&](ZSTD_inBuffer& in) -> Status {
    while (in.pos < in.size) {
      ZSTD_outBuffer out{out_buffer.data(), out_buffer.size(), 0};
      last = ZSTD_decompressStream(context.get(), &out, &in);
      if (ZSTD_isError(last)) return malformed(std::string("zstd data is corrupt: ") + ZSTD_getErrorName(last));
      total += out.pos;
      if (total > limit)
        return tooLarge("decompressed upload exceeds the limit of " + std::to_string(limit) + " bytes");
      RESTACK_RETURN_IF_ERROR(sink(out_buffer.data(), out.pos));
    }
    return Status::ok();
  };
  if (!more) {
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    RESTACK_RETURN_IF_ERROR(drain(in));
  } else {
    while (size_t n = more(in_buffer.data(), in_buffer.size())) {
      ZSTD_inBuffer in{in_buffer.data(), n, 0};
      RESTACK_RETURN_IF_ERROR(drain(in));
    }
  }
  if (last != 0) return malformed("zstd data is truncated");
  return Status::ok();
}

}  // namespace

Expected<std::string> decompressBuffer(std::string_view bytes, Compression compression, uint64_t limit) {
  std::string out;
  auto sink = [&](const char* data, size_t size) -> Status {
    out.append(data, size);
    return Status::ok();
  };
  Status status;
  if (compression == Compression::kGzip)
    status = inflateGzip(bytes, limit, sink, {});
  else if (compression == Compression::kZstd)
    status = decompressZstd(bytes, limit, sink, {});
  else
    return invalidArgument(std::string("decompressBuffer cannot handle ") + compressionName(compression));
  if (!status) return status.error();
  return out;
}

Status decompressFile(const std::string& input_path, Compression compression, const std::string& output_path,
                      uint64_t limit) {
  std::ifstream in(input_path, std::ios::binary);
  if (!in) return ioError("cannot open " + input_path);
  std::ofstream out(output_path, std::ios::binary | std::ios::trunc);
  if (!out) return ioError("cannot create " + output_path);
  auto more = [&](char* buffer, size_t size) -> size_t {
    in.read(buffer, static_cast<std::streamsize>(size));
    return static_cast<size_t>(in.gcount());
  };
  auto sink = [&](const char* data, size_t size) -> Status {
    out.write(data, static_cast<std::streamsize>(size));
    if (!out) return ioError("cannot write " + output_path);
    return Status::ok();
  };
  Status status;
  if (compression == Compression::kGzip)
    status = inflateGzip({}, limit, sink, more);
  else if (compression == Compression::kZstd)
    status = decompressZstd({}, limit, sink, more);
  else
    return invalidArgument(std::string("decompressFile cannot handle ") + compressionName(compression));
  if (!status) return status;
  out.close();
  if (!out) return ioError("cannot write " + output_path);
  return Status::ok();
}

Status extractZip(const std::string& zip_path, std::string_view zip_bytes, const std::string& directory,
                  uint64_t limit) {
  zip_error_t error;
  zip_error_init(&error);
  zip_t* archive = nullptr;
  if (!zip_path.empty()) {
    int code = 0;
    archive = zip_open(zip_path.c_str(), ZIP_RDONLY, &code);
    if (!archive) {
      zip_error_init_with_code(&error, code);
      std::string message = "cannot open zip " + zip_path + ": " + zip_error_strerror(&error);
      zip_error_fini(&error);
      return malformed(message);
    }
  } else {
    zip_source_t* source = zip_source_buffer_create(zip_bytes.data(), zip_bytes.size(), 0, &error);
    if (source) archive = zip_open_from_source(source, ZIP_RDONLY, &error);
    if (!archive) {
      std::string message = std::string("cannot read zip upload: ") + zip_error_strerror(&error);
      if (source) zip_source_free(source);
      zip_error_fini(&error);
      return malformed(message);
    }
  }
  zip_error_fini(&error);
  std::unique_ptr<zip_t, void (*)(zip_t*)> guard(archive, [](zip_t* z) { zip_discard(z); });

  const fs::path root = fs::weakly_canonical(fs::path(directory));
  uint64_t total = 0;
  zip_int64_t entries = zip_get_num_entries(archive, 0);
  std::vector<char> buffer(1 << 16);
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* name = zip_get_name(archive, static_cast<zip_uint64_t>(i), 0);
    if (!name) return malformed("zip entry " + std::to_string(i) + " has no name");
    std::string entry_name(name);
    if (entry_name.starts_with("__MACOSX/")) continue;  // Finder's resource-fork shadows
    fs::path target = (root / entry_name).lexically_normal();
    auto [root_end, unused] = std::mismatch(root.begin(), root.end(), target.begin());
    (void)unused;
    if (entry_name.empty() || entry_name.front() == '/' || root_end != root.end()) {
      return malformed("zip entry '" + entry_name + "' would be written outside the upload folder");
    }
    if (entry_name.back() == '/') {
      fs::create_directories(target);
      continue;
    }
    fs::create_directories(target.parent_path());
    zip_file_t* file = zip_fopen_index(archive, static_cast<zip_uint64_t>(i), 0);
    if (!file) return malformed("cannot read zip entry '" + entry_name + "': " + zip_strerror(archive));
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file_guard(file, zip_fclose);
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    if (!out) return ioError("cannot create " + target.string());
    while (true) {
      zip_int64_t n = zip_fread(file, buffer.data(), buffer.size());
      if (n < 0) return malformed("zip entry '" + entry_name + "' is corrupt");
      if (n == 0) break;
      total += static_cast<uint64_t>(n);
      if (total > limit) return tooLarge("unzipped upload exceeds the limit of " + std::to_string(limit) + " bytes");
      out.write(buffer.data(), n);
    }
    if (!out) return ioError("cannot write " + target.string());
  }
  return Status::ok();
}

}  // namespace restack

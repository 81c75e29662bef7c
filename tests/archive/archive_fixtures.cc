#include "tests/archive/archive_fixtures.h"

#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <memory>
#include <stdexcept>

namespace restack::archive_test {
namespace {

constexpr size_t kChunk = 1 << 20;

// Deflates `size` bytes from `next` (which fills a buffer) with zlib framing `window_bits`
// (31: gzip, -15: raw deflate for zip).
// Runs of zeros use Z_RLE: as small as deflate gets (about 1/1000) and many times faster.
template <typename Next>
std::string deflateStream(uint64_t size, int window_bits, int strategy, Next&& next) {
  z_stream stream{};
  if (deflateInit2(&stream, 9, Z_DEFLATED, window_bits, 9, strategy) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out;
  std::string in(kChunk, '\0');
  std::string buffer(kChunk, '\0');
  uint64_t left = size;
  do {
    size_t n = static_cast<size_t>(std::min<uint64_t>(left, kChunk));
    next(in.data(), n);
    left -= n;
    stream.next_in = reinterpret_cast<Bytef*>(in.data());
    stream.avail_in = static_cast<uInt>(n);
    const int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    int result;
    do {
      stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
      stream.avail_out = static_cast<uInt>(buffer.size());
      result = deflate(&stream, flush);
      out.append(buffer.data(), buffer.size() - stream.avail_out);
    } while (stream.avail_out == 0 || (flush == Z_FINISH && result != Z_STREAM_END));
  } while (left > 0);
  deflateEnd(&stream);
  return out;
}

template <typename Next>
std::string zstdStream(uint64_t size, Next&& next) {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, 3);
  std::string out;
  std::string in(kChunk, '\0');
  std::string buffer(ZSTD_CStreamOutSize(), '\0');
  uint64_t left = size;
  do {
    size_t n = static_cast<size_t>(std::min<uint64_t>(left, kChunk));
    next(in.data(), n);
    left -= n;
    ZSTD_inBuffer input{in.data(), n, 0};
    const ZSTD_EndDirective mode = left == 0 ? ZSTD_e_end : ZSTD_e_continue;
    size_t remaining;
    do {
      ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
      remaining = ZSTD_compressStream2(context.get(), &output, &input, mode);
      if (ZSTD_isError(remaining)) throw std::runtime_error(ZSTD_getErrorName(remaining));
      out.append(buffer.data(), output.pos);
    } while (mode == ZSTD_e_end ? remaining != 0 : input.pos < input.size);
  } while (left > 0);
  return out;
}

auto copier(std::string_view data) {
  return [data](char* buffer, size_t n) mutable {
    data.copy(buffer, n);
    data.remove_prefix(n);
  };
}
auto zeros() {
  return [](char*, size_t) {};  // the buffer is zero-filled and never written
}

void put16(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>((v >> 8) & 0xff));
}
void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

}  // namespace

std::string gzipOf(std::string_view data) {
  return deflateStream(data.size(), 31, Z_DEFAULT_STRATEGY, copier(data));
}
std::string zstdOf(std::string_view data) {
  return zstdStream(data.size(), copier(data));
}
std::string gzipOfZeros(uint64_t size) {
  return deflateStream(size, 31, Z_RLE, zeros());
}
std::string zstdOfZeros(uint64_t size) {
  return zstdStream(size, zeros());
}

ZipEntry storedEntry(std::string name, std::string_view data) {
  ZipEntry entry;
  entry.name = std::move(name);
  entry.data = std::string(data);
  entry.crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
  entry.uncompressed_size = static_cast<uint32_t>(data.size());
  entry.external_attributes = 0100644u << 16;
  return entry;
}

ZipEntry deflatedEntry(std::string name, std::string_view data) {
  ZipEntry entry = storedEntry(std::move(name), data);
  entry.data = deflateStream(data.size(), -15, Z_DEFAULT_STRATEGY, copier(data));
  entry.method = 8;
  return entry;
}

ZipEntry zerosEntry(std::string name, uint64_t size) {
  ZipEntry entry;
  entry.name = std::move(name);
  entry.data = deflateStream(size, -15, Z_RLE, zeros());
  entry.method = 8;
  // crc32 of `size` zeros by doubling: crc(a + b) = crc32_combine(crc(a), crc(b), len(b)).
  const std::string one(1, '\0');
  uLong crc_one = crc32(0, reinterpret_cast<const Bytef*>(one.data()), 1);
  uLong crc = 0, piece = crc_one;
  uint64_t piece_size = 1;
  for (uint64_t left = size; left; left >>= 1) {
    if (left & 1) crc = crc32_combine(crc, piece, static_cast<z_off_t>(piece_size));
    piece = crc32_combine(piece, piece, static_cast<z_off_t>(piece_size));
    piece_size *= 2;
  }
  entry.crc = static_cast<uint32_t>(crc);
  entry.uncompressed_size = static_cast<uint32_t>(size);
  entry.external_attributes = 0100644u << 16;
  return entry;
}

ZipEntry symlinkEntry(std::string name, std::string_view target) {
  ZipEntry entry = storedEntry(std::move(name), target);
  entry.external_attributes = 0120777u << 16;
  return entry;
}

std::string makeZip(const std::vector<ZipEntry>& entries) {
  std::string local, central;
  for (const ZipEntry& e : entries) {
    const auto offset = static_cast<uint32_t>(local.size());
    put32(local, 0x04034b50);
    put16(local, 20);
    put16(local, e.flags);
    put16(local, e.method);
    put16(local, 0);
    put16(local, 0x21);
    put32(local, e.crc);
    put32(local, static_cast<uint32_t>(e.data.size()));
    put32(local, e.uncompressed_size);
    put16(local, static_cast<uint32_t>(e.name.size()));
    put16(local, 0);
    local += e.name;
    local += e.data;

    put32(central, 0x02014b50);
    put16(central, (static_cast<uint32_t>(e.made_by_system) << 8) | 20);
    put16(central, 20);
    put16(central, e.flags);
    put16(central, e.method);
    put16(central, 0);
    put16(central, 0x21);
    put32(central, e.crc);
    put32(central, static_cast<uint32_t>(e.data.size()));
    put32(central, e.uncompressed_size);
    put16(central, static_cast<uint32_t>(e.name.size()));
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, e.external_attributes);
    put32(central, offset);
    central += e.name;
  }
  std::string end;
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, static_cast<uint32_t>(entries.size()));
  put16(end, static_cast<uint32_t>(entries.size()));
  put32(end, static_cast<uint32_t>(central.size()));
  put32(end, static_cast<uint32_t>(local.size()));
  put16(end, 0);
  return local + central + end;
}

uint64_t peakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6));
  }
  return 0;
}

bool resetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.close();
  return static_cast<bool>(clear);
}

}  // namespace restack::archive_test

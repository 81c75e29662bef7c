// Compressed inputs made at test time: gzip/zstd streams of data or of long runs of zeros
// (bombs, produced chunk by chunk so that the big input never exists in memory) and zip
// archives assembled byte by byte, so that tests can hold what no zip tool would write
// ("a" then "a/b", "../x", symbolic links, NUL in names, encryption flags).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace restack::archive_test {

std::string gzipOf(std::string_view data);
std::string zstdOf(std::string_view data);
// `size` zero bytes, compressed 1 MiB at a time.
std::string gzipOfZeros(uint64_t size);
std::string zstdOfZeros(uint64_t size);

struct ZipEntry {
  std::string name;
  std::string data;  // as stored: raw deflate when method is 8
  uint16_t method = 0;
  uint32_t crc = 0;
  uint32_t uncompressed_size = 0;
  uint16_t flags = 0;  // general purpose flags; bit 0 = encrypted
  uint32_t external_attributes = 0;
  uint8_t made_by_system = 3;  // 3 = UNIX: external_attributes >> 16 is st_mode
};
ZipEntry storedEntry(std::string name, std::string_view data);
ZipEntry deflatedEntry(std::string name, std::string_view data);
// A deflated entry of `size` zero bytes (size < 4 GiB).
ZipEntry zerosEntry(std::string name, uint64_t size);
ZipEntry symlinkEntry(std::string name, std::string_view target);
std::string makeZip(const std::vector<ZipEntry>& entries);

// Peak resident memory of this process in KiB (VmHWM), and its reset (clear_refs 5) so that a
// test can measure the peak of one step.
uint64_t peakRssKib();
bool resetPeakRss();

}  // namespace restack::archive_test

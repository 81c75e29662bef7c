// Unpacking of uploaded symbol files: gzip, zstd and zip (DESIGN.md §4).
//
// Compression is recognised by magic bytes, never by file name:
//   1f 8b            gzip
//   28 b5 2f fd      zstd
//   50 4b 03 04      zip (a zipped .dSYM bundle, or a zipped single file)
// Every routine takes a size limit: a 10 KB zip bomb must not fill the disk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/common/status.h"

namespace restack {

enum class Compression { kNone, kGzip, kZstd, kZip };
Compression detectCompression(std::string_view first_bytes);
const char* compressionName(Compression compression);

// Decompresses a gzip or zstd buffer into memory; fails when the output would exceed `limit`.
Expected<std::string> decompressBuffer(std::string_view bytes, Compression compression, uint64_t limit);

// Decompresses a gzip or zstd file into `output_path`, streaming; fails past `limit` bytes.
Status decompressFile(const std::string& input_path, Compression compression, const std::string& output_path,
                      uint64_t limit);

// Extracts a zip archive (file or in-memory) into `directory`. Entry names that would escape the
// directory ("../x", absolute paths) are rejected. Fails when the total exceeds `limit` bytes.
Status extractZip(const std::string& zip_path, std::string_view zip_bytes, const std::string& directory,
                  uint64_t limit);

}  // namespace restack

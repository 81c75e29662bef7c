// Unpacking of uploaded symbol files: gzip, zstd and zip (docs/design.md §4).
//
// Compression is recognised by magic bytes, never by file name:
//   1f 8b            gzip
//   28 b5 2f fd      zstd
//   50 4b 03 04      zip (a zipped .dSYM bundle, or a zipped single file)
//
// Uploads are untrusted. Unpacking always streams into files (64 KiB buffers; a zstd window of
// at most 128 MiB), so memory stays bounded whatever the input claims, and every routine is
// bounded on disk by UnpackLimits: a 10 KB bomb must not fill the scratch volume either.
// Nothing here throws; every problem with the input is an error value naming what is wrong and
// which limit (with its configuration key) was hit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/common/status.h"

namespace restack {

enum class Compression { kNone, kGzip, kZstd, kZip };
Compression detectCompression(std::string_view first_bytes);
const char* compressionName(Compression compression);

// Outputs up to this size are never refused for their ratio: a 2 KiB gzip of a 600 KiB text
// file is legitimate, and refusing it buys no safety.
inline constexpr uint64_t kRatioAllowanceBytes = 1 << 20;
// zstd frames needing a larger window than 2^27 bytes (128 MiB: `zstd --long=28` and up) are
// refused: the window is memory the decoder must hold.
inline constexpr int kMaxZstdWindowLog = 27;

struct UnpackLimits {
  // Most bytes the decompressed output may hold, all zip entries together
  // (limits.max_upload_bytes).
  uint64_t max_bytes = 8ull << 30;
  // Most decompressed bytes per compressed byte (limits.max_decompression_ratio), checked for a
  // gzip or zstd stream against its size, for a zip as a whole against the archive's size and
  // for each zip entry against its compressed size. 0 turns the check off.
  uint64_t max_ratio = 200;
  // Most entries a zip may list, folders and skipped __MACOSX/ entries included. A .dSYM bundle
  // holds a handful; 10,000 already takes a few seconds of bookkeeping.
  uint64_t max_zip_entries = 10000;
};

// Compressed input: a file (`path` not empty) or bytes in memory (a Kafka message value).
struct PackedInput {
  std::string path;
  std::string_view bytes;
};

// Decompresses gzip (concatenated members accepted) or zstd into the new file `output_path`,
// streaming. Errors: kMalformedInput (corrupt or truncated stream), kTooLarge (a limit),
// kIo (reading the input or writing the output failed).
Status decompressToFile(const PackedInput& input, Compression compression, const std::string& output_path,
                        const UnpackLimits& limits);

// Extracts a zip archive into the existing folder `directory`. Entries under __MACOSX/ (Finder's
// resource-fork shadows) are skipped. Refused with kMalformedInput: entries whose name is empty,
// holds a NUL, is absolute or climbs out with "..", duplicate names, a name that is both a file
// and a folder ("a" then "a/b", or "a/b" then "a"), symbolic links, encrypted entries, more than
// limits.max_zip_entries entries, corrupt data. kTooLarge: the size or ratio limits.
Status extractZip(const PackedInput& input, const std::string& directory, const UnpackLimits& limits);

}  // namespace restack

// A symbol upload on restack.symbols / restack.symbols.shared (docs/design.md §4).
//
// The message value is the file itself (optionally gzip/zstd/zip compressed) or empty when the
// file is referenced by a location; the metadata travels in headers so that binary content needs
// no base64:
//
//   header                 example                          meaning
//   restack.kind           proguard                         dsym | macho | elf | proguard | sourcemap
//                                                           (absent: detected from the content)
//   restack.app            shop                             absent: the part of the key before ':'
//   restack.build_id       7.8.0(78007)                     absent: the part of the key after ':'
//   restack.name           main.3f9a1c2b.js                 source maps: the minified file served
//   restack.file_name      main.3f9a1c2b.js.map             the uploaded file's own name
//   restack.location       file:///uploads/App.dSYM.zip     content is there, not in the value
//                          https://bucket.s3…/x?X-Amz-…     (presigned URL)
//
// Key: "<app>:<build_id>" on restack.symbols (murmur2-partitioned like the events), the debug id
// on restack.symbols.shared.
//
// Messages are untrusted: decodeUploadMessage refuses (kMalformedInput, naming the header) a
// restack.* value or a key over its size cap below, a NUL byte in any of them (store keys use
// NUL as a separator), an unknown kind, and a restack.* header given twice with different
// values. Headers outside restack.* are ignored, whatever their size.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "formats/common/status.h"
#include "symbolstore/ingest.h"

namespace restack::worker {

// Largest restack.kind/app/build_id/name/file_name value, and the largest key, in bytes.
inline constexpr size_t kMaxUploadHeaderBytes = 1024;
// Largest restack.location value: presigned URLs run to 1-2 KB.
inline constexpr size_t kMaxUploadLocationBytes = 8192;

using Headers = std::vector<std::pair<std::string, std::string>>;

struct UploadMessage {
  UploadMeta meta;
  std::string file_name;
  std::string location;  // empty: the content is the message value
};

Headers encodeUploadHeaders(const UploadMessage& upload);
Expected<UploadMessage> decodeUploadMessage(std::string_view key, const Headers& headers, bool shared);

// The ingest bounds configured under limits.* (max_upload_bytes, max_decompression_ratio,
// max_sourcemap_bytes).
IngestOptions ingestOptionsFrom(const config::Config& config);

}  // namespace restack::worker

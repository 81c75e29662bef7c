// A symbol upload on restack.symbols / restack.symbols.shared (DESIGN.md §4).
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
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/ingest.h"

namespace restack::worker {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct UploadMessage {
  UploadMeta meta;
  std::string file_name;
  std::string location;  // empty: the content is the message value
};

Headers encodeUploadHeaders(const UploadMessage& upload);
Expected<UploadMessage> decodeUploadMessage(std::string_view key, const Headers& headers, bool shared);

}  // namespace restack::worker

// Brings the content of an upload that is referenced by location onto local disk:
// "file:///path" (read in place, must lie under `upload_root` when one is configured) or
// "http(s)://…" (downloaded with libcurl into a temporary folder, size-bounded).
#pragma once

#include <optional>
#include <string>

#include "formats/common/status.h"
#include "formats/common/temp_dir.h"

namespace restack::worker {

struct FetchedUpload {
  std::string path;               // a local file or .dSYM folder to ingest
  std::optional<TempDir> holder;  // owns the download, if one was made
};

Expected<FetchedUpload> fetchUpload(const std::string& location, const std::string& upload_root, uint64_t max_bytes);

}  // namespace restack::worker

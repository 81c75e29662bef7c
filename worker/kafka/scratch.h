// The worker's scratch folder: where it writes upload downloads and unpacks compressed uploads.
//
// A worker killed in the middle of a download or an unpack (SIGKILL, the OOM killer, a liveness
// probe) cannot remove what it wrote, and each restart would leave another partial file behind in
// TMPDIR: in the Helm chart an emptyDir that outlives container restarts, so a crash loop fills it
// until the pod is evicted. So every temporary file of `restack run` goes under one folder per
// store, and the worker empties it when it starts, once it holds its store: RocksDB's lock on the
// store means no other worker uses the same folder.
#pragma once

#include <string>

#include "config/config.h"
#include "formats/common/status.h"

namespace restack::worker {

// "<TMPDIR>/restack-scratch-<16 hex digits>", the digits a hash of the store's path made
// absolute: the same folder for every start of the worker on that store.
std::string scratchDirFor(const config::Config& config);

// Removes everything in `dir` and creates it (its parents too). Returns how many entries it
// removed, or why it could not.
Expected<uint64_t> resetScratchDir(const std::string& dir);

}  // namespace restack::worker

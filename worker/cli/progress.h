// Progress lines on stderr for long work (ingest of large symbol files), at most one per second.
#pragma once

#include <chrono>
#include <string>

#include "symbolstore/ingest.h"

namespace restack::cli {

IngestProgress stderrProgress(const std::string& label);

}  // namespace restack::cli

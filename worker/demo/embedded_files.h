// The demo's sample symbol files and events, compiled into the binary so that `restack demo`
// needs nothing on disk (see worker/demo/samples/README.md for how they were made).
#pragma once

#include <string_view>
#include <vector>

namespace restack::demo {

struct EmbeddedFile {
  std::string_view name;  // path relative to worker/demo/samples
  std::string_view bytes;
};

extern const std::vector<EmbeddedFile> kEmbeddedFiles;

}  // namespace restack::demo

#include "symbolstore/frame_lookup.h"

namespace restack {

const char* frameStatusName(FrameStatus status) {
  switch (status) {
    case FrameStatus::kSymbolicated:
      return "symbolicated";
    case FrameStatus::kMissingSymbols:
      return "missing_symbols";
    case FrameStatus::kNotFound:
      return "not_found";
    case FrameStatus::kUnparsed:
      return "unparsed";
  }
  return "unparsed";
}

}  // namespace restack

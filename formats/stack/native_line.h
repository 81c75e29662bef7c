// Address-mapped frame lines, the "native" syntax: iOS images (SDK form and Apple crash reports)
// and Android native frames (SDK form and tombstones). Examples in stack_line.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "formats/stack/stack_line.h"

namespace restack::stack {

struct NativeFrameLine {
  std::optional<uint32_t> frame_index;  // "#03" or Apple's leading frame number
  std::string module;                   // image or library name (basename for paths)
  std::string module_path;              // as printed, when a path was given
  std::string debug_id;                 // lowercase hex without dashes; empty when not printed
  std::string abi;                      // Android ABI ("arm64-v8a") when printed
  uint64_t address = 0;                 // address relative to the image: iOS offset, Android pc
  std::optional<uint64_t> runtime_address;
  std::optional<uint64_t> load_address;
  // The symbol the device already printed: a tombstone's "(abort+164)", or what follows the
  // offset and id of an iOS line ("__pthread_kill + 8", kept there by Apple report readers).
  std::string symbol_hint;
};

extern const LineSyntaxOf<NativeFrameLine> kNativeLine;

inline const NativeFrameLine* asNative(const StackLine& line) {
  return kNativeLine.payloadOf(line);
}

}  // namespace restack::stack

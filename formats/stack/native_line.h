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
  uint64_t runtime_address = 0;         // iOS: the printed runtime address; 0 when not printed
  uint64_t load_address = 0;            // iOS: the image's load address; 0 when not printed
  // The address of a caller frame already points into its call instruction: Android's unwinder
  // (libunwindstack, which prints debuggerd's tombstones, ANR dumps' "native:" frames and
  // logcat's crash dumps as "#01 pc 000000000001a2b4  <path>") subtracts the instruction's size
  // from every return address but the crashing frame's (4 on arm64, 2 or 4 on arm, 1 on x86).
  // Other forms print return addresses, which are looked up one byte back.
  bool call_site_pc = false;
  // The line gives the runtime address but neither the image's load address nor the offset in it:
  // a device-symbolicated Apple line sent without the report's binary images
  // ("UIKitCore 0x00000001a2b3c4d5 -[UIApplication _run] + 888"). `address` is then unknown (0);
  // the load address of another frame of the same image gives it (worker/pipeline/kinds).
  bool image_offset_unknown = false;
  // The symbol the device already printed: a tombstone's "(abort+164)", or what follows the
  // offset and id of an iOS line ("__pthread_kill + 8", kept there by Apple report readers).
  std::string symbol_hint;
};

extern const LineSyntaxOf<NativeFrameLine> kNativeLine;

inline const NativeFrameLine* asNative(const StackLine& line) {
  return kNativeLine.payloadOf(line);
}

}  // namespace restack::stack

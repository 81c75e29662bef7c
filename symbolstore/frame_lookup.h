// What one raw frame restored to. Every resolver (native, proguard, sourcemap) answers with a
// `FrameLookup`; the worker turns it into the output frames of DESIGN.md §5.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace restack {

enum class FrameStatus {
  kSymbolicated,    // restored
  kMissingSymbols,  // the symbol file this frame needs was never uploaded (see missing_id)
  kNotFound,        // symbols exist but do not cover this frame (address outside every range…)
  kUnparsed,        // the raw line was not recognised as a frame
};

const char* frameStatusName(FrameStatus status);

struct SymbolizedFrame {
  std::string function;   // demangled / deobfuscated / original name; may be empty
  std::string file;       // source file; may be empty
  uint32_t line = 0;      // 0 = unknown
  uint32_t column = 0;    // 0 = unknown
  bool inlined = false;   // this frame was inlined into the next (outer) one
  std::string module;     // image / library / class file / bundle the frame belongs to
  std::optional<bool> in_app;
  uint64_t symbol_offset = 0;  // symbol-table tier: offset of the address from the symbol start
  std::vector<std::string> context_lines;  // source lines around `line` (sourcesContent), if any
  uint32_t context_first_line = 0;         // line number of context_lines[0]
};

struct FrameLookup {
  FrameStatus status = FrameStatus::kNotFound;
  // Innermost first: a raw frame that inlined calls restores to several frames.
  std::vector<SymbolizedFrame> frames;
  // When the symbol data cannot tell between several answers (ProGuard ambiguity), every other
  // candidate is kept here; `frames` holds the first candidate.
  std::vector<std::vector<SymbolizedFrame>> alternatives;
  // Which data answered: "dwarf", "symtab", "objc", "mapping", "sourcemap", "function_map", …
  std::string tier;
  // For kMissingSymbols: the debug id / mapping id / file name that had no symbols.
  std::string missing_id;
  // Anything a reader of the output should know (e.g. "swift name left mangled").
  std::string note;
  // The frame is dropped from the restored output on purpose (R8 synthesized / outline frames).
  bool removed = false;

  static FrameLookup missing(std::string id) {
    FrameLookup lookup;
    lookup.status = FrameStatus::kMissingSymbols;
    lookup.missing_id = std::move(id);
    return lookup;
  }
  static FrameLookup notFound(std::string note = {}) {
    FrameLookup lookup;
    lookup.status = FrameStatus::kNotFound;
    lookup.note = std::move(note);
    return lookup;
  }
};

// Whose symbols a lookup should use: the event's app and build (DESIGN.md §3).
struct EventScope {
  std::string app;
  std::string build_id;
  std::string platform;  // ios | android | web | react_native
  std::string proguard_map_id;  // R8 pg_map_id named by the event, if any
};

}  // namespace restack

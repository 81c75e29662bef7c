// What one raw frame restored to. Every resolver (native, proguard, sourcemap) answers with a
// `FrameLookup`; the worker turns it into the output frames of docs/design.md §5.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace restack {

enum class FrameStatus {
  kSymbolicated,    // restored
  kMissingSymbols,  // the symbol file this frame needs was never uploaded (see missing_id)
  kNotFound,        // symbols exist but do not cover this frame (address outside every range…)
  kUnparsed,        // the raw line was not recognised as a frame
};

const char* frameStatusName(FrameStatus status);

// Source lines around a frame's line. Resolvers hand out slices of line blocks they keep cached,
// so every answer that shows the same lines shares one copy instead of copying strings; `owner`
// keeps the blocks alive. Reads like a const std::vector<std::string> (empty, size, [], at,
// range-for). A slice may run over the end of one block into the start of the next (`tail`),
// since cached blocks hold a fixed number of lines.
class ContextLines {
 public:
  ContextLines() = default;
  // Lines [first, first + count) of `head`, then lines [0, tail_count) of `tail`; `owner` keeps
  // both alive.
  ContextLines(std::shared_ptr<const void> owner, const std::vector<std::string>* head, uint32_t first, uint32_t count,
               const std::vector<std::string>* tail = nullptr, uint32_t tail_count = 0)
      : owner_(std::move(owner)), head_(head), tail_(tail), first_(first), count_(count), tail_count_(tail_count) {}
  // Lines owned by this slice alone.
  explicit ContextLines(std::vector<std::string> lines) {
    auto owned = std::make_shared<const std::vector<std::string>>(std::move(lines));
    head_ = owned.get();
    count_ = static_cast<uint32_t>(owned->size());
    owner_ = std::move(owned);
  }

  bool empty() const { return size() == 0; }
  size_t size() const { return static_cast<size_t>(count_) + tail_count_; }
  const std::string& operator[](size_t index) const {
    return index < count_ ? (*head_)[first_ + index] : (*tail_)[index - count_];
  }
  const std::string& at(size_t index) const {
    if (index >= size()) throw std::out_of_range("ContextLines::at");
    return (*this)[index];
  }

  class Iterator {
   public:
    Iterator(const ContextLines* lines, size_t index) : lines_(lines), index_(index) {}
    const std::string& operator*() const { return (*lines_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    const ContextLines* lines_;
    size_t index_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size()); }

 private:
  std::shared_ptr<const void> owner_;
  const std::vector<std::string>* head_ = nullptr;
  const std::vector<std::string>* tail_ = nullptr;
  uint32_t first_ = 0, count_ = 0, tail_count_ = 0;
};

struct SymbolizedFrame {
  std::string function;  // demangled / deobfuscated / original name; may be empty
  std::string file;      // source file; may be empty
  uint32_t line = 0;     // 0 = unknown
  uint32_t column = 0;   // 0 = unknown
  bool inlined = false;  // this frame was inlined into the next (outer) one
  std::string module;    // image / library / class file / bundle the frame belongs to
  std::optional<bool> in_app;
  uint64_t symbol_offset = 0;  // symbol-table tier: offset of the address from the symbol start
  // Native: the compiler clone the address lies in, as the symbol table's suffix to `function`
  // without its leading dot ("isra.0", "constprop.1.isra.0", "part.0", "cold", "lto_priv.0").
  // `function` stays the source function's name, as llvm-symbolizer prints it with the debug file.
  std::string clone;
  // Native: the function the frame's code is defined in, when `function` does not say it (GCC's
  // DWARF names a lambda's call operator bare, "operator()", as llvm-symbolizer prints it; the
  // scope is the enclosing function from DWARF's scopes, "shop::Cart::total(char const*)").
  std::string scope;
  ContextLines context_lines;       // source lines around `line` (sourcesContent), if any
  uint32_t context_first_line = 0;  // line number of context_lines[0]
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

// The symbol files an event names itself for the frames of a stack kind, keyed by the kind's
// name (worker/pipeline/stack_kind.h): R8's pg_map_id under "java". At most one id per kind.
class ScopeSymbolIds {
 public:
  // The id named for `kind`, "" when none.
  const std::string& get(std::string_view kind) const {
    static const std::string kNone;
    for (const auto& [name, id] : entries_) {
      if (name == kind) return id;
    }
    return kNone;
  }
  // Sets the id for `kind`; a later one replaces an earlier one.
  void set(std::string_view kind, std::string id) {
    for (auto& [name, existing] : entries_) {
      if (name == kind) {
        existing = std::move(id);
        return;
      }
    }
    entries_.emplace_back(std::string(kind), std::move(id));
  }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

// Whose symbols a lookup should use: the event's app and build (docs/design.md §3), and the
// symbol files the event names itself.
struct EventScope {
  std::string app;
  std::string build_id;
  std::string platform;  // ios | android | web | react_native
  ScopeSymbolIds symbol_ids;
};

}  // namespace restack

#include "formats/native/dwarf_walker.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/DebugInfo/DIContext.h>
#include <llvm/DebugInfo/DWARF/DWARFCompileUnit.h>
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugLine.h>
#include <llvm/DebugInfo/DWARF/DWARFDie.h>
#include <llvm/DebugInfo/DWARF/DWARFUnit.h>
#include <llvm/Object/ObjectFile.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "formats/common/mapped_file.h"
#include "formats/native/dwarf_preflight.h"

namespace restack::native {

// DWARFUnit::clearDIEs is private in LLVM 19, yet dropping a finished unit's DIE array is what
// keeps a 1 GB dSYM from needing gigabytes (DWARFContext otherwise keeps every unit parsed).
// An explicit instantiation may name a private member ([temp.spec.general]/6); the friend
// defined by that instantiation is the only code that calls it.
void clearUnitDies(llvm::DWARFUnit& unit, bool keep_unit_die);
template <void (llvm::DWARFUnit::*Clear)(bool)>
struct DwarfUnitClearAccess {
  friend void clearUnitDies(llvm::DWARFUnit& unit, bool keep_unit_die) { (unit.*Clear)(keep_unit_die); }
};
template struct DwarfUnitClearAccess<&llvm::DWARFUnit::clearDIEs>;

// The unit's DIE array (private too): the walk lends each unit a vector whose capacity outlives
// the unit (WalkScratch::dies), so that LLVM's extraction appends into memory already faulted in
// instead of growing a fresh vector per unit. Fresh ones were the largest item of the profile on
// the large-DWARF input of loadtest/native/build_bigdwarf.sh (about 15% of all samples on a
// 189 MB-DWARF part of it: the kernel zeroing new pages): jemalloc hands allocations above
// 8 MiB back to the kernel at once, and every unit's array (reserved at 1/14 of the unit's
// bytes, then doubled) came back as new pages.
std::vector<llvm::DWARFDebugInfoEntry>& unitDieArray(llvm::DWARFUnit& unit);
template <std::vector<llvm::DWARFDebugInfoEntry> llvm::DWARFUnit::* Dies>
struct DwarfUnitDiesAccess {
  friend std::vector<llvm::DWARFDebugInfoEntry>& unitDieArray(llvm::DWARFUnit& unit) { return unit.*Dies; }
};
template struct DwarfUnitDiesAccess<&llvm::DWARFUnit::DieArray>;

// A context's handlers for what LLVM reports while reading (private too, and set only at creation).
// The split-DWARF package's context is created inside DWARFContext::getDWOContext with LLVM's
// default handlers, which print to standard error: a damaged package's reports went to the
// worker's stderr instead of the upload's warnings. The walk points them at its warning list.
using DwarfHandler = std::function<void(llvm::Error)>;
DwarfHandler& recoverableErrorHandler(llvm::DWARFContext& context);
DwarfHandler& warningHandler(llvm::DWARFContext& context);
template <DwarfHandler llvm::DWARFContext::* Recoverable, DwarfHandler llvm::DWARFContext::* Warning>
struct DwarfContextHandlerAccess {
  friend DwarfHandler& recoverableErrorHandler(llvm::DWARFContext& context) { return context.*Recoverable; }
  friend DwarfHandler& warningHandler(llvm::DWARFContext& context) { return context.*Warning; }
};
template struct DwarfContextHandlerAccess<&llvm::DWARFContext::RecoverableErrorHandler,
                                          &llvm::DWARFContext::WarningHandler>;

namespace {

using llvm::DWARFDie;
using llvm::DWARFUnit;

constexpr uint32_t kNoDie = std::numeric_limits<uint32_t>::max();
constexpr size_t kMaxWarnings = 20;

struct Painted {
  uint64_t end;
  uint32_t die;  // index of the subroutine DIE in the unit
};

// LLVM's DWARFUnit::updateAddressDieMap, applied to one range: the new range overrides what it
// covers, splitting the range it starts in (children come after parents in DIE order).
// One search of the map per range: the range it starts in is updated through its iterator and
// the new entry inserted with the position found as hint (same result as looking each key up).
void paint(std::map<uint64_t, Painted>& map, uint64_t low, uint64_t high, uint32_t die) {
  auto after = map.upper_bound(low);  // the first entry starting above `low`
  if (after != map.begin()) {
    auto at = std::prev(after);  // the entry `low` falls in or follows
    if (low < at->second.end) {
      if (high < at->second.end) map.insert_or_assign(after, high, at->second);
      if (low > at->first) at->second.end = low;
    }
    if (at->first == low) {
      at->second = Painted{high, die};
      return;
    }
  }
  map.emplace_hint(after, low, Painted{high, die});
}

// Per-thread memory reused from one unit to the next (cleared, capacity kept): the DIE array lent
// to LLVM and the walker's per-DIE arrays. Bounded by the largest unit a thread walked.
struct WalkScratch {
  std::vector<llvm::DWARFDebugInfoEntry> dies;
  std::vector<uint8_t> kind;
  std::vector<uint32_t> enclosing;
  std::vector<uint32_t> node_of_die;
  std::vector<uint32_t> touched;
  std::vector<uint32_t> chain;
  std::vector<uint64_t> row_addresses;
};

// Split DWARF (-gsplit-dwarf): the skeleton unit in the library keeps the line table, the
// compilation directory and the unit's address ranges; its split unit (from the .dwp package)
// holds the subprograms and inlined subroutines. The walker reads DIEs from `dies` (the split
// unit, or the unit itself) and lines and files from `unit`, as llvm-symbolizer does (it resolves
// a split unit's DW_AT_call_file in the skeleton's line table).
class UnitWalker {
 public:
  UnitWalker(llvm::DWARFContext& context, DWARFUnit& unit, DWARFUnit& dies, const ImageSlice& slice,
             WalkScratch& scratch)
      : context_(context),
        unit_(unit),
        dies_(dies),
        slice_(slice),
        row_addresses_(scratch.row_addresses),
        kind_(scratch.kind),
        enclosing_(scratch.enclosing),
        node_of_die_(scratch.node_of_die),
        touched_(scratch.touched),
        chain_(scratch.chain) {
    row_addresses_.clear();
    touched_.clear();
    chain_.clear();
  }

  // Fills output() and warnings(); touches only this unit (and the context's locked line tables).
  void walk() {
    const bool split = &dies_ != &unit_;
    DWARFDie unit_die = unit_.getUnitDIE(/*ExtractUnitDieOnly=*/split);
    if (!unit_die || (split && !dies_.getUnitDIE(/*ExtractUnitDieOnly=*/false))) return;
    out_.unit_offset = unit_.getOffset();
    std::map<uint64_t, Painted> painted;
    uint32_t index = 0;
    size_t die_count = dies_.getNumDIEs();
    kind_.assign(die_count, kOther);
    enclosing_.assign(die_count, kNoDie);
    node_of_die_.assign(die_count, kNoNode);
    for (const llvm::DWARFDebugInfoEntry& entry : dies_.dies()) {
      uint32_t die_index = index++;
      // Parents precede their children, so the parent's entries are already filled in.
      if (std::optional<uint32_t> parent = entry.getParentIdx(); parent && *parent < die_count) {
        enclosing_[die_index] = kind_[*parent] != kOther ? *parent : enclosing_[*parent];
      }
      auto tag = entry.getTag();
      if (tag == llvm::dwarf::DW_TAG_subprogram) {
        kind_[die_index] = kSubprogram;
      } else if (tag == llvm::dwarf::DW_TAG_inlined_subroutine) {
        kind_[die_index] = kInlined;
      } else {
        continue;
      }
      DWARFDie die(&dies_, &entry);
      // DWARFDie::getAddressRanges, without its vector for the usual single low/high range: it
      // tries low/high first, then DW_AT_ranges, and has nothing when neither is there.
      uint64_t low = 0, high = 0, section = 0;
      if (die.getLowAndHighPC(low, high, section)) {
        paintRange(painted, low, high, die_index);
        continue;
      }
      const llvm::DWARFAbbreviationDeclaration* abbrev = entry.getAbbreviationDeclarationPtr();
      if (!abbrev || !abbrev->findAttributeIndex(llvm::dwarf::DW_AT_ranges)) continue;
      auto ranges = die.getAddressRanges();
      if (!ranges) {
        warn("unit at 0x" + hex(out_.unit_offset) + ": " + llvm::toString(ranges.takeError()));
        continue;
      }
      for (const auto& range : *ranges) paintRange(painted, range.LowPC, range.HighPC, die_index);
    }
    line_table_ = lineTableLlvmMayParse() ? context_.getLineTableForUnit(&unit_) : nullptr;
    loadFiles();
    collectRowAddresses();
    groupIntoFunctions(painted);
    addLineOnlyRanges(unit_die, painted);
    for (FunctionRanges& function : out_.functions) addLines(function);
  }

  CompileUnitFunctions& output() { return out_; }
  std::vector<std::string>& warnings() { return warnings_; }

 private:
  void paintRange(std::map<uint64_t, Painted>& painted, uint64_t low, uint64_t high, uint32_t die_index) const {
    // Zero-length ranges are ignored by LLVM; address 0 and addresses below the image base are
    // dead-stripped code (linker tombstones), never a frame.
    if (low >= high || low == 0 || low < slice_.image_base) return;
    paint(painted, low - slice_.image_base, high - slice_.image_base, die_index);
  }

  static std::string hex(uint64_t value) {
    char buffer[24];
    snprintf(buffer, sizeof(buffer), "%llx", static_cast<unsigned long long>(value));
    return buffer;
  }

  void warn(std::string message) {
    if (warnings_.size() < kMaxWarnings) warnings_.push_back(std::move(message));
  }

  // Whether the unit's line table header is one LLVM parses without crashing (dwarf_preflight.h,
  // checkLineTableHeader); the unit's lines are not read when it is not. The offset as
  // DWARFContext::getLineTableForUnit computes it.
  bool lineTableLlvmMayParse() {
    std::optional<uint64_t> stmt_list =
        llvm::dwarf::toSectionOffset(unit_.getUnitDIE().find(llvm::dwarf::DW_AT_stmt_list));
    if (!stmt_list) return true;
    const uint64_t offset = *stmt_list + unit_.getLineTableOffset();
    Status header = checkLineTableHeader(unit_.getLineSection().Data, offset, unit_.isLittleEndian());
    if (header) return true;
    warn("unit at 0x" + hex(out_.unit_offset) + ": " + header.error().message() + "; its lines are not read");
    return false;
  }

  void loadFiles() {
    if (!line_table_) return;
    size_t count = line_table_->Prologue.FileNames.size();
    // DWARF 5 numbers files from 0, earlier versions from 1: index i of `files` is file i.
    out_.files.resize(count + 1);
    const char* comp_dir = unit_.getCompilationDir();
    for (size_t i = 0; i <= count; ++i) {
      std::string path;
      if (line_table_->getFileNameByIndex(i, comp_dir ? comp_dir : "",
                                          llvm::DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath, path)) {
        out_.files[i] = std::move(path);
      }
    }
  }

  uint32_t fileIndex(uint64_t dwarf_index) const {
    if (dwarf_index >= out_.files.size() || out_.files[dwarf_index].empty()) return kNoFile;
    return static_cast<uint32_t>(dwarf_index);
  }

  void collectRowAddresses() {
    if (!line_table_) return;
    row_addresses_.reserve(line_table_->Rows.size());
    for (const auto& row : line_table_->Rows) {
      if (row.Address.Address < slice_.image_base) continue;
      row_addresses_.push_back(row.Address.Address - slice_.image_base);
    }
    std::sort(row_addresses_.begin(), row_addresses_.end());
    row_addresses_.erase(std::unique(row_addresses_.begin(), row_addresses_.end()), row_addresses_.end());
  }

  // The LLVM inlined chain of `die_index`, innermost first: inlined subroutines up to (and
  // including) the first subprogram among its ancestors. Written to chain_ (reused scratch).
  const std::vector<uint32_t>& chainOf(uint32_t die_index) {
    chain_.clear();
    for (uint32_t at = die_index; at != kNoDie; at = enclosing_[at]) {
      chain_.push_back(at);
      if (kind_[at] == kSubprogram) break;
    }
    return chain_;
  }

  // Name as DWARFDie::getSubroutineName(LinkageName) gives it. Inlined copies (and out-of-line
  // instances) of a function carry only DW_AT_abstract_origin; the name is then the origin's,
  // resolved once per origin instead of once per copy (LLVM's lookup follows the references
  // and allocates on every call).
  std::string_view subroutineName(const DWARFDie& die) {
    const llvm::DWARFAbbreviationDeclaration* abbrev = die.getAbbreviationDeclarationPtr();
    auto [known, inserted] = origin_only_.try_emplace(abbrev, false);
    if (inserted && abbrev) {
      auto has = [abbrev](llvm::dwarf::Attribute attribute) {
        return abbrev->findAttributeIndex(attribute).has_value();
      };
      known->second = has(llvm::dwarf::DW_AT_abstract_origin) && !has(llvm::dwarf::DW_AT_specification) &&
                      !has(llvm::dwarf::DW_AT_name) && !has(llvm::dwarf::DW_AT_linkage_name) &&
                      !has(llvm::dwarf::DW_AT_MIPS_linkage_name);
    }
    if (known->second) {
      DWARFDie origin = die.getAttributeValueAsReferencedDie(llvm::dwarf::DW_AT_abstract_origin);
      if (origin) {
        auto [cached, fresh] = origin_names_.try_emplace(origin.getOffset());
        if (fresh) {
          const char* name = origin.getName(llvm::DINameKind::LinkageName);
          cached->second = name ? name : "";
        }
        return cached->second;
      }
    }
    const char* name = die.getSubroutineName(llvm::DINameKind::LinkageName);
    return name ? name : "";
  }

  static bool isMangled(std::string_view name) { return name.starts_with("_Z"); }

  // The function a subroutine is defined in, when its name does not say it (see InlineNode::
  // scope): from the DIE that declares the subroutine (reached through DW_AT_abstract_origin and
  // DW_AT_specification) up through lexical blocks and types to the nearest DW_TAG_subprogram,
  // preferring one with a linkage name (a lambda inside a lambda: the outer one's function).
  // Only references within the unit are followed; answers are cached per declaring DIE.
  std::string_view scopeOf(const DWARFDie& die, std::string_view name) {
    if (name.empty() || isMangled(name)) return {};
    DWARFDie declaration = die;
    for (int hop = 0; hop < 4; ++hop) {
      DWARFDie next = declaration.getAttributeValueAsReferencedDie(llvm::dwarf::DW_AT_abstract_origin);
      if (!next) next = declaration.getAttributeValueAsReferencedDie(llvm::dwarf::DW_AT_specification);
      if (!next) break;
      if (next.getDwarfUnit() != &dies_) return {};
      declaration = next;
    }
    auto [cached, fresh] = scopes_.try_emplace(declaration.getOffset());
    if (!fresh) return cached->second;
    std::string_view found;
    for (DWARFDie up = declaration.getParent(); up; up = up.getParent()) {
      const auto tag = up.getTag();
      if (tag == llvm::dwarf::DW_TAG_subprogram) {
        const char* enclosing = up.getSubroutineName(llvm::DINameKind::LinkageName);
        if (enclosing == nullptr || *enclosing == 0) continue;
        if (found.empty()) found = enclosing;
        if (isMangled(enclosing)) {
          found = enclosing;
          break;
        }
      } else if (tag != llvm::dwarf::DW_TAG_lexical_block && tag != llvm::dwarf::DW_TAG_structure_type &&
                 tag != llvm::dwarf::DW_TAG_class_type && tag != llvm::dwarf::DW_TAG_union_type &&
                 tag != llvm::dwarf::DW_TAG_inlined_subroutine) {
        break;  // a namespace or the unit: not defined inside a function
      }
    }
    cached->second = found;
    return found;
  }

  uint32_t nodeFor(FunctionRanges& function, const std::vector<uint32_t>& chain, size_t position) {
    uint32_t die_index = chain[position];
    if (node_of_die_[die_index] != kNoNode) return node_of_die_[die_index];
    uint32_t parent = position + 1 < chain.size() ? nodeFor(function, chain, position + 1) : kNoNode;
    DWARFDie die = dies_.getDIEAtIndex(die_index);
    InlineNode node;
    node.parent = parent;
    node.name = subroutineName(die);
    node.scope = scopeOf(die, node.name);
    if (parent != kNoNode) {
      uint32_t file = 0, line = 0, column = 0, discriminator = 0;
      die.getCallerFrame(file, line, column, discriminator);
      node.call_file = fileIndex(file);
      node.call_line = line;
      node.call_column = column;
    }
    uint32_t id = static_cast<uint32_t>(function.nodes.size());
    function.nodes.push_back(node);
    node_of_die_[die_index] = id;
    touched_.push_back(die_index);
    return id;
  }

  void groupIntoFunctions(const std::map<uint64_t, Painted>& painted) {
    FunctionRanges* current = nullptr;
    uint32_t current_root = kNoDie;
    for (const auto& [begin, piece] : painted) {
      if (piece.end <= begin) continue;
      const std::vector<uint32_t>& chain = chainOf(piece.die);
      if (chain.empty()) continue;
      uint32_t root = chain.back();
      if (!current || current_root != root || current->end != begin) {
        out_.functions.emplace_back();
        current = &out_.functions.back();
        current->begin = begin;
        current_root = root;
        // Node ids are per function: forget the previous function's DIE -> node entries.
        for (uint32_t die : touched_) node_of_die_[die] = kNoNode;
        touched_.clear();
      }
      current->end = piece.end;
      uint32_t node = nodeFor(*current, chain, 0);
      if (current->tiles.empty() || current->tiles.back().node != node) {
        current->tiles.push_back({begin, node});
      }
    }
  }

  // FunctionRanges::line_only: the unit's ranges that its line table's sequences cover and no
  // painted subroutine does, kept when a row starts inside them.
  void addLineOnlyRanges(const DWARFDie& unit_die, const std::map<uint64_t, Painted>& painted) {
    if (!line_table_ || line_table_->Sequences.empty() || row_addresses_.empty()) return;
    auto unit_ranges = unit_die.getAddressRanges();
    if (!unit_ranges) {
      llvm::consumeError(unit_ranges.takeError());
      return;
    }
    const size_t subprogram_functions = out_.functions.size();
    auto addGap = [&](uint64_t low, uint64_t high) {
      if (low >= high) return;
      // A row must start inside: alignment padding after a function continues its last row.
      auto row = std::lower_bound(row_addresses_.begin(), row_addresses_.end(), low);
      if (row == row_addresses_.end() || *row >= high) return;
      FunctionRanges& function = out_.functions.emplace_back();
      function.begin = low;
      function.end = high;
      function.line_only = true;
      function.nodes.emplace_back();
      function.tiles.push_back({low, 0});
    };
    // Sequences and unit ranges intersected in one sweep over both, sorted (a unit built with
    // -ffunction-sections has one of each per function).
    std::vector<std::pair<uint64_t, uint64_t>> sequences, ranges;
    for (const llvm::DWARFDebugLine::Sequence& sequence : line_table_->Sequences) {
      if (sequence.isValid()) sequences.emplace_back(sequence.LowPC, sequence.HighPC);
    }
    for (const llvm::DWARFAddressRange& range : *unit_ranges) {
      if (range.LowPC < range.HighPC) ranges.emplace_back(range.LowPC, range.HighPC);
    }
    std::sort(sequences.begin(), sequences.end());
    std::sort(ranges.begin(), ranges.end());
    for (size_t a = 0, b = 0; a < sequences.size() && b < ranges.size();) {
      uint64_t low = std::max(sequences[a].first, ranges[b].first);
      const uint64_t high = std::min(sequences[a].second, ranges[b].second);
      // The one ending first cannot meet anything further on the other side.
      if (sequences[a].second < ranges[b].second) {
        ++a;
      } else {
        ++b;
      }
      if (low >= high || low == 0 || low < slice_.image_base) continue;
      low -= slice_.image_base;
      const uint64_t end = high - slice_.image_base;
      // Subtract the painted pieces overlapping [low, end).
      auto piece = painted.upper_bound(low);
      if (piece != painted.begin() && std::prev(piece)->second.end > low) --piece;
      for (; piece != painted.end() && piece->first < end && low < end; ++piece) {
        if (piece->second.end <= low) continue;
        addGap(low, std::min(piece->first, end));
        low = std::max(low, piece->second.end);
      }
      addGap(low, end);
    }
    if (out_.functions.size() == subprogram_functions) return;
    std::sort(out_.functions.begin(), out_.functions.end(),
              [](const FunctionRanges& a, const FunctionRanges& b) { return a.begin < b.begin; });
    // Gaps never overlap a painted function, but sequences or unit ranges that overlap each
    // other give overlapping gaps: the first is kept.
    size_t kept = 0;
    for (size_t i = 0; i < out_.functions.size(); ++i) {
      if (kept > 0 && out_.functions[i].line_only && out_.functions[i].begin < out_.functions[kept - 1].end) continue;
      if (kept != i) out_.functions[kept] = std::move(out_.functions[i]);
      ++kept;
    }
    out_.functions.resize(kept);
  }

  void addLines(FunctionRanges& function) {
    if (!line_table_) return;
    auto it = std::upper_bound(row_addresses_.begin(), row_addresses_.end(), function.begin);
    uint64_t piece = function.begin;
    while (true) {
      LineSpan span;
      span.begin = piece;
      uint32_t row_index =
          line_table_->lookupAddress({piece + slice_.image_base, llvm::object::SectionedAddress::UndefSection});
      if (row_index != line_table_->UnknownRowIndex) {
        const auto& row = line_table_->Rows[row_index];
        span.file = fileIndex(row.File);
        span.line = row.Line;
        span.column = row.Column;
      }
      auto& lines = function.lines;
      if (lines.empty() || lines.back().file != span.file || lines.back().line != span.line ||
          lines.back().column != span.column) {
        lines.push_back(span);
      }
      if (it == row_addresses_.end() || *it >= function.end) break;
      piece = *it++;
    }
  }

  llvm::DWARFContext& context_;
  DWARFUnit& unit_;  // lines, files, the unit's ranges
  DWARFUnit& dies_;  // subprograms and inlined subroutines: unit_ or its split unit
  const ImageSlice& slice_;
  std::vector<std::string> warnings_;
  const llvm::DWARFDebugLine::LineTable* line_table_ = nullptr;
  std::vector<uint64_t>& row_addresses_;
  // Per DIE index of the unit: what it is, its nearest enclosing subroutine DIE (kNoDie: none)
  // and its node in the function being grouped (kNoNode: none yet; reset through touched_).
  enum : uint8_t { kOther, kSubprogram, kInlined };
  std::vector<uint8_t>& kind_;
  std::vector<uint32_t>& enclosing_;
  std::vector<uint32_t>& node_of_die_;
  std::vector<uint32_t>& touched_;
  std::vector<uint32_t>& chain_;
  std::unordered_map<const llvm::DWARFAbbreviationDeclaration*, bool> origin_only_;
  std::unordered_map<uint64_t, std::string_view> origin_names_;  // origin DIE offset -> name
  std::unordered_map<uint64_t, std::string_view> scopes_;        // declaring DIE offset -> scope
  CompileUnitFunctions out_;
};

// One walked unit on its way from a walking thread to the sink.
struct WalkedUnit {
  bool done = false;
  CompileUnitFunctions functions;
  std::vector<std::string> warnings;
  uint64_t next_unit_offset = 0;
  size_t bytes = 0;           // heap memory `functions` holds (heldBytes)
  bool split = false;         // read from its split unit in the package
  std::string missing_split;  // a skeleton whose split unit was not read: its DW_AT_dwo_name
};

// The heap memory a walked unit holds until the sink has it: a unity-built unit of -O1 code
// with full type info holds 10-20 MB (thousands of functions, their inline trees, line spans).
size_t heldBytes(const CompileUnitFunctions& unit) {
  size_t bytes = unit.functions.capacity() * sizeof(FunctionRanges) + unit.files.capacity() * sizeof(std::string);
  for (const std::string& file : unit.files) bytes += file.capacity();
  for (const FunctionRanges& function : unit.functions) {
    bytes += function.nodes.capacity() * sizeof(InlineNode) + function.tiles.capacity() * sizeof(InlineTile) +
             function.lines.capacity() * sizeof(LineSpan);
  }
  return bytes;
}

// Releases the whole pages of [begin, end) from this process's memory when they belong to the
// slice's read-only file mapping (never heap memory, such as content given as bytes or sections
// LLVM inflated: MADV_DONTNEED would zero those). The data stays in the page cache; touching it
// again reads it back. Without this, a walk's resident memory grows with every unit read, to
// the whole .debug_info of the file (1 GB and more for the largest images).
void releaseMappedPages(const ImageSlice& slice, const char* begin, const char* end) {
  const char* mapped = slice.mapping.data();
  if (slice.mapping.empty() || begin < mapped || end > mapped + slice.mapping.size() || begin >= end) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  uintptr_t last = reinterpret_cast<uintptr_t>(end) & ~(page - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

// Walks `unit` and frees what LLVM parsed for it; the result no longer needs the DIEs (names
// point into the string sections, which live as long as the context). The unit DIE of `unit`
// passed checkUnitDies already; the DIEs LLVM extracts here are checked first: a unit whose DIEs
// fail is not walked (a split unit that fails leaves the skeleton's lines), and a warning says why.
// `package`: the split-DWARF package loaded for the walk (null without one), `package_name` its
// file name.
void walkUnit(llvm::DWARFContext& context, DWARFUnit& unit, llvm::DWARFContext* package,
              const std::string& package_name, const ImageSlice& slice, WalkScratch& scratch, WalkedUnit& result) {
  DWARFUnit* split = nullptr;
  bool split_refused = false;
  std::string missing_split;
  if (package != nullptr) {
    // LLVM finds the split unit in the package by the skeleton's DWO id
    // (DWARFUnit::getNonSkeletonUnitDIE; a unit that is no skeleton answers with itself). The
    // same lookup first, which parses the unit's header only, to check its DIEs before LLVM
    // extracts its unit DIE: the package's index may name a unit the walk's check of the
    // package's units did not reach.
    std::optional<uint64_t> id = unit.getDWOId();
    llvm::DWARFCompileUnit* candidate = id ? package->getDWOCompileUnitForHash(*id) : nullptr;
    Status dies = candidate ? checkUnitDies(*candidate, /*unit_die_only=*/false) : Status::ok();
    if (!dies) {
      result.warnings.push_back(package_name + ": " + dies.error().message() +
                                "; its functions keep symbol-table names and the library's lines");
      split_refused = true;
    } else {
      DWARFDie die = unit.getNonSkeletonUnitDIE(/*ExtractUnitDIEOnly=*/true);
      if (die && die.getDwarfUnit() != &unit) split = die.getDwarfUnit();
    }
  }
  if (split == nullptr && !split_refused) {
    if (DWARFDie skeleton = unit.getUnitDIE(); skeleton) {
      const char* dwo_name =
          llvm::dwarf::toString(skeleton.find({llvm::dwarf::DW_AT_dwo_name, llvm::dwarf::DW_AT_GNU_dwo_name}), nullptr);
      if (dwo_name != nullptr) missing_split = dwo_name;
    }
  }
  result.next_unit_offset = unit.getNextUnitOffset();
  if (split == nullptr) {
    if (Status dies = checkUnitDies(unit, /*unit_die_only=*/false); !dies) {
      result.warnings.push_back(dies.error().message() + "; its functions are not read");
      result.functions.unit_offset = unit.getOffset();
      return;
    }
  }
  DWARFUnit& walked = split ? *split : unit;
  // Lend the scratch array to the unit, holding what LLVM already extracted (its unit DIE).
  std::vector<llvm::DWARFDebugInfoEntry>& dies = unitDieArray(walked);
  scratch.dies.assign(dies.begin(), dies.end());
  dies.swap(scratch.dies);
  UnitWalker walker(context, unit, walked, slice, scratch);
  walker.walk();
  context.clearLineTableForUnit(&unit);
  // Take it back (capacity kept for the next unit); LLVM then clears what it holds.
  dies.swap(scratch.dies);
  scratch.dies.clear();
  clearUnitDies(walked, /*keep_unit_die=*/false);
  if (split) clearUnitDies(unit, /*keep_unit_die=*/false);
  result.missing_split = std::move(missing_split);
  result.split = split != nullptr;
  // The unit's bytes of .debug_info are not read again (names point into .debug_str, or into
  // .debug_info for DW_FORM_string, which then reads its page back from the file).
  llvm::StringRef info = unit.getInfoSection().Data;
  if (unit.getNextUnitOffset() <= info.size()) {
    releaseMappedPages(slice, info.data() + unit.getOffset(), info.data() + unit.getNextUnitOffset());
  }
  result.functions = std::move(walker.output());
  result.warnings.insert(result.warnings.end(), walker.warnings().begin(), walker.warnings().end());
  result.bytes = heldBytes(result.functions);
}

// The upload's warnings: at most kMaxWarnings, each once (LLVM repeats a report for every DIE or
// unit it meets the same damage in), at most kMaxWarningBytes long, and printable: a report quotes
// what the file holds (section names, strings) and the warnings travel on in JSON and logs.
class WarningList {
 public:
  explicit WarningList(std::vector<std::string>* out) : out_(out) {}
  void add(std::string text) {
    if (text.size() > kMaxWarningBytes) text.replace(kMaxWarningBytes, std::string::npos, "...");
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    std::lock_guard<std::mutex> lock(mutex_);  // LLVM reports from any walking thread
    if (!out_ || out_->size() >= kMaxWarnings) return;
    if (std::find(out_->begin(), out_->end(), text) == out_->end()) out_->push_back(std::move(text));
  }

 private:
  static constexpr size_t kMaxWarningBytes = 400;
  std::mutex mutex_;
  std::vector<std::string>* out_;
};

// What LLVM does not check before it reads the package (dwarf_preflight.h): that it is split
// DWARF at all, that its unit indexes are consistent, that its compressed sections declare
// sizes within the limits, and what LLVM would report while creating the package's context
// (before the walk can take its reports; checkPackageSections).
Status checkPackage(const std::string& path, const std::string& name, const DwarfWalkOptions& options) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return mapped.error();
  llvm::MemoryBufferRef buffer(llvm::StringRef(mapped->bytes().data(), mapped->bytes().size()), name);
  auto object = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object) {
    return malformed(name + ": not a readable split-DWARF package: " + llvm::toString(object.takeError()));
  }
  if (!(*object)->isELF() || !isSplitDwarf(**object)) {
    return malformed(name +
                     ": not a split-DWARF package (no .debug_info.dwo section); make it with llvm-dwp from "
                     "the library's .dwo files");
  }
  RESTACK_RETURN_IF_ERROR(checkPackageIndexes(**object, name));
  ImageSlice package;
  package.object = object->get();
  package.source = name;
  RESTACK_RETURN_IF_ERROR(
      checkCompressedSections(package, options.max_uncompressed_section_bytes, options.max_compression_ratio));
  return checkPackageSections(**object, name);
}

}  // namespace

Status walkDwarf(const ImageSlice& slice, const DwarfWalkOptions& options, const CompileUnitSink& sink) {
  WarningList warnings(options.warnings);
  auto handler = [&warnings](llvm::Error error) { warnings.add(llvm::toString(std::move(error))); };
  RESTACK_RETURN_IF_ERROR(
      checkCompressedSections(slice, options.max_uncompressed_section_bytes, options.max_compression_ratio));
  const std::string package_name = std::filesystem::path(slice.dwp_path).filename().string();
  if (!slice.dwp_path.empty()) {
    RESTACK_RETURN_IF_ERROR(checkPackage(slice.dwp_path, package_name, options));
  }
  std::unique_ptr<llvm::DWARFContext> context = llvm::DWARFContext::create(
      // Linked images carry no debug relocations; not resolving them keeps a corrupt relocation
      // section of a bad upload from reaching LLVM's fatal-error paths.
      *slice.object, llvm::DWARFContext::ProcessDebugRelocations::Ignore, nullptr, slice.dwp_path, handler, handler,
      /*ThreadSafe=*/true);
  // The package is loaded here and held for the whole walk. LLVM keeps it only while some unit
  // holds its split unit, and when no package is loaded it opens the .dwo files at the paths
  // the skeletons name, on this machine: nothing of an upload may read those. Without a package
  // no split unit is ever asked for (walkUnit).
  std::shared_ptr<llvm::DWARFContext> package;
  if (!slice.dwp_path.empty()) {
    package = context->getDWOContext(slice.dwp_path);
    if (!package) return malformed(package_name + ": the split-DWARF package cannot be read");
    // Before anything of the package is parsed (what its creation reports, checkPackage refuses).
    // `warnings` and `package_name` outlive the context, which the skeleton units keep alive.
    auto package_handler = [&warnings, &package_name](llvm::Error error) {
      warnings.add(package_name + ": " + llvm::toString(std::move(error)));
    };
    recoverableErrorHandler(*package) = package_handler;
    warningHandler(*package) = package_handler;
    // LLVM reads the unit DIE of every unit of the package when it looks a split unit up in a
    // package without an index: each is checked first (walkUnit checks the unit it looks up).
    for (const auto& unit : package->dwo_compile_units()) {
      if (Status dies = checkUnitDies(*unit, /*unit_die_only=*/true); !dies) {
        return malformed(package_name + ": " + dies.error().message());
      }
    }
  }
  uint64_t total = 0;
  context->getDWARFObj().forEachInfoSections(
      [&total](const llvm::DWARFSection& section) { total += section.Data.size(); });
  // Units whose unit DIE LLVM would misread are left out (checkUnitDies; the walk reads the
  // unit DIEs of all units before any is walked).
  std::vector<DWARFUnit*> units;
  for (const auto& unit : context->compile_units()) {
    if (unit->isTypeUnit()) continue;
    if (Status dies = checkUnitDies(*unit, /*unit_die_only=*/true); !dies) {
      warnings.add(dies.error().message() + "; its functions are not read");
      continue;
    }
    units.push_back(unit.get());
  }

  // Hands one walked unit to the sink (always on this thread, in file order).
  size_t split_units = 0, missing_splits = 0;
  std::string first_missing;
  auto deliver = [&](WalkedUnit& walked) -> Status {
    for (std::string& text : walked.warnings) warnings.add(std::move(text));
    if (walked.split) ++split_units;
    if (!walked.missing_split.empty() && missing_splits++ == 0) first_missing = walked.missing_split;
    Status status = sink(walked.functions);
    if (status && options.progress) options.progress(walked.next_unit_offset, total);
    return status;
  };

  // One warning for the skeleton units without their split unit: no package was uploaded, or the
  // package lacks them (one of another build lacks them all).
  auto reportMissingSplits = [&] {
    if (missing_splits == 0) return;
    if (package == nullptr) {
      warnings.add(std::to_string(missing_splits) + " split-DWARF units (-gsplit-dwarf; first: " + first_missing +
                   ") keep their functions in .dwo files that were not uploaded: their frames get symbol-table "
                   "names and lines, no inline frames. Upload the library zipped with its package " +
                   slice.module + ".dwp (llvm-dwp of its .dwo files) for those.");
      return;
    }
    warnings.add(package_name + " holds no split unit for " + std::to_string(missing_splits) + " of the " +
                 std::to_string(missing_splits + split_units) + " split-DWARF units (first: " + first_missing +
                 "); their functions keep symbol-table names, lines from the library and no inline frames. "
                 "Is the package from the same build as the library?");
  };

  unsigned threads = options.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  if (threads <= 1 || units.size() < 2 || !unitsAreIndependent(*context, units)) {
    WalkScratch scratch;
    for (DWARFUnit* unit : units) {
      WalkedUnit walked;
      walkUnit(*context, *unit, package.get(), package_name, slice, scratch, walked);
      RESTACK_RETURN_IF_ERROR(deliver(walked));
    }
    reportMissingSplits();
    return Status::ok();
  }

  // Parallel: threads claim units in order, at most `window` ahead of the sink; the sink takes
  // them in order. LLVM's lazily built per-unit abbreviation pointers are set here first, so the
  // walking threads only read shared state (the thread-safe context locks its line tables).
  for (DWARFUnit* unit : units) unit->getAbbreviations();
  size_t window = options.max_units_in_flight ? options.max_units_in_flight : 16 * threads;
  std::vector<WalkedUnit> slots(units.size());
  std::mutex mutex;
  std::condition_variable changed;
  size_t next_claim = 0, next_sink = 0;
  size_t waiting_bytes = 0;  // held by walked units the sink has not taken yet
  bool stop = false;
  // A thread may start a unit while fewer than `window` units and fewer than
  // max_bytes_in_flight bytes wait for the sink, and always when the sink waits for that unit.
  auto may_claim = [&] {
    return next_claim < next_sink + window && (waiting_bytes < options.max_bytes_in_flight || next_claim == next_sink);
  };
  auto work = [&] {
    WalkScratch scratch;
    while (true) {
      size_t index;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stop || next_claim >= units.size() || may_claim(); });
        if (stop || next_claim >= units.size()) return;
        index = next_claim++;
      }
      WalkedUnit walked;
      walkUnit(*context, *units[index], package.get(), package_name, slice, scratch, walked);
      walked.done = true;
      std::lock_guard<std::mutex> lock(mutex);
      waiting_bytes += walked.bytes;
      slots[index] = std::move(walked);
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
  Status status = Status::ok();
  for (size_t index = 0; index < units.size() && status; ++index) {
    WalkedUnit walked;
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return slots[index].done; });
      walked = std::move(slots[index]);
      slots[index] = WalkedUnit{};
    }
    status = deliver(walked);
    size_t delivered_bytes = walked.bytes;
    walked = WalkedUnit{};  // freed before the walkers may claim more
    std::lock_guard<std::mutex> lock(mutex);
    waiting_bytes -= delivered_bytes;
    next_sink = index + 1;
    if (!status) stop = true;
    changed.notify_all();
  }
  for (std::thread& thread : pool) thread.join();
  if (status) reportMissingSplits();
  return status;
}

}  // namespace restack::native

#include "formats/native/dwarf_walker.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/DebugInfo/DIContext.h>
#include <llvm/DebugInfo/DWARF/DWARFCompileUnit.h>
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugLine.h>
#include <llvm/DebugInfo/DWARF/DWARFDie.h>
#include <llvm/DebugInfo/DWARF/DWARFUnit.h>
#include <llvm/Object/ObjectFile.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace restack::native {

// DWARFUnit::clearDIEs is private in LLVM 19, yet dropping a finished unit's DIE array is what
// keeps a 1 GB dSYM from needing gigabytes (DWARFContext otherwise keeps every unit parsed).
// An explicit instantiation may name a private member ([temp.spec.general]/6); the friend
// defined by that instantiation is the only code that calls it.
void clearUnitDies(llvm::DWARFUnit& unit, bool keep_unit_die);
template <void (llvm::DWARFUnit::*Clear)(bool)>
struct DwarfUnitClearAccess {
  friend void clearUnitDies(llvm::DWARFUnit& unit, bool keep_unit_die) {
    (unit.*Clear)(keep_unit_die);
  }
};
template struct DwarfUnitClearAccess<&llvm::DWARFUnit::clearDIEs>;

namespace {

using llvm::DWARFDie;
using llvm::DWARFUnit;

constexpr uint32_t kNoDie = std::numeric_limits<uint32_t>::max();

struct Painted {
  uint64_t end;
  uint32_t die;  // index of the subroutine DIE in the unit
};

// LLVM's DWARFUnit::updateAddressDieMap, applied to one range: the new range overrides what it
// covers, splitting the range it starts in (children come after parents in DIE order).
void paint(std::map<uint64_t, Painted>& map, uint64_t low, uint64_t high, uint32_t die) {
  auto it = map.upper_bound(low);
  if (it != map.begin()) {
    --it;
    if (low < it->second.end) {
      if (high < it->second.end) map[high] = it->second;
      if (low > it->first) map[it->first].end = low;
    }
  }
  map[low] = Painted{high, die};
}

class UnitWalker {
 public:
  UnitWalker(llvm::DWARFContext& context, DWARFUnit& unit, const ImageSlice& slice,
             std::vector<std::string>* warnings)
      : context_(context), unit_(unit), slice_(slice), warnings_(warnings) {}

  Status run(const CompileUnitSink& sink) {
    DWARFDie unit_die = unit_.getUnitDIE(/*ExtractUnitDieOnly=*/false);
    if (!unit_die) return Status::ok();
    out_.unit_offset = unit_.getOffset();
    std::map<uint64_t, Painted> painted;
    uint32_t index = 0;
    for (const llvm::DWARFDebugInfoEntry& entry : unit_.dies()) {
      DWARFDie die(&unit_, &entry);
      uint32_t die_index = index++;
      auto tag = die.getTag();
      if (tag != llvm::dwarf::DW_TAG_subprogram && tag != llvm::dwarf::DW_TAG_inlined_subroutine) {
        continue;
      }
      auto ranges = die.getAddressRanges();
      if (!ranges) {
        warn("unit at 0x" + hex(out_.unit_offset) + ": " + llvm::toString(ranges.takeError()));
        continue;
      }
      for (const auto& range : *ranges) {
        // Zero-length ranges are ignored by LLVM; address 0 and addresses below the image base
        // are dead-stripped code (linker tombstones), never a frame.
        if (range.LowPC >= range.HighPC || range.LowPC == 0 || range.LowPC < slice_.image_base) {
          continue;
        }
        paint(painted, range.LowPC - slice_.image_base, range.HighPC - slice_.image_base,
              die_index);
      }
    }
    line_table_ = context_.getLineTableForUnit(&unit_);
    loadFiles();
    collectRowAddresses();
    groupIntoFunctions(painted);
    for (FunctionRanges& function : out_.functions) addLines(function);
    Status status = sink(out_);
    return status;
  }

 private:
  static std::string hex(uint64_t value) {
    char buffer[24];
    snprintf(buffer, sizeof(buffer), "%llx", static_cast<unsigned long long>(value));
    return buffer;
  }

  void warn(std::string message) {
    if (warnings_ && warnings_->size() < 20) warnings_->push_back(std::move(message));
  }

  void loadFiles() {
    if (!line_table_) return;
    size_t count = line_table_->Prologue.FileNames.size();
    // DWARF 5 numbers files from 0, earlier versions from 1: index i of `files` is file i.
    out_.files.resize(count + 1);
    const char* comp_dir = unit_.getCompilationDir();
    for (size_t i = 0; i <= count; ++i) {
      std::string path;
      if (line_table_->getFileNameByIndex(
              i, comp_dir ? comp_dir : "",
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
    row_addresses_.erase(std::unique(row_addresses_.begin(), row_addresses_.end()),
                         row_addresses_.end());
  }

  // The LLVM inlined chain of `die_index`, innermost first: inlined subroutines up to (and
  // including) the first subprogram among its ancestors.
  const std::vector<uint32_t>& chainOf(uint32_t die_index) {
    auto found = chains_.find(die_index);
    if (found != chains_.end()) return found->second;
    std::vector<uint32_t> chain;
    DWARFDie die = unit_.getDIEAtIndex(die_index);
    while (die) {
      auto tag = die.getTag();
      if (tag == llvm::dwarf::DW_TAG_subprogram) {
        chain.push_back(unit_.getDIEIndex(die));
        break;
      }
      if (tag == llvm::dwarf::DW_TAG_inlined_subroutine) chain.push_back(unit_.getDIEIndex(die));
      die = die.getParent();
    }
    return chains_.emplace(die_index, std::move(chain)).first->second;
  }

  uint32_t nodeFor(FunctionRanges& function, std::unordered_map<uint32_t, uint32_t>& nodes,
                   const std::vector<uint32_t>& chain, size_t position) {
    uint32_t die_index = chain[position];
    auto found = nodes.find(die_index);
    if (found != nodes.end()) return found->second;
    uint32_t parent =
        position + 1 < chain.size() ? nodeFor(function, nodes, chain, position + 1) : kNoNode;
    DWARFDie die = unit_.getDIEAtIndex(die_index);
    InlineNode node;
    node.parent = parent;
    if (const char* name = die.getSubroutineName(llvm::DINameKind::LinkageName)) node.name = name;
    if (parent != kNoNode) {
      uint32_t file = 0, line = 0, column = 0, discriminator = 0;
      die.getCallerFrame(file, line, column, discriminator);
      node.call_file = fileIndex(file);
      node.call_line = line;
      node.call_column = column;
    }
    uint32_t id = static_cast<uint32_t>(function.nodes.size());
    function.nodes.push_back(node);
    nodes.emplace(die_index, id);
    return id;
  }

  void groupIntoFunctions(const std::map<uint64_t, Painted>& painted) {
    FunctionRanges* current = nullptr;
    uint32_t current_root = kNoDie;
    std::unordered_map<uint32_t, uint32_t> nodes;  // DIE index -> node of `current`
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
        nodes.clear();
      }
      current->end = piece.end;
      uint32_t node = nodeFor(*current, nodes, chain, 0);
      if (current->tiles.empty() || current->tiles.back().node != node) {
        current->tiles.push_back({begin, node});
      }
    }
  }

  void addLines(FunctionRanges& function) {
    if (!line_table_) return;
    auto it = std::upper_bound(row_addresses_.begin(), row_addresses_.end(), function.begin);
    uint64_t piece = function.begin;
    while (true) {
      LineSpan span;
      span.begin = piece;
      uint32_t row_index = line_table_->lookupAddress(
          {piece + slice_.image_base, llvm::object::SectionedAddress::UndefSection});
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
  DWARFUnit& unit_;
  const ImageSlice& slice_;
  std::vector<std::string>* warnings_;
  const llvm::DWARFDebugLine::LineTable* line_table_ = nullptr;
  std::vector<uint64_t> row_addresses_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> chains_;
  CompileUnitFunctions out_;
};

}  // namespace

Status walkDwarf(const ImageSlice& slice, const DwarfWalkOptions& options,
                 const CompileUnitSink& sink) {
  std::vector<std::string>* warnings = options.warnings;
  auto handler = [warnings](llvm::Error error) {
    std::string text = llvm::toString(std::move(error));
    if (warnings && warnings->size() < 20) warnings->push_back(text);
  };
  std::unique_ptr<llvm::DWARFContext> context = llvm::DWARFContext::create(
      // Linked images carry no debug relocations; not resolving them keeps a corrupt relocation
      // section of a bad upload from reaching LLVM's fatal-error paths.
      *slice.object, llvm::DWARFContext::ProcessDebugRelocations::Ignore, nullptr, "", handler,
      handler);
  uint64_t total = 0;
  context->getDWARFObj().forEachInfoSections(
      [&total](const llvm::DWARFSection& section) { total += section.Data.size(); });
  for (const auto& unit : context->compile_units()) {
    if (unit->isTypeUnit()) continue;
    UnitWalker walker(*context, *unit, slice, warnings);
    Status status = walker.run(sink);
    context->clearLineTableForUnit(unit.get());
    clearUnitDies(*unit, /*keep_unit_die=*/false);
    if (!status) return status;
    if (options.progress) options.progress(unit->getNextUnitOffset(), total);
  }
  return Status::ok();
}

}  // namespace restack::native

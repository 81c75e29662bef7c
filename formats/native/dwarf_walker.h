// Streaming DWARF reader: one compile unit at a time, into per-function address maps that answer
// exactly what `llvm-symbolizer --inlines` answers, so that lookups never touch DWARF again.
//
// For every compile unit the walker
//  1. paints the address ranges of every DW_TAG_subprogram and DW_TAG_inlined_subroutine in DIE
//     order, children over parents (the rule of LLVM's DWARFUnit::updateAddressDieMap), giving
//     for each address its innermost subroutine;
//  2. groups consecutive painted intervals that share their outermost subprogram into one
//     `FunctionRanges` [begin, end), whose `nodes` are the inline tree (node 0 = the subprogram;
//     each inlined node knows its caller node and its call site: DW_AT_call_file/line/column) and
//     whose `tiles` give the innermost node per address interval;
//  3. cuts the line table at every row address inside the function and asks LLVM's own
//     LineTable::lookupAddress for each piece (the last row at or below the address within its
//     sequence, as llvm-symbolizer does; LLVM 19 does not prefer is_stmt rows, so neither do we),
//     merging neighbouring pieces with equal file/line/column into one `LineSpan`;
//  4. adds `line_only` ranges for code of the unit's line table and address ranges that no
//     subprogram covers, when a line row starts inside them (padding between functions has
//     none and gets no range);
//  5. frees the unit's DIEs and line table and hands the unit's functions to the sink, so memory
//     stays bounded by the largest units in flight, not the file.
// Split DWARF (-gsplit-dwarf): when the slice names its package (ImageSlice::dwp_path, llvm-dwp's
// libfoo.so.dwp), step 1 reads the subroutines of each skeleton unit's split unit in the package
// (found by its DWO id), while steps 3-4 keep the skeleton's line table, compilation directory
// and ranges; a split unit's DW_AT_call_file indexes the skeleton's file table, as in
// llvm-symbolizer. Without the package the skeletons give step 4's line_only ranges alone.
// Units are independent, so several threads walk them at once when the image allows it (see
// dwarf_preflight.h); the sink still receives them in file order, on the calling thread.
//
// Worked example (C, -O2): main() at 0x100-0x140 calls inline helper() (a.c:3) at 0x110-0x120:
//   nodes  [0] {name "main"}  [1] {name "helper", parent 0, call a.c:9:5}
//   tiles  {0x100 -> 0}, {0x110 -> 1}, {0x120 -> 0}
//   lines  {0x100 a.c:8:3}, {0x110 a.c:3:10}, {0x118 a.c:4:1}, {0x120 a.c:10:1}
//   address 0x114 -> innermost node 1: "helper" a.c:3:10, then "main" a.c:9:5 (node 1's call site)
// All addresses are relative to the image base (see native_object.h).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/native/dwarf_preflight.h"
#include "formats/native/native_object.h"

namespace restack::native {

inline constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();
inline constexpr uint32_t kNoFile = std::numeric_limits<uint32_t>::max();

struct InlineNode {
  uint32_t parent = kNoNode;  // the caller's node; kNoNode for node 0 (the subprogram)
  std::string_view name;      // linkage name when present (still mangled), else DW_AT_name
  // The function the subroutine is defined in, when `name` does not say it: GCC names the call
  // operator of a lambda (a type without linkage) only "operator()", with no linkage name; its
  // declaration sits in the closure type, a child of the enclosing function's DW_TAG_subprogram,
  // whose linkage name this is ("_ZN4shop4Cart5totalEPKc"). Empty when `name` is mangled or the
  // declaration is not inside a function.
  std::string_view scope;
  uint32_t call_file = kNoFile;  // index into CompileUnitFunctions::files
  uint32_t call_line = 0;
  uint32_t call_column = 0;
};

struct InlineTile {
  uint64_t begin = 0;  // the tile runs to the next tile's begin, or to the function's end
  uint32_t node = 0;   // innermost node over the tile
};

struct LineSpan {
  uint64_t begin = 0;       // runs to the next span's begin, or to the function's end
  uint32_t file = kNoFile;  // kNoFile with line 0: no line row covers the span
  uint32_t line = 0;
  uint32_t column = 0;
};

struct FunctionRanges {
  uint64_t begin = 0;
  uint64_t end = 0;
  // Code the unit's line table covers but no subprogram does: one unnamed node, the line rows.
  // llvm-symbolizer answers there with the unit's line row and the symbol table's name, and so
  // do lookups (the ingest names each piece from the symbol table). What makes such code: a .S
  // file assembled by clang (it describes a function with DW_TAG_label, not a subprogram), code
  // a producer put in a unit's range without a subprogram DIE, and the skeleton unit of split
  // DWARF (-gsplit-dwarf) whose subprograms are in a .dwo that was not uploaded (no package in
  // ImageSlice::dwp_path, or one lacking that unit).
  bool line_only = false;
  std::vector<InlineNode> nodes;
  std::vector<InlineTile> tiles;
  std::vector<LineSpan> lines;
};

struct CompileUnitFunctions {
  uint64_t unit_offset = 0;               // of the unit in .debug_info, for messages
  std::vector<std::string> files;         // absolute paths as llvm-symbolizer prints them ("" unknown)
  std::vector<FunctionRanges> functions;  // sorted by begin, non-overlapping
};

struct DwarfWalkOptions {
  // Called with (bytes of .debug_info done, total bytes). May be empty.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // DWARF problems worth telling the uploader (first 20 kept); parsing continues past them.
  std::vector<std::string>* warnings = nullptr;
  // Compressed debug sections (ELF SHF_COMPRESSED) are inflated in one piece by LLVM, which
  // aborts the process when the size their header declares cannot be allocated, and keeps them
  // all in memory. Headers may declare at most this many bytes, one section and all together
  // (default 4 GiB, already more than DWARF32 can address; ingest passes what
  // limits.max_upload_bytes leaves after the file), and at most `max_compression_ratio` times
  // their compressed size; otherwise the upload is rejected (see dwarf_preflight.h).
  uint64_t max_uncompressed_section_bytes = uint64_t{4} << 30;
  uint64_t max_compression_ratio = kMaxCompressionRatio;
  // Threads walking compile units at once (each unit on one thread; the sink still sees the
  // units one at a time, in file order, on the calling thread). 0 (default): the machine's
  // hardware threads, at most 4. Images whose units reference each other are walked on one
  // thread whatever this says (see dwarf_preflight.h).
  unsigned threads = 0;
  // Units walked ahead of the sink at most (bounds memory: each holds one unit's functions, its
  // DIEs are already freed). Default 0: 16 per thread; a short window stalls the walkers behind
  // one large unit (2 per thread: 1.30 s for the 102 MB RocksDB DWARF, 16: 0.87-0.92 s).
  unsigned max_units_in_flight = 0;
  // And at most this many bytes of walked units' results waiting for the sink (a unit is always
  // walked when the sink waits for it). The unit count alone let 32 waiting units of a
  // unity-built -O1 library hold ~400 MB.
  size_t max_bytes_in_flight = size_t{64} << 20;
};

// Receives one unit at a time; the string_views inside are valid during the call only.
// A failing sink stops the walk and its error is returned. Called on walkDwarf's thread only.
using CompileUnitSink = std::function<Status(const CompileUnitFunctions&)>;

Status walkDwarf(const ImageSlice& slice, const DwarfWalkOptions& options, const CompileUnitSink& sink);

}  // namespace restack::native

// One Breakpad FUNC record with its line and INLINE records, turned into the native store's
// FunctionRecord (symbolstore/native/native_records.h): the same record the DWARF path writes
// for the function, so lookups cannot tell which upload it came from.
//
//   FUNC 1130 40 0 run                     node 0 "run"
//   INLINE 0 9 0 0 1138 10                 node 1 "helper" (origin 0), caller node 0, call a.c:9
//   INLINE 1 4 0 1 1140 4                  node 2 "leaf" (origin 1), caller node 1, call a.c:4
//   1130 8 8 0 / 1138 8 3 0 / 1140 8 5 0   lines
//   ->  tiles  {0x1130 -> 0} {0x1138 -> 1} {0x1140 -> 2} {0x1144 -> 1} {0x1148 -> 0}
//       lines  {0x1130 a.c:8} {0x1138 a.c:3} {0x1140 a.c:5} {0x1148 no line}
//       0x1141 -> leaf a.c:5 (inlined), helper a.c:4 (inlined), run a.c:9
//
// A caller is the node one level shallower whose ranges hold the inline's first address (INLINE
// records may come in any order). Nodes are numbered shallowest first, so a caller's index is
// always below its callee's, as the record format requires. Deeper ranges are painted over
// shallower ones, the rule the DWARF walker follows (formats/native/dwarf_walker.h). Line and
// inline ranges are clipped to the FUNC; address gaps between line records answer "no line",
// as DWARF addresses without a row do. What .sym cannot carry: columns (always 0), call-site
// columns, and which functions are compiler clones (`clone` is never set).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/breakpad/sym_reader.h"
#include "formats/common/status.h"
#include "symbolstore/native/native_records.h"

namespace restack::breakpad_store {

struct SymInline {
  uint32_t depth = 0;
  uint32_t call_line = 0;
  uint64_t call_file = 0;
  uint64_t origin = 0;
  std::vector<breakpad::AddressRange> ranges;
};

struct SymFunction {
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string_view name;
  std::vector<breakpad::LineRecord> lines;
  std::vector<SymInline> inlines;
};

// String ids of the image (native_store::kNoString for "none"), assigned by the caller.
struct SymStringIds {
  std::function<Expected<uint32_t>(std::string_view name)> name;  // a function name
  std::function<Expected<uint32_t>(uint64_t number)> file;        // a FILE number
  std::function<Expected<uint32_t>(uint64_t number)> origin;      // an INLINE_ORIGIN number
};

// Problems that do not stop the upload (an INLINE whose caller is missing, ranges outside the
// FUNC) are counted here; the caller reports them once per upload.
struct SymFunctionIssues {
  uint64_t orphan_inlines = 0;  // no caller one level up: attached to the FUNC itself
  uint64_t clipped_ranges = 0;  // line or inline ranges reaching outside the FUNC
};

// A function name as dump_syms wrote it, spelled as LLVM's demangler (and so llvm-symbolizer and
// the DWARF path) spells it: a still-mangled name is demangled, and the GNU spelling of closure
// and unnamed types is rewritten, "{lambda(int)#1}" -> "'lambda'(int)", "{lambda()#3}" ->
// "'lambda1'()", "{unnamed type#2}" -> "'unnamed0'". What dump_syms' demangler leaves out cannot
// be restored: a function template's return type ("int f<int>(int)" arrives as "f<int>(int)").
std::string llvmStyleName(std::string_view name);

Expected<native_store::FunctionRecord> buildFunctionRecord(const SymFunction& function, const SymStringIds& ids,
                                                           SymFunctionIssues& issues);

}  // namespace restack::breakpad_store

// The symbol-table tier: function (and data) symbols of an image, for addresses DWARF does not
// cover (stripped .so files, system frameworks, app binaries without a dSYM).
//
// The selection follows llvm-symbolizer so that both name the same symbol:
//   - ELF: .symtab, or .dynsym when .symtab is absent; symbols of allocated sections only, of
//     type FUNC, OBJECT, GNU_IFUNC or NOTYPE (not section/file/ARM mapping symbols);
//   - Mach-O: defined function and data symbols; the leading '_' of C names is dropped;
//   - sizes: ELF st_size; Mach-O has none, so the distance to the next symbol of the section;
//   - several symbols at one address: the largest size wins, then the latest in the table;
//   - an ELF local symbol's file: the name of the STT_FILE symbol before it in the table (the
//     object file it came from, "crtstuff.c", "parser.c"; the ELF specification puts a file's
//     STT_FILE symbol before its local symbols). llvm-symbolizer prints that name as the file of
//     a frame no DWARF covers: a static function of a build without -g, or crtstuff's code.
// A symbol of size 0 covers every address up to the next symbol.
//
// Worked example (Mach-O, __TEXT.vmaddr 0x100000000):
//   nlist "_main" at 0x100003f00, "__ZN3foo3barEv" at 0x100003f40, __text ends 0x100003f80
//   -> {address 0x3f00, size 0x40, name "main"}, {address 0x3f40, size 0x40, name "_ZN3foo3barEv"}
// (names stay mangled here; the store demangles them once at ingest).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/native/native_object.h"

namespace restack::native {

enum class SymbolSource : uint8_t { kSymtab = 0, kObjc = 1 };

struct SymbolEntry {
  uint64_t address = 0;  // relative to the image base
  uint64_t size = 0;     // 0 = up to the next symbol
  std::string name;      // as stored (mangled), Mach-O '_' prefix removed
  SymbolSource source = SymbolSource::kSymtab;
  std::string file;  // ELF local symbols: the preceding STT_FILE symbol's name; otherwise ""
};

// Reads the symbol table of `slice`, sorted by address, one entry per address.
//
// `dynamic_only` keeps only the ELF symbols a stripped copy of the image still lists in .dynsym
// (global or weak, default or protected visibility), named as .dynsym names them (without the
// "@VERSION" that .symtab appends to versioned names): what llvm-symbolizer reads when it is
// given the deployed, stripped library and finds the debug file through its build id or
// .gnu_debuglink. Ingest asks for it for detached debug files (see isDetachedDebugFile).
Expected<std::vector<SymbolEntry>> readSymbolTable(const ImageSlice& slice, bool dynamic_only = false);

// True for an ELF debug file made by `objcopy --only-keep-debug` (or Debian's dh_strip): its code
// sections are kept as headers only (SHT_NOBITS), the code itself ships in a stripped library.
bool isDetachedDebugFile(const ImageSlice& slice);

// Adds Objective-C methods (from `readObjcMethods`) at addresses that have no symbol and closes
// size-0 symbols at the next entry, so that "main" of a stripped app does not swallow the methods
// after it. Both inputs sorted by address; the result is sorted, one entry per address.
std::vector<SymbolEntry> mergeObjcMethods(std::vector<SymbolEntry> symbols, std::vector<SymbolEntry> methods);

// When `symbol` (a symbol-table name) is `function` (the DWARF name of the code at the same
// address, both as stored: mangled or plain C) plus a compiler clone suffix, that suffix without
// its leading dot; otherwise "". GCC names the copies it makes of a function by appending
// ".isra.N" (scalar replacement of aggregates), ".constprop.N" (constant propagation), ".part.N"
// (partial inlining), ".cold" (the cold part split off by -freorder-blocks-and-partition),
// ".lto_priv.N" (LTO-privatized), and chains of them; LLVM appends ".llvm.N", ".specialized.N"
// or ".cold.N". DWARF keeps naming the source function, and so does llvm-symbolizer whenever it
// does not read the symbol table (a stripped library with its debug file). The grammar is the
// Itanium demangler's clone suffix: one or more "." identifier, each followed by any number of
// "." digits. Examples: ("f.isra.0", "f") -> "isra.0"; ("_Z1fi.constprop.0.isra.0", "_Z1fi") ->
// "constprop.0.isra.0"; ("f.cold", "f") -> "cold"; ("f2", "f") -> "" (another function).
std::string_view cloneSuffix(std::string_view symbol, std::string_view function);

// The entry covering `address` in a sorted table (llvm-symbolizer's rule), or nullptr.
const SymbolEntry* findSymbol(const std::vector<SymbolEntry>& symbols, uint64_t address);

}  // namespace restack::native

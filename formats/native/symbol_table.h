// The symbol-table tier: function (and data) symbols of an image, for addresses DWARF does not
// cover (stripped .so files, system frameworks, app binaries without a dSYM).
//
// The selection follows llvm-symbolizer so that both name the same symbol:
//   - ELF: .symtab, or .dynsym when .symtab is absent; symbols of allocated sections only, of
//     type FUNC, OBJECT, GNU_IFUNC or NOTYPE (not section/file/ARM mapping symbols);
//   - Mach-O: defined function and data symbols; the leading '_' of C names is dropped;
//   - sizes: ELF st_size; Mach-O has none, so the distance to the next symbol of the section;
//   - several symbols at one address: the largest size wins, then the greatest name.
// A symbol of size 0 covers every address up to the next symbol.
//
// Worked example (Mach-O, __TEXT.vmaddr 0x100000000):
//   nlist "_main" at 0x100003f00, "__ZN3foo3barEv" at 0x100003f40, __text ends 0x100003f80
//   -> {address 0x3f00, size 0x40, name "main"}, {address 0x3f40, size 0x40, name "_ZN3foo3barEv"}
// (names stay mangled here; the store demangles them once at ingest).
#pragma once

#include <cstdint>
#include <string>
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
};

// Reads the symbol table of `slice`, sorted by address, one entry per address.
Expected<std::vector<SymbolEntry>> readSymbolTable(const ImageSlice& slice);

// Adds Objective-C methods (from `readObjcMethods`) at addresses that have no symbol and closes
// size-0 symbols at the next entry, so that "main" of a stripped app does not swallow the methods
// after it. Both inputs sorted by address; the result is sorted, one entry per address.
std::vector<SymbolEntry> mergeObjcMethods(std::vector<SymbolEntry> symbols, std::vector<SymbolEntry> methods);

// The entry covering `address` in a sorted table (llvm-symbolizer's rule), or nullptr.
const SymbolEntry* findSymbol(const std::vector<SymbolEntry>& symbols, uint64_t address);

}  // namespace restack::native

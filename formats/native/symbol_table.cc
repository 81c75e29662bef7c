#include "formats/native/symbol_table.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/MachO.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Object/SymbolSize.h>

#include <algorithm>
#include <tuple>

namespace restack::native {
namespace {

using llvm::object::SymbolRef;

// Whether llvm-symbolizer would keep this symbol (SymbolizableObjectFile::addSymbol).
bool keepSymbol(const llvm::object::ObjectFile& object, const SymbolRef& symbol) {
  auto section = symbol.getSection();
  if (!section) {
    llvm::consumeError(section.takeError());
    return false;
  }
  if (*section == object.section_end()) return false;
  if (object.isELF()) {
    llvm::object::ELFSectionRef elf_section(**section);
    if ((elf_section.getFlags() & llvm::ELF::SHF_ALLOC) == 0) return false;
    uint8_t type = llvm::object::ELFSymbolRef(symbol).getELFType();
    if (type != llvm::ELF::STT_NOTYPE && type != llvm::ELF::STT_FUNC && type != llvm::ELF::STT_OBJECT &&
        type != llvm::ELF::STT_GNU_IFUNC) {
      return false;
    }
    auto flags = symbol.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      return false;
    }
    return (*flags & SymbolRef::SF_FormatSpecific) == 0;
  }
  auto type = symbol.getType();
  if (!type) {
    llvm::consumeError(type.takeError());
    return false;
  }
  return *type == SymbolRef::ST_Function || *type == SymbolRef::ST_Data;
}

bool byAddressSizeName(const SymbolEntry& a, const SymbolEntry& b) {
  return std::tie(a.address, a.size, a.name) < std::tie(b.address, b.size, b.name);
}

// Keeps the last entry of each run of equal addresses (the largest size, then greatest name).
void keepOnePerAddress(std::vector<SymbolEntry>& entries) {
  size_t out = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + 1 < entries.size() && entries[i + 1].address == entries[i].address) continue;
    if (out != i) entries[out] = std::move(entries[i]);
    ++out;
  }
  entries.resize(out);
}

}  // namespace

Expected<std::vector<SymbolEntry>> readSymbolTable(const ImageSlice& slice) {
  const llvm::object::ObjectFile& object = *slice.object;
  std::vector<SymbolEntry> entries;
  for (const auto& [symbol, size] : llvm::object::computeSymbolSizes(object)) {
    if (!keepSymbol(object, symbol)) continue;
    auto name = symbol.getName();
    auto address = symbol.getAddress();
    if (!name || !address) {
      if (!name) llvm::consumeError(name.takeError());
      if (!address) llvm::consumeError(address.takeError());
      continue;
    }
    llvm::StringRef text = *name;
    if (object.isMachO()) text.consume_front("_");
    if (*address < slice.image_base) continue;  // not in the image (absolute symbols)
    entries.push_back({*address - slice.image_base, size, text.str(), SymbolSource::kSymtab});
  }
  // (address, size, name) is a total order for our purpose: equal triples are interchangeable.
  std::sort(entries.begin(), entries.end(), byAddressSizeName);
  keepOnePerAddress(entries);
  return entries;
}

std::vector<SymbolEntry> mergeObjcMethods(std::vector<SymbolEntry> symbols, std::vector<SymbolEntry> methods) {
  if (methods.empty()) return symbols;
  std::vector<SymbolEntry> merged;
  merged.reserve(symbols.size() + methods.size());
  size_t s = 0, m = 0;
  while (s < symbols.size() || m < methods.size()) {
    if (m == methods.size() || (s < symbols.size() && symbols[s].address <= methods[m].address)) {
      // A symbol at the method's address already names it (better than the runtime metadata).
      if (m < methods.size() && symbols[s].address == methods[m].address) ++m;
      merged.push_back(std::move(symbols[s++]));
    } else {
      merged.push_back(std::move(methods[m++]));
    }
  }
  for (size_t i = 0; i + 1 < merged.size(); ++i) {
    uint64_t gap = merged[i + 1].address - merged[i].address;
    if (merged[i].size == 0 || merged[i].size > gap) merged[i].size = gap;
  }
  return merged;
}

const SymbolEntry* findSymbol(const std::vector<SymbolEntry>& symbols, uint64_t address) {
  auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                             [](uint64_t a, const SymbolEntry& e) { return a < e.address; });
  if (it == symbols.begin()) return nullptr;
  --it;
  if (it->size != 0 && address - it->address >= it->size) return nullptr;
  return &*it;
}

}  // namespace restack::native

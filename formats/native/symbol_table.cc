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

bool byAddressSize(const SymbolEntry& a, const SymbolEntry& b) {
  return std::tie(a.address, a.size) < std::tie(b.address, b.size);
}

// Keeps the last entry of each run of equal addresses: the largest size, and among equal sizes
// the one latest in the symbol table (GCC's "f.localalias" precedes "f", glibc's internal
// "__GI_x" its public alias), as SymbolizableObjectFile::create keeps it after a stable sort.
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

Expected<std::vector<SymbolEntry>> readSymbolTable(const ImageSlice& slice, bool dynamic_only) {
  const llvm::object::ObjectFile& object = *slice.object;
  std::vector<SymbolEntry> entries;
  dynamic_only = dynamic_only && object.isELF();
  // The file of the local symbols that follow (ELF: the last STT_FILE symbol seen; symbols come
  // in table order).
  std::string file;
  for (const auto& [symbol, size] : llvm::object::computeSymbolSizes(object)) {
    if (object.isELF() && llvm::object::ELFSymbolRef(symbol).getELFType() == llvm::ELF::STT_FILE) {
      auto name = symbol.getName();
      if (name) {
        file = name->str();
      } else {
        llvm::consumeError(name.takeError());
        file.clear();
      }
      continue;
    }
    if (!keepSymbol(object, symbol)) continue;
    if (dynamic_only) {
      llvm::object::ELFSymbolRef elf(symbol);
      uint8_t visibility = elf.getOther() & 0x3;
      if (elf.getBinding() == llvm::ELF::STB_LOCAL ||
          (visibility != llvm::ELF::STV_DEFAULT && visibility != llvm::ELF::STV_PROTECTED)) {
        continue;
      }
    }
    auto name = symbol.getName();
    auto address = symbol.getAddress();
    if (!name || !address) {
      if (!name) llvm::consumeError(name.takeError());
      if (!address) llvm::consumeError(address.takeError());
      continue;
    }
    llvm::StringRef text = *name;
    if (object.isMachO()) text.consume_front("_");
    if (dynamic_only) text = text.take_until([](char c) { return c == '@'; });
    if (*address < slice.image_base) continue;  // not in the image (absolute symbols)
    const bool local = object.isELF() && llvm::object::ELFSymbolRef(symbol).getBinding() == llvm::ELF::STB_LOCAL;
    entries.push_back({*address - slice.image_base, size, text.str(), SymbolSource::kSymtab, local ? file : ""});
  }
  // computeSymbolSizes lists symbols in symbol-table order; sorting positions with the position
  // as the last key keeps that order among equal (address, size) pairs (a stable sort).
  std::vector<uint32_t> order(entries.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&entries](uint32_t a, uint32_t b) {
    return byAddressSize(entries[a], entries[b]) || (!byAddressSize(entries[b], entries[a]) && a < b);
  });
  std::vector<SymbolEntry> sorted;
  sorted.reserve(entries.size());
  for (uint32_t i : order) sorted.push_back(std::move(entries[i]));
  entries = std::move(sorted);
  keepOnePerAddress(entries);
  return entries;
}

bool isDetachedDebugFile(const ImageSlice& slice) {
  const llvm::object::ObjectFile& object = *slice.object;
  if (!object.isELF()) return false;
  for (const llvm::object::SectionRef& section : object.sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == ".text") return llvm::object::ELFSectionRef(section).getType() == llvm::ELF::SHT_NOBITS;
  }
  return false;
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

std::string_view cloneSuffix(std::string_view symbol, std::string_view function) {
  if (function.empty() || symbol.size() < function.size() + 2 || symbol.substr(0, function.size()) != function ||
      symbol[function.size()] != '.') {
    return {};
  }
  std::string_view suffix = symbol.substr(function.size() + 1);
  auto identifierStart = [](char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t at = 0;
  // Parts separated by '.': the first is an identifier, later ones identifiers or numbers; no
  // empty parts.
  bool expect_identifier = true;
  while (at <= suffix.size()) {
    size_t end = suffix.find('.', at);
    if (end == std::string_view::npos) end = suffix.size();
    std::string_view part = suffix.substr(at, end - at);
    if (part.empty()) return {};
    if (digit(part[0])) {
      if (expect_identifier) return {};
      for (char c : part) {
        if (!digit(c)) return {};
      }
    } else {
      if (!identifierStart(part[0])) return {};
      for (char c : part) {
        if (!identifierStart(c) && !digit(c)) return {};
      }
    }
    expect_identifier = false;
    at = end + 1;
  }
  return suffix;
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

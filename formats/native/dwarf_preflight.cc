#include "formats/native/dwarf_preflight.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugAbbrev.h>
#include <llvm/DebugInfo/DWARF/DWARFUnit.h>
#include <llvm/Object/Decompressor.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/DataExtractor.h>
#include <llvm/Support/Endian.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

namespace restack::native {

namespace {

// One unit index: a 16-byte header (version u32 2, or u16 5 and u16 padding; then u32 columns,
// units, buckets), buckets x u64 signatures, buckets x u32 unit numbers (0: empty bucket), then
// the column kinds and the offset and size tables (laid out as DWARF 5 §7.3.5.3 says).
Status checkUnitIndex(llvm::StringRef data, bool little_endian, const std::string& what) {
  llvm::DataExtractor extractor(data, little_endian, 8);
  uint64_t offset = 0;
  uint32_t version = extractor.getU32(&offset);
  if (version != 2) {
    offset = 0;
    version = extractor.getU16(&offset);
    offset += 2;
  }
  const uint32_t columns = extractor.getU32(&offset);
  const uint32_t units = extractor.getU32(&offset);
  const uint32_t buckets = extractor.getU32(&offset);     // a read past the end leaves `offset` as it was
  if (version != 2 && version != 5) return Status::ok();  // LLVM ignores an index of another version
  // LLVM's own size check computes (2 * units + 1) * 4 * columns in 32 bits, so counts that
  // wrap pass it and then size its allocations: checked here without wrapping.
  const uint64_t needed = 16 + uint64_t{buckets} * 12 + (2 * uint64_t{units} + 1) * 4 * uint64_t{columns};
  if (offset != 16 || needed > data.size()) {
    return malformed(what + " is truncated or its counts are corrupt (" + std::to_string(units) + " units, " +
                     std::to_string(buckets) + " buckets, " + std::to_string(columns) + " columns in " +
                     std::to_string(data.size()) + " bytes)");
  }
  std::vector<bool> seen(units, false);
  uint64_t at = 16 + uint64_t{buckets} * 8;
  for (uint32_t bucket = 0; bucket < buckets; ++bucket, at += 4) {
    uint64_t position = at;
    const uint32_t unit = extractor.getU32(&position);
    if (unit == 0) continue;
    if (unit > units || seen[unit - 1]) {
      return malformed(what + " is corrupt: bucket " + std::to_string(bucket) + " names unit " + std::to_string(unit) +
                       (unit > units ? " of " + std::to_string(units) : " a second time"));
    }
    seen[unit - 1] = true;
  }
  for (uint32_t unit = 0; unit < units; ++unit) {
    if (!seen[unit]) return malformed(what + " is corrupt: no bucket names unit " + std::to_string(unit + 1));
  }
  return Status::ok();
}

}  // namespace

Status checkPackageIndexes(const llvm::object::ObjectFile& package, const std::string& name) {
  const auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&package);
  if (!elf) return Status::ok();
  for (const llvm::object::ELFSectionRef section : elf->sections()) {
    llvm::Expected<llvm::StringRef> section_name = section.getName();
    if (!section_name) {
      llvm::consumeError(section_name.takeError());
      continue;
    }
    // LLVM finds DWARF sections by their name without leading '.', '_' and 'z' characters.
    llvm::StringRef bare = section_name->substr(std::min(section_name->find_first_not_of("._z"), section_name->size()));
    if (bare != "debug_cu_index" && bare != "debug_tu_index") continue;
    const std::string what = name + ": " + section_name->str();
    if (section.getFlags() & llvm::ELF::SHF_COMPRESSED) {
      return malformed(what + " is compressed; make the package again with llvm-dwp (it writes indexes uncompressed)");
    }
    auto contents = section.getContents();
    if (!contents) {
      return malformed(what + " cannot be read: " + llvm::toString(contents.takeError()));
    }
    RESTACK_RETURN_IF_ERROR(checkUnitIndex(*contents, elf->isLittleEndian(), what));
  }
  return Status::ok();
}

Status checkPackageSections(const llvm::object::ObjectFile& package, const std::string& name) {
  for (const llvm::object::SectionRef& section : package.sections()) {
    // The sections DWARFContext::create reads (DWARFObjInMemory skips the others).
    if (section.isBSS() || section.isVirtual() || section.isStripped()) continue;
    llvm::Expected<llvm::StringRef> section_name = section.getName();
    llvm::StringRef raw_name;
    if (section_name) {
      raw_name = *section_name;
    } else {
      llvm::consumeError(section_name.takeError());
    }
    const std::string what = name + ": section " + std::to_string(section.getIndex());
    llvm::Expected<llvm::object::section_iterator> relocated = section.getRelocatedSection();
    if (!relocated) {
      return malformed(what + " relocates a section that does not exist: " + llvm::toString(relocated.takeError()));
    }
    if (!section.isCompressed()) continue;
    llvm::StringRef data;
    if (auto contents = section.getContents()) {
      data = *contents;
    } else {
      llvm::consumeError(contents.takeError());  // LLVM then inflates nothing, and reports it
    }
    auto decompressor =
        llvm::object::Decompressor::create(raw_name, data, package.isLittleEndian(), package.getBytesInAddress() == 8);
    llvm::Error error = decompressor ? llvm::Error::success() : decompressor.takeError();
    if (!error) {
      llvm::SmallString<0> inflated;
      error = decompressor->resizeAndDecompress(inflated);
    }
    if (error) return malformed(what + " is compressed and cannot be inflated: " + llvm::toString(std::move(error)));
  }
  return Status::ok();
}

// Elf64_Chdr is {u32 type, u32 reserved,
// u64 size, u64 align}, Elf32_Chdr {u32 type, u32 size, u32 align}, in the file's byte order.
Status checkCompressedSections(const ImageSlice& slice, uint64_t max_uncompressed_bytes, uint64_t max_ratio) {
  const auto* elf = llvm::dyn_cast_or_null<llvm::object::ELFObjectFileBase>(slice.object);
  if (!elf) return Status::ok();
  bool is64 = elf->getBytesInAddress() == 8;
  llvm::endianness order = elf->isLittleEndian() ? llvm::endianness::little : llvm::endianness::big;
  uint64_t declared_total = 0;
  for (const llvm::object::ELFSectionRef section : elf->sections()) {
    if (!(section.getFlags() & llvm::ELF::SHF_COMPRESSED)) continue;
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;  // LLVM reports unreadable sections itself, as warnings
    }
    size_t header_size = is64 ? 24 : 12;
    if (contents->size() < header_size) continue;  // LLVM rejects a truncated header cleanly
    const char* size_field = contents->data() + (is64 ? 8 : 4);
    uint64_t declared = is64 ? llvm::support::endian::read<uint64_t>(size_field, order)
                             : llvm::support::endian::read<uint32_t>(size_field, order);
    uint64_t compressed = contents->size() - header_size;
    uint64_t ratio_limit =
        max_ratio == 0 || compressed > (UINT64_MAX - 4096) / max_ratio ? UINT64_MAX : compressed * max_ratio + 4096;
    declared_total = declared > UINT64_MAX - declared_total ? UINT64_MAX : declared_total + declared;
    if (declared > max_uncompressed_bytes || declared > ratio_limit || declared_total > max_uncompressed_bytes) {
      llvm::Expected<llvm::StringRef> name = section.getName();
      std::string section_name = name ? name->str() : "?";
      if (!name) llvm::consumeError(name.takeError());
      const std::string claim = slice.source + ": compressed section " + section_name + " claims " +
                                std::to_string(declared) + " bytes uncompressed from " + std::to_string(compressed) +
                                " compressed bytes";
      if (declared > ratio_limit) {
        return malformed(claim + ", more than " + std::to_string(max_ratio) +
                         " times its size (limits.max_decompression_ratio); the file is corrupt or hostile: upload "
                         "it again, or uncompressed (llvm-objcopy --decompress-debug-sections)");
      }
      const std::string total =
          declared > max_uncompressed_bytes
              ? std::string()
              : ", bringing the image's inflated debug sections to " + std::to_string(declared_total) + " bytes";
      return malformed(claim + total + ", over the limit of " + std::to_string(max_uncompressed_bytes) +
                       " bytes for inflated debug sections (what limits.max_upload_bytes leaves after the file, at "
                       "most 4 GiB); the file is corrupt, or upload it uncompressed "
                       "(llvm-objcopy --decompress-debug-sections)");
    }
  }
  return Status::ok();
}

bool unitsAreIndependent(llvm::DWARFContext& context) {
  const llvm::DWARFDebugAbbrev* abbreviations = context.getDebugAbbrev();
  if (!abbreviations) return true;
  if (llvm::Error error = abbreviations->parse()) {
    llvm::consumeError(std::move(error));
    return false;  // unreadable tables: take the careful road
  }
  for (const auto& [offset, set] : *abbreviations) {
    for (const llvm::DWARFAbbreviationDeclaration& declaration : set) {
      for (const auto& spec : declaration.attributes()) {
        switch (spec.Form) {
          case llvm::dwarf::DW_FORM_ref_addr:
          case llvm::dwarf::DW_FORM_ref_sig8:
          case llvm::dwarf::DW_FORM_GNU_ref_alt:
          case llvm::dwarf::DW_FORM_ref_sup4:
          case llvm::dwarf::DW_FORM_ref_sup8:
            return false;
          default:
            break;
        }
        if (spec.Attr == llvm::dwarf::DW_AT_dwo_name || spec.Attr == llvm::dwarf::DW_AT_GNU_dwo_name) {
          return false;
        }
      }
    }
  }
  // Units sharing one line table (DW_AT_stmt_list) would free it under each other's feet: the
  // walk drops each unit's table when done with it. Only the unit DIEs are read here.
  std::unordered_set<uint64_t> line_tables;
  for (const auto& unit : context.compile_units()) {
    if (unit->isTypeUnit()) continue;
    llvm::DWARFDie unit_die = unit->getUnitDIE(/*ExtractUnitDieOnly=*/true);
    if (!unit_die) continue;
    std::optional<uint64_t> offset = llvm::dwarf::toSectionOffset(unit_die.find(llvm::dwarf::DW_AT_stmt_list));
    if (offset && !line_tables.insert(*offset).second) return false;
  }
  return true;
}

}  // namespace restack::native

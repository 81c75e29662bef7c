#include "formats/native/dwarf_preflight.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/DWARF/DWARFDataExtractor.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugAbbrev.h>
#include <llvm/DebugInfo/DWARF/DWARFFormValue.h>
#include <llvm/DebugInfo/DWARF/DWARFUnit.h>
#include <llvm/Object/Decompressor.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/DataExtractor.h>
#include <llvm/Support/Endian.h>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace restack::native {

namespace {

std::string hex(uint64_t value) {
  return llvm::utohexstr(value, /*LowerCase=*/true);
}

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

namespace {

// The forms DWARF 5 §6.2.4.1 allows in line table entries, every one of which LLVM 19 reads and
// each of which takes at least one byte.
bool isLineEntryForm(uint64_t form) {
  switch (form) {
    case llvm::dwarf::DW_FORM_string:
    case llvm::dwarf::DW_FORM_line_strp:
    case llvm::dwarf::DW_FORM_strp:
    case llvm::dwarf::DW_FORM_strp_sup:
    case llvm::dwarf::DW_FORM_strx:
    case llvm::dwarf::DW_FORM_strx1:
    case llvm::dwarf::DW_FORM_strx2:
    case llvm::dwarf::DW_FORM_strx3:
    case llvm::dwarf::DW_FORM_strx4:
    case llvm::dwarf::DW_FORM_udata:
    case llvm::dwarf::DW_FORM_sdata:
    case llvm::dwarf::DW_FORM_data1:
    case llvm::dwarf::DW_FORM_data2:
    case llvm::dwarf::DW_FORM_data4:
    case llvm::dwarf::DW_FORM_data8:
    case llvm::dwarf::DW_FORM_data16:
    case llvm::dwarf::DW_FORM_block:
    case llvm::dwarf::DW_FORM_block1:
    case llvm::dwarf::DW_FORM_block2:
    case llvm::dwarf::DW_FORM_block4:
      return true;
    default:
      return false;
  }
}

// The forms whose value LLVM 19's DWARFFormValue::getAsUnsignedConstant returns. LLVM reads a
// file entry's directory index, time and size through it and dereferences the result unchecked,
// so any other form there is a read of a value never set.
bool isUnsignedConstantForm(uint64_t form) {
  switch (form) {
    case llvm::dwarf::DW_FORM_udata:
    case llvm::dwarf::DW_FORM_data1:
    case llvm::dwarf::DW_FORM_data2:
    case llvm::dwarf::DW_FORM_data4:
    case llvm::dwarf::DW_FORM_data8:
    case llvm::dwarf::DW_FORM_data16:
      return true;
    default:
      return false;
  }
}

// The name of a content type LLVM reads as an unsigned constant, empty for the others.
const char* unsignedConstantContent(uint64_t type) {
  switch (type) {
    case llvm::dwarf::DW_LNCT_directory_index:
      return "DW_LNCT_directory_index";
    case llvm::dwarf::DW_LNCT_timestamp:
      return "DW_LNCT_timestamp";
    case llvm::dwarf::DW_LNCT_size:
      return "DW_LNCT_size";
    default:
      return "";
  }
}

struct EntryFormat {
  uint64_t type;
  uint64_t form;
};

// An entry format as LLVM's parseV5EntryFormat reads it: nothing when LLVM stops there (a read
// past the header, or no DW_LNCT_path).
std::optional<std::vector<EntryFormat>> readEntryFormat(const llvm::DWARFDataExtractor& header, uint64_t& at) {
  llvm::Error error = llvm::Error::success();
  std::vector<EntryFormat> formats;
  const uint8_t count = header.getU8(&at, &error);
  for (uint8_t i = 0; i < count && !error; ++i) {
    const uint64_t type = header.getULEB128(&at, &error);
    const uint64_t form = header.getULEB128(&at, &error);
    formats.push_back({type, form});
  }
  if (error) {
    llvm::consumeError(std::move(error));
    return std::nullopt;
  }
  if (std::none_of(formats.begin(), formats.end(),
                   [](const EntryFormat& f) { return f.type == llvm::dwarf::DW_LNCT_path; })) {
    return std::nullopt;
  }
  return formats;
}

}  // namespace

Status checkLineTableHeader(llvm::StringRef section, uint64_t offset, bool little_endian) {
  // Field by field as DWARFDebugLine::Prologue::parse reads them; where LLVM stops with an error
  // of its own, so does the check, accepting.
  const llvm::DWARFDataExtractor data(section, little_endian, 0);
  if (!data.isValidOffset(offset)) return Status::ok();
  llvm::DataExtractor::Cursor cursor(offset);
  const auto [length, format] = data.getInitialLength(cursor);
  const llvm::DWARFDataExtractor table(data, cursor.tell() + length);
  const uint16_t version = table.getU16(cursor);
  const uint8_t address_size = table.getU8(cursor);
  table.getU8(cursor);  // segment selector size
  const uint64_t header_length = table.getUnsigned(cursor, format == llvm::dwarf::DWARF64 ? 8 : 4);
  const uint64_t end = header_length + cursor.tell();
  const llvm::DWARFDataExtractor header(table, end);
  header.skip(cursor, 5);  // minimum_instruction_length … line_range
  const uint8_t opcode_base = header.getU8(cursor);
  if (opcode_base > 0) header.skip(cursor, opcode_base - 1);
  uint64_t at = cursor.tell();
  if (!cursor) {
    llvm::consumeError(cursor.takeError());
    return Status::ok();
  }
  if (version != 5) return Status::ok();
  const std::string where = "line table at 0x" + hex(offset);
  auto refuse = [&](const char* entries, uint64_t form) {
    return malformed(where + " declares form 0x" + hex(form) + " for its " + entries +
                     " entries, which is no form of line table entries");
  };

  auto directories = readEntryFormat(header, at);
  if (!directories) return Status::ok();
  for (const EntryFormat& entry : *directories) {
    if (!isLineEntryForm(entry.form)) return refuse("directory", entry.form);
  }
  // The directory entries, to where the file entry format starts. LLVM reads each path, stopping
  // at the first it cannot read, and skips the other values unchecked: a block's length can take
  // the offset back, and an entry that ends where it began is read again, as many times as the
  // count says.
  const llvm::dwarf::FormParams params{version, address_size, format};
  llvm::Error error = llvm::Error::success();
  const uint64_t count = header.getULEB128(&at, &error);
  if (error) {
    llvm::consumeError(std::move(error));
    return Status::ok();
  }
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t entry_start = at;
    for (const EntryFormat& entry : *directories) {
      const uint64_t before = at;
      (void)llvm::DWARFFormValue::skipValue(static_cast<llvm::dwarf::Form>(entry.form), header, &at, params);
      if (entry.type == llvm::dwarf::DW_LNCT_path && (at <= before || at > end)) return Status::ok();
    }
    if (at <= entry_start) {
      return malformed(where + ": directory entry " + std::to_string(i) + " of " + std::to_string(count) +
                       " ends where it begins");
    }
  }
  if (at >= end) return Status::ok();
  auto files = readEntryFormat(header, at);
  if (!files) return Status::ok();
  for (const EntryFormat& entry : *files) {
    if (!isLineEntryForm(entry.form)) return refuse("file", entry.form);
    const char* content = unsignedConstantContent(entry.type);
    if (*content != '\0' && !isUnsignedConstantForm(entry.form)) {
      return malformed(where + " declares form 0x" + hex(entry.form) + " for its file entries' " + content +
                       ", which is no unsigned constant");
    }
  }
  return Status::ok();
}

Status checkUnitDies(llvm::DWARFUnit& unit, bool unit_die_only) {
  const llvm::DWARFDataExtractor data = unit.getDebugInfoExtractor();
  const uint64_t size = data.getData().size();
  const uint64_t end = unit.getNextUnitOffset();
  const llvm::DWARFAbbreviationDeclarationSet* abbreviations = unit.getAbbreviations();
  const llvm::dwarf::FormParams params = unit.getFormParams();
  auto where = [&](uint64_t die) { return "unit at 0x" + hex(unit.getOffset()) + ": DIE at 0x" + hex(die); };
  // One-byte ULEB128 values (most abbreviation codes, indexes and block lengths) are read here
  // without DataExtractor's call: the same value and offset (the check took 9% more CPU time in
  // the walk with the calls, 6% without).
  const uint8_t* bytes = data.getData().bytes_begin();
  uint64_t offset = unit.getOffset() + unit.getHeaderSize();
  size_t depth = 0;  // open scopes: extractDIEsToVector's parent stack less its sentinel
  bool unit_die = true;
  do {
    if (offset >= end) return Status::ok();  // LLVM: "tries to read DIEs at offset …", stops
    const uint64_t start = offset;
    // In the section: start < end <= size.
    const uint64_t code = bytes[offset] < 0x80 ? bytes[offset++] : data.getULEB128(&offset);
    if (code == 0) {  // a null entry closes a scope (a bad ULEB128 reads as one, in place)
      if (depth == 0) return Status::ok();
      --depth;
      unit_die = false;
      continue;
    }
    const llvm::DWARFAbbreviationDeclaration* declaration =
        abbreviations ? abbreviations->getAbbreviationDeclaration(static_cast<uint32_t>(code)) : nullptr;
    if (declaration == nullptr) return Status::ok();  // (LLVM too looks the code up cut to 32 bits)
    if (std::optional<size_t> fixed = declaration->getFixedAttributesByteSize(unit)) {
      offset += *fixed;
    } else {
      size_t index = 0;
      for (const llvm::DWARFAbbreviationDeclaration::AttributeSpec& spec : declaration->attributes()) {
        ++index;
        switch (spec.Form) {
          case llvm::dwarf::DW_FORM_udata:
          case llvm::dwarf::DW_FORM_sdata:
          case llvm::dwarf::DW_FORM_ref_udata:
          case llvm::dwarf::DW_FORM_strx:
          case llvm::dwarf::DW_FORM_addrx:
          case llvm::dwarf::DW_FORM_loclistx:
          case llvm::dwarf::DW_FORM_rnglistx:
          case llvm::dwarf::DW_FORM_GNU_addr_index:
          case llvm::dwarf::DW_FORM_GNU_str_index:
            if (offset < size && bytes[offset] < 0x80) {
              ++offset;
              continue;
            }
            break;
          case llvm::dwarf::DW_FORM_exprloc:
          case llvm::dwarf::DW_FORM_block:
            if (offset < size && bytes[offset] < 0x80) {
              offset += 1 + bytes[offset];
              continue;
            }
            break;
          default:
            if (std::optional<int64_t> fixed = spec.getByteSize(unit)) {
              offset += static_cast<uint64_t>(*fixed);
              continue;
            }
        }
        if (offset > size) {
          return malformed(where(start) + ": attribute " + std::to_string(index) + " (" +
                           llvm::dwarf::FormEncodingString(spec.Form).str() + ") would be read at 0x" + hex(offset) +
                           ", past the end of the section (0x" + hex(size) + " bytes)");
        }
        if (!llvm::DWARFFormValue::skipValue(spec.Form, data, &offset, params)) return Status::ok();
      }
    }
    if (offset <= start) {
      return malformed(where(start) + ": its values end at 0x" + hex(offset) +
                       ", where it begins or before (a block length of nearly 2^64 bytes)");
    }
    if (declaration->hasChildren()) {
      ++depth;
    } else if (unit_die) {
      return Status::ok();  // a unit DIE without children is the whole unit
    }
    if (unit_die && unit_die_only) return Status::ok();
    unit_die = false;
  } while (depth > 0);
  return Status::ok();
}

bool unitsAreIndependent(llvm::DWARFContext& context, const std::vector<llvm::DWARFUnit*>& units) {
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
  for (llvm::DWARFUnit* unit : units) {
    llvm::DWARFDie unit_die = unit->getUnitDIE(/*ExtractUnitDieOnly=*/true);
    if (!unit_die) continue;
    std::optional<uint64_t> offset = llvm::dwarf::toSectionOffset(unit_die.find(llvm::dwarf::DW_AT_stmt_list));
    if (offset && !line_tables.insert(*offset).second) return false;
  }
  return true;
}

}  // namespace restack::native

// Checks run on an image before its DWARF is walked, for what LLVM's DWARF reader does not
// protect against or what decides how the walk may proceed:
//
//  - checkCompressedSections: LLVM inflates a compressed debug section (ELF SHF_COMPRESSED) in one
//    allocation of the size its header declares and aborts the process when that fails. A
//    header declaring more than the limits below is rejected as corrupt. (GNU-style .zdebug_*
//    sections are not inflated by LLVM 19 at all: they are read as they are, no allocation.) Example: a .debug_info
//    of 16 compressed bytes whose Elf64_Chdr says ch_size = 0x1a00000001 (104 GB) -> error
//    "compressed section .debug_info claims 111669149697 bytes uncompressed from 16 …".
//  - unitsAreIndependent: whether every compile unit can be walked on its own thread. LLVM 19's
//    DWARFUnit has no locks, so two threads must never touch the same unit: a DIE reference
//    into another unit (DW_FORM_ref_addr, common after LTO), into a type unit (DW_FORM_ref_sig8),
//    into a supplementary file, a split-DWARF skeleton (DW_AT_dwo_name), or two units naming
//    the same line table (DW_AT_stmt_list; each unit's table is freed after its walk) make the
//    walk sequential. The answer comes from the abbreviation tables (.debug_abbrev: a few
//    hundred KB even for a 1 GB dSYM) and the unit DIEs alone. Example: clang -O2 -g without
//    LTO -> independent; the same code with -flto -> DW_FORM_ref_addr in the abbreviations ->
//    not independent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/common/status.h"
#include "formats/native/native_object.h"

namespace llvm {
class StringRef;
class DWARFContext;
class DWARFUnit;
namespace object {
class ObjectFile;
}
}  // namespace llvm

namespace restack::native {

// Real DWARF compresses 3-10x; deflate cannot exceed 1032x at all. A header claiming more than
// this is corrupt or hostile (a 300-byte section "holding" 100 GB). Ingest passes a lower,
// configured ratio (limits.max_decompression_ratio).
inline constexpr uint64_t kMaxCompressionRatio = 1100;

// Rejects compressed sections declaring more than `max_uncompressed_bytes`, all of them
// together declaring more than `max_uncompressed_bytes` (LLVM keeps every inflated section
// until the image is done), or one declaring more than `max_ratio` times its compressed size
// (with a 4 KiB allowance for tiny sections).
Status checkCompressedSections(const ImageSlice& slice, uint64_t max_uncompressed_bytes,
                               uint64_t max_ratio = kMaxCompressionRatio);

// A split-DWARF package's unit indexes (.debug_cu_index, .debug_tu_index), checked before LLVM
// reads them: LLVM 19's DWARFUnitIndex::parse trusts the index table, writing out of bounds
// when a bucket names a unit past the unit count and dereferencing null when a unit has no
// bucket (a corrupt package crashed the process, found by mutating a real one), and allocates a
// column array per bucket. Accepted: an index whose buckets name each unit 1..N exactly once.
// Example: a DWARF 5 index of 2 columns, 2 units, 4 buckets, bucket indexes {0, 2, 1, 0} -> ok;
// {0, 3, 1, 0} -> error (unit 3 of 2). Compressed index sections are refused (llvm-dwp writes
// them uncompressed, and their inflated bytes cannot be checked before LLVM parses them).
Status checkPackageIndexes(const llvm::object::ObjectFile& package, const std::string& name);

// What LLVM would report while it creates the package's DWARFContext, inside
// DWARFContext::getDWOContext, where its reports go to standard error (LLVM's default handlers,
// which the walk replaces only once the context exists): a relocation section naming a target
// section that does not exist, and a compressed section that does not inflate (a bad header or
// stream). llvm-dwp writes neither, so such a package is refused. Each compressed section is
// inflated once here the way LLVM will (checkCompressedSections bounds the sizes first), one at a
// time, and freed: the check never holds more than LLVM then holds at once.
// Example: a .debug_str.dwo whose zlib stream is cut short -> error "… cannot be inflated: …".
Status checkPackageSections(const llvm::object::ObjectFile& package, const std::string& name);

// The header of the line table at `offset` of `section` (.debug_line), checked before LLVM
// parses it (DWARFDebugLine::Prologue::parse). A DWARF 5 header declares the forms of its own
// directory and file entries, and LLVM 19 reads each entry with DWARFFormValue::extractValue,
// which ends in llvm_unreachable, a crash in a release build, on a form it does not know (found
// by fuzz_dwp in a -gsplit-dwarf library's line table; llvm-dwarfdump-19 --debug-line crashes on
// it too); DW_FORM_indirect takes the form from the entry itself, DW_FORM_addr reads as many
// bytes as the header's address size says (LLVM handles 1, 2, 4 and 8 only), and an entry of
// zero-width forms (DW_FORM_flag_present) takes no bytes, so LLVM adds one per declared count,
// up to 2^64. Accepted: headers of other versions (LLVM reads their names as strings), and
// entries whose forms are those DWARF 5 allows there (§6.2.4.1: strings, string offsets and
// indexes, constants, blocks, data16). What LLVM stops reading on its own (a truncated header,
// no path in a format) is accepted too. Example: a file entry format {DW_LNCT_path
// DW_FORM_line_strp, DW_LNCT_MD5 0x00} -> error "… declares form 0x0 for its file entries …".
Status checkLineTableHeader(llvm::StringRef section, uint64_t offset, bool little_endian);

// The DIEs of `unit` as LLVM's DWARFUnit::extractDIEsToVector and DWARFDebugInfoEntry::extractFast
// will read them, checked before LLVM reads any. extractFast skips the value of an attribute
// without checking that it stays in the section: a block's length moves the offset anywhere, and
// the DIE's next ULEB128 value is then read there (LLVM's DataExtractor only asserts the offset):
// a SEGV, found by fuzz_dwp in a package whose DW_AT_high_pc became DW_FORM_block4 of 0xcafebabe
// bytes (llvm-dwarfdump-19 --debug-info crashes on it too). A DW_FORM_block length near 2^64
// takes the offset back instead, and LLVM reads the same DIEs again, each time adding them to the
// unit's array, without end. Refused: a DIE whose next ULEB128 or string value would be read past
// the section, and a DIE that ends where it begins or before. What LLVM stops at by itself (an
// abbreviation code the unit does not have, a form it does not know, the unit's end) ends the
// check, accepted. `unit_die_only`: the unit DIE alone (what LLVM extracts first, for the unit's
// attributes). Costs about 6% more CPU time in the walk (a RelWithDebInfo `restack` binary,
// 28.5 MB of .debug_info, one thread: 0.49 s -> 0.52 s a walk).
// Example: a subprogram at 0x84 of a 0x8e-byte .debug_info.dwo whose DW_AT_high_pc is a
// DW_FORM_block4 ("length" 0x195f9d40, the bytes of the next values) followed by DW_AT_frame_base
// DW_FORM_exprloc -> error "unit at 0x0: DIE at 0x84: attribute 2 (DW_FORM_exprloc) would be read
// at 0x195f9dc8, past the end of the section (0x8e bytes)".
Status checkUnitDies(llvm::DWARFUnit& unit, bool unit_die_only);

// Whether the units can be walked on threads of their own. Call before any other thread touches
// the context, with units whose unit DIE passed checkUnitDies (it extracts their unit DIEs).
bool unitsAreIndependent(llvm::DWARFContext& context, const std::vector<llvm::DWARFUnit*>& units);

}  // namespace restack::native

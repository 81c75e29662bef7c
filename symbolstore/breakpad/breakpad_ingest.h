// Ingest of Breakpad symbol files (`.sym`, upload kind "breakpad"): the text dump_syms writes from
// an image's DWARF becomes the same native records (symbolstore/native/native_records.h) that
// ingesting the image itself writes, so an event naming the image's ELF build id or Mach-O UUID
// restores the same frames from either upload.
//
// Which image (the MODULE id is Breakpad's "debug id": the first 16 bytes of the identifier,
// printed as a GUID, followed by an age; INFO CODE_ID, when present, is the full identifier):
//
//   ELF (MODULE os "Linux" or "Android"): Breakpad prints the first 16 bytes of the GNU build id
//   with the GUID's first three fields (u32, u16, u16) byte-swapped. Build id
//   ba78e30f 9664 d015 0fba525ab5981b19 0011aabb (20 bytes):
//     MODULE Linux arm64 0FE378BA649615D00FBA525AB5981B190 libapm.so
//     INFO CODE_ID BA78E30F9664D0150FBA525AB5981B190011AABB
//   -> image 'I' ba78e30f…0011aabb (the full build id from CODE_ID, as ingesting libapm.so keys
//      it), with the aliases the native path writes: ba78e30f9664d0150fba525ab5981b19 (16-byte
//      prefix), 0fe378ba649615d00fba525ab5981b19 and 0fe378ba649615d00fba525ab5981b190 (the
//      Breakpad forms). A MODULE id whose age is not 0 is an alias too.
//   Without INFO CODE_ID (old Breakpad dump_syms), the full build id is unknown: the image is
//   keyed by the un-swapped 16-byte prefix (ba78e30f9664d0150fba525ab5981b19), so frames must
//   name that prefix or the Breakpad id; a frame naming the 20-byte build id does not find it
//   (the report warns).
//
//   Mach-O (MODULE os "mac" or "iOS"): Breakpad prints the UUID unswapped.
//     MODULE mac arm64 4C4C44BE55553144A18FB1819E5487350 Demo
//   -> image 'I' 4c4c44be55553144a18fb1819e548735, alias …8735 + "0", as for the dSYM.
//
//   Windows (PDB GUID + age, PE images): not supported; the native store has no PE images.
//
// Addresses in .sym files are relative to the image's load address: the ELF file addresses of a
// shared library or PIE executable (first PT_LOAD at 0) and Mach-O offsets from __TEXT, which is
// what the native store keeps (formats/native/native_object.h). A non-PIE ELF executable's .sym
// is relative to its first PT_LOAD, the store's records for it are not: frames of such
// executables need the image itself uploaded.
//
// What is written: FUNC records with their lines and INLINE records become FunctionRecords
// (symbolstore/breakpad/sym_function.h: no columns, no clone kinds), PUBLIC records the symbol
// tier (no sizes: each runs to the next symbol), names and FILE paths the image's string blocks,
// plus the module index (app, build, MODULE name). Names are dump_syms' demangled names spelled
// as LLVM spells them (breakpad_store::llvmStyleName); a function template's return type, which
// llvm-symbolizer prints and dump_syms drops, cannot be restored, nor can the clone kind of gcc's
// ".constprop.0"/".cold" parts (dump_syms names them by their source function). As for native uploads, the DWARF tier
// of the latest upload with functions replaces an earlier one of the same image, and the symbol tier is replaced only
// by at least as many symbols. The report's kind is kElf or kMachO (the image the file describes); its ids are the
// canonical ids above. Streaming: the file is mapped, one FUNC is held at a time; FILE and INLINE_ORIGIN names (views
// into the mapping) and the PUBLIC records are kept for the whole file, as the native path keeps an image's string
// dictionary and symbol table.
#pragma once

#include <string_view>

#include "formats/common/status.h"
#include "symbolstore/ingest.h"
#include "symbolstore/store.h"

namespace restack {

// True when `head` (the first bytes of an upload) starts with "MODULE <os> <arch> <id> <name>".
bool looksLikeBreakpad(std::string_view head);

// Never throws: a stray exception (std::bad_alloc included) becomes an error value.
Expected<IngestReport> ingestBreakpad(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                      const IngestOptions& options);

}  // namespace restack

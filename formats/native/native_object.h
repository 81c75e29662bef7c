// Opening native symbol files: ELF shared objects (Android), Mach-O images and dSYM companions
// (iOS), fat/universal Mach-O files and .dSYM bundle directories.
//
// One upload can hold several images: a fat Mach-O holds one slice per architecture, each with
// its own LC_UUID, and a .dSYM bundle may hold several DWARF files. `NativeFile::open` turns the
// upload into a list of `ImageSlice`s, one per debug id, each naming the image it describes:
//
//   Foo.dSYM/Contents/Resources/DWARF/Foo (fat: arm64 + x86_64)
//     -> slice {macho, arm64,  debug_id "4c4c44..." , module "Foo", image_base 0x100000000}
//     -> slice {macho, x86_64, debug_id "4c4c44b2...", module "Foo", image_base 0x100000000}
//   libapm.so (ELF, .note.gnu.build-id ba78e30f9664d015 0fba525ab5981b19 0011aabb)
//     -> slice {elf, aarch64, debug_id "ba78e30f...0011aabb" (full build id), module "libapm.so",
//               image_base 0}
//
// Addresses: DWARF and symbol tables hold virtual addresses. Stack frames give Mach-O addresses
// as offsets from the image's __TEXT segment and Android addresses as file addresses (pc), so
// everything the store keeps is `virtual address - image_base`, with image_base = __TEXT.vmaddr
// for Mach-O and 0 for ELF.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"

namespace llvm::object {
class ObjectFile;
}

namespace restack::native {

enum class ObjectFormat : uint8_t { kMachO = 1, kElf = 2 };
const char* objectFormatName(ObjectFormat format);

struct ImageSlice {
  ObjectFormat format = ObjectFormat::kElf;
  std::string debug_id;                              // lowercase hex: Mach-O UUID (32 digits) or the full GNU build id
  std::string arch;                                  // "arm64", "x86_64", "aarch64", "armv7" …
  std::string module;                                // image name as frames print it: "Foo", "libapm.so", "UIKitCore"
  uint64_t image_base = 0;                           // subtract from virtual addresses (see the header comment)
  bool has_dwarf = false;                            // a non-empty .debug_info / __debug_info section
  bool is_dsym = false;                              // Mach-O MH_DSYM companion (no code, DWARF only)
  const llvm::object::ObjectFile* object = nullptr;  // owned by the NativeFile
  // The read-only file mapping the object lies in; empty for in-memory content. Pages of it that
  // were read may be released (MADV_DONTNEED: the kernel reads them from the file again if they
  // are touched later), which keeps a walk's resident memory from growing with the file.
  std::string_view mapping;
  std::string source;  // file the slice came from, for messages
  // The split-DWARF package (`libfoo.so.dwp`, llvm-dwp's output) uploaded beside an ELF library
  // built with -gsplit-dwarf: the walk reads each skeleton unit's split unit from it
  // (dwarf_walker.h). Empty when none came with the upload.
  std::string dwp_path;
};

struct NativeOpenOptions {
  // Name used in messages (the files of a folder are named inside it: "App.dSYM/Contents/…")
  // and, for ELF without DT_SONAME / Mach-O executables, its file name as module name.
  // Default: the path in messages, its file name as module name.
  std::string display_name;
  // A split-DWARF package to read beside the ELF images of the upload (ImageSlice::dwp_path).
  std::string dwp_path;
};

// Owns the mapped files and parsed objects behind a list of slices.
class NativeFile {
 public:
  // `path` is a file (ELF, thin or fat Mach-O) or a directory that is or contains .dSYM bundles
  // (every file under */Contents/Resources/DWARF/ is read).
  static Expected<std::unique_ptr<NativeFile>> open(const std::string& path, const NativeOpenOptions& options = {});
  // In-memory content. `bytes` must outlive the NativeFile.
  static Expected<std::unique_ptr<NativeFile>> fromBytes(std::string_view bytes, const NativeOpenOptions& options = {});
  ~NativeFile();
  NativeFile(const NativeFile&) = delete;
  NativeFile& operator=(const NativeFile&) = delete;

  const std::vector<ImageSlice>& slices() const { return slices_; }
  // Total bytes of the files read (for progress and reports).
  uint64_t inputBytes() const { return input_bytes_; }

 private:
  NativeFile();
  Status addBuffer(std::string_view bytes, const std::string& source, const std::string& name);
  struct Storage;
  std::unique_ptr<Storage> storage_;
  std::vector<ImageSlice> slices_;
  uint64_t input_bytes_ = 0;
};

// The forms a frame may print for `debug_id` besides itself, so that every form finds the same
// image (all lowercase hex):
//   ELF build id b = ba78e30f 9664 d015 0fba525ab5981b19 0011aabb (20 bytes)
//     -> "ba78e30f9664d0150fba525ab5981b19"      first 16 bytes (Android SDK lines)
//     -> "0fe378ba6496 15d0 0fba525ab5981b19"    first 16 bytes as a little-endian GUID (Breakpad)
//     -> the Breakpad form followed by "0"       Breakpad's age suffix
//   (build ids shorter than 16 bytes are padded with zeros first, as Breakpad does)
//   Mach-O UUID u -> u + "0" (Breakpad age suffix)
// True for a .dwp package or a .dwo file (split DWARF: its debug sections end in ".dwo").
bool isSplitDwarf(const llvm::object::ObjectFile& object);

std::vector<std::string> debugIdAliases(ObjectFormat format, std::string_view debug_id);

}  // namespace restack::native

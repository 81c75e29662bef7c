#include "formats/native/native_object.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MachO.h>
#include <llvm/Object/Binary.h>
#include <llvm/Object/BuildID.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/MachO.h>
#include <llvm/Object/MachOUniversal.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "formats/common/mapped_file.h"

namespace restack::native {
namespace fs = std::filesystem;
using llvm::object::MachOObjectFile;
using llvm::object::ObjectFile;

const char* objectFormatName(ObjectFormat format) {
  return format == ObjectFormat::kMachO ? "macho" : "elf";
}

struct NativeFile::Storage {
  std::vector<MappedFile> files;
  std::vector<std::unique_ptr<llvm::object::Binary>> binaries;
  std::vector<std::unique_ptr<ObjectFile>> slices;
};

NativeFile::NativeFile() : storage_(std::make_unique<Storage>()) {}
NativeFile::~NativeFile() = default;

namespace {

std::string hexOf(llvm::ArrayRef<uint8_t> bytes) {
  return llvm::toHex(bytes, /*LowerCase=*/true);
}

std::string errorText(llvm::Error error) {
  return llvm::toString(std::move(error));
}

std::string baseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string magicHex(std::string_view bytes) {
  return hexOf(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), std::min<size_t>(bytes.size(), 4)));
}

bool hasDwarf(const ObjectFile& object) {
  for (const auto& section : object.sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if ((*name == ".debug_info" || *name == "__debug_info" || *name == ".zdebug_info") && section.getSize() > 0) {
      return true;
    }
  }
  return false;
}

// Mach-O: the install name of a dylib ("@rpath/Foo.framework/Foo" -> "Foo"), else `fallback`.
std::string machOModuleName(const MachOObjectFile& macho, const std::string& fallback) {
  for (const auto& command : macho.load_commands()) {
    if (command.C.cmd != llvm::MachO::LC_ID_DYLIB) continue;
    auto dylib = macho.getDylibIDLoadCommand(command);
    if (dylib.dylib.name >= command.C.cmdsize) break;
    const char* start = command.Ptr + dylib.dylib.name;
    std::string_view name(start, strnlen(start, command.C.cmdsize - dylib.dylib.name));
    if (!name.empty()) return baseName(name);
  }
  return fallback;
}

uint64_t textVmaddr(const MachOObjectFile& macho) {
  for (const auto& command : macho.load_commands()) {
    if (command.C.cmd == llvm::MachO::LC_SEGMENT_64) {
      auto segment = macho.getSegment64LoadCommand(command);
      if (std::string_view(segment.segname, strnlen(segment.segname, 16)) == "__TEXT") {
        return segment.vmaddr;
      }
    } else if (command.C.cmd == llvm::MachO::LC_SEGMENT) {
      auto segment = macho.getSegmentLoadCommand(command);
      if (std::string_view(segment.segname, strnlen(segment.segname, 16)) == "__TEXT") {
        return segment.vmaddr;
      }
    }
  }
  return 0;
}

std::string machOArch(const MachOObjectFile& macho) {
  const char* flag = nullptr;
  uint32_t cpu_type = macho.is64Bit() ? macho.getHeader64().cputype : macho.getHeader().cputype;
  uint32_t cpu_subtype = macho.is64Bit() ? macho.getHeader64().cpusubtype : macho.getHeader().cpusubtype;
  MachOObjectFile::getArchTriple(cpu_type, cpu_subtype, nullptr, &flag);
  return flag ? flag : "unknown";
}

Expected<ImageSlice> describeMachO(const MachOObjectFile& macho, const std::string& source, const std::string& name) {
  auto uuid = macho.getUuid();
  if (uuid.size() != 16) {
    return malformed(source +
                     ": Mach-O file has no LC_UUID load command, so frames cannot be "
                     "matched to it; link without -no_uuid");
  }
  uint32_t file_type = macho.is64Bit() ? macho.getHeader64().filetype : macho.getHeader().filetype;
  if (file_type == llvm::MachO::MH_OBJECT) {
    return unsupported(source +
                       ": a Mach-O object file (.o) is not an image; upload the linked "
                       "binary or its dSYM");
  }
  ImageSlice slice;
  slice.format = ObjectFormat::kMachO;
  slice.debug_id = hexOf(uuid);
  slice.arch = machOArch(macho);
  slice.is_dsym = file_type == llvm::MachO::MH_DSYM;
  slice.module = slice.is_dsym ? name : machOModuleName(macho, name);
  slice.image_base = textVmaddr(macho);
  slice.has_dwarf = hasDwarf(macho);
  slice.object = &macho;
  slice.source = source;
  return slice;
}

// LLVM's ELFObjectFile stops the process (report_fatal_error) when a symbol table entry cannot
// be read, e.g. a corrupt sh_entsize. Check the tables up front so bad uploads become errors.
template <class ELFT>
Status checkSymbolTables(const llvm::object::ELFObjectFile<ELFT>& object, const std::string& source) {
  const auto& elf = object.getELFFile();
  auto sections = elf.sections();
  if (!sections) return malformed(source + ": " + errorText(sections.takeError()));
  for (const auto& section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_SYMTAB && section.sh_type != llvm::ELF::SHT_DYNSYM) {
      continue;
    }
    if (section.sh_entsize != sizeof(typename ELFT::Sym)) {
      return malformed(source + ": symbol table has entry size " + std::to_string(section.sh_entsize) + ", expected " +
                       std::to_string(sizeof(typename ELFT::Sym)));
    }
    auto symbols = elf.symbols(&section);
    if (!symbols) return malformed(source + ": " + errorText(symbols.takeError()));
    auto strings = elf.getStringTableForSymtab(section);
    if (!strings) return malformed(source + ": " + errorText(strings.takeError()));
  }
  return Status::ok();
}

Status checkElf(const ObjectFile& object, const std::string& source) {
  if (auto* elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(&object)) {
    return checkSymbolTables(*elf, source);
  }
  if (auto* elf = llvm::dyn_cast<llvm::object::ELF32LEObjectFile>(&object)) {
    return checkSymbolTables(*elf, source);
  }
  if (auto* elf = llvm::dyn_cast<llvm::object::ELF64BEObjectFile>(&object)) {
    return checkSymbolTables(*elf, source);
  }
  if (auto* elf = llvm::dyn_cast<llvm::object::ELF32BEObjectFile>(&object)) {
    return checkSymbolTables(*elf, source);
  }
  return unsupported(source + ": unknown ELF class");
}

Expected<ImageSlice> describeElf(const ObjectFile& elf, const std::string& source, const std::string& name) {
  RESTACK_RETURN_IF_ERROR(checkElf(elf, source));
  auto build_id = llvm::object::getBuildID(&elf);
  if (build_id.empty()) {
    if (isSplitDwarf(elf)) {
      return unsupported(source +
                         ": is split DWARF (a .dwp package or .dwo file), which describes no library by "
                         "itself; upload it zipped together with its library (libfoo.so and libfoo.so.dwp)");
    }
    return malformed(source +
                     ": ELF file has no .note.gnu.build-id, so frames cannot be matched "
                     "to it; link with -Wl,--build-id");
  }
  ImageSlice slice;
  slice.format = ObjectFormat::kElf;
  slice.debug_id = hexOf(build_id);
  slice.arch = std::string(llvm::Triple::getArchTypeName(elf.getArch()));
  std::string module = name;
  // A separate debug file is usually named after its library: "libfoo.so.debug", "libfoo.so.dbg".
  for (std::string_view suffix : {".debug", ".dbg", ".sym"}) {
    if (module.size() > suffix.size() && module.ends_with(suffix)) {
      module.resize(module.size() - suffix.size());
      break;
    }
  }
  slice.module = module;
  slice.image_base = 0;
  slice.has_dwarf = hasDwarf(elf);
  slice.object = &elf;
  slice.source = source;
  return slice;
}

}  // namespace

Status NativeFile::addBuffer(std::string_view bytes, const std::string& source, const std::string& name) {
  input_bytes_ += bytes.size();
  llvm::MemoryBufferRef buffer(llvm::StringRef(bytes.data(), bytes.size()), name);
  auto binary = llvm::object::createBinary(buffer);
  if (!binary) {
    std::string reason = errorText(binary.takeError());
    return malformed(source + ": not a readable ELF or Mach-O file (first bytes " + magicHex(bytes) + "): " + reason);
  }
  llvm::object::Binary* raw = binary->get();
  storage_->binaries.push_back(std::move(*binary));

  if (auto* universal = llvm::dyn_cast<llvm::object::MachOUniversalBinary>(raw)) {
    size_t before = slices_.size();
    for (const auto& member : universal->objects()) {
      auto object = member.getAsObjectFile();
      if (!object) {
        return malformed(source + ": fat Mach-O slice " + member.getArchFlagName() +
                         " cannot be read: " + errorText(object.takeError()));
      }
      auto slice = describeMachO(**object, source + " (" + member.getArchFlagName() + ")", name);
      if (!slice) return slice.error();
      storage_->slices.push_back(std::move(*object));
      slices_.push_back(std::move(*slice));
    }
    if (slices_.size() == before) return malformed(source + ": fat Mach-O file has no slices");
    return Status::ok();
  }
  if (auto* macho = llvm::dyn_cast<MachOObjectFile>(raw)) {
    auto slice = describeMachO(*macho, source, name);
    if (!slice) return slice.error();
    slices_.push_back(std::move(*slice));
    return Status::ok();
  }
  if (auto* object = llvm::dyn_cast<ObjectFile>(raw); object && object->isELF()) {
    auto slice = describeElf(*object, source, name);
    if (!slice) return slice.error();
    slices_.push_back(std::move(*slice));
    return Status::ok();
  }
  return unsupported(source + ": is neither ELF nor Mach-O (first bytes " + magicHex(bytes) +
                     "); native symbols must be ELF (Android) or Mach-O/dSYM (iOS)");
}

Expected<std::unique_ptr<NativeFile>> NativeFile::open(const std::string& path, const NativeOpenOptions& options) {
  std::unique_ptr<NativeFile> file(new NativeFile());
  std::error_code error;
  if (fs::is_directory(path, error)) {
    // A .dSYM bundle, or a folder (an unpacked zip) holding one or more bundles.
    std::vector<std::string> dwarf_files;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, error);
    if (error) return ioError("cannot read directory " + path + ": " + error.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (error) return ioError("cannot read directory " + path + ": " + error.message());
      if (!it->is_regular_file(error)) continue;
      fs::path parent = it->path().parent_path();
      if (parent.filename() == "DWARF" && parent.parent_path().filename() == "Resources" &&
          parent.parent_path().parent_path().filename() == "Contents") {
        dwarf_files.push_back(it->path().string());
      }
    }
    if (dwarf_files.empty()) {
      return invalidArgument(path +
                             ": directory holds no .dSYM bundle (expected files under "
                             "<Name>.dSYM/Contents/Resources/DWARF/)");
    }
    std::sort(dwarf_files.begin(), dwarf_files.end());
    // Messages name a file inside the upload as the user knows it (App.dSYM/Contents/…), not by
    // the temporary folder an archive was unpacked into.
    const std::string folder = options.display_name.empty() ? path : options.display_name;
    for (const std::string& dwarf_file : dwarf_files) {
      auto mapped = MappedFile::open(dwarf_file);
      if (!mapped) return mapped.error();
      file->storage_->files.push_back(std::move(*mapped));
      std::string_view bytes = file->storage_->files.back().bytes();
      size_t before = file->slices_.size();
      const std::string source = folder + "/" + fs::path(dwarf_file).lexically_relative(path).string();
      RESTACK_RETURN_IF_ERROR(file->addBuffer(bytes, source, baseName(dwarf_file)));
      for (size_t i = before; i < file->slices_.size(); ++i) file->slices_[i].mapping = bytes;
    }
    return file;
  }
  auto mapped = MappedFile::open(path);
  if (!mapped) return mapped.error();
  file->storage_->files.push_back(std::move(*mapped));
  std::string_view bytes = file->storage_->files.back().bytes();
  std::string name = options.display_name.empty() ? baseName(path) : baseName(options.display_name);
  RESTACK_RETURN_IF_ERROR(file->addBuffer(bytes, options.display_name.empty() ? path : options.display_name, name));
  for (ImageSlice& slice : file->slices_) {
    slice.mapping = bytes;
    if (slice.format == ObjectFormat::kElf) slice.dwp_path = options.dwp_path;
  }
  return file;
}

Expected<std::unique_ptr<NativeFile>> NativeFile::fromBytes(std::string_view bytes, const NativeOpenOptions& options) {
  std::unique_ptr<NativeFile> file(new NativeFile());
  std::string name = options.display_name.empty() ? "upload" : baseName(options.display_name);
  RESTACK_RETURN_IF_ERROR(file->addBuffer(bytes, name, name));
  return file;
}

bool isSplitDwarf(const ObjectFile& object) {
  for (const llvm::object::SectionRef& section : object.sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == ".debug_info.dwo" || *name == ".debug_cu_index") return true;
  }
  return false;
}

std::vector<std::string> debugIdAliases(ObjectFormat format, std::string_view debug_id) {
  std::vector<std::string> aliases;
  if (format == ObjectFormat::kMachO) {
    aliases.push_back(std::string(debug_id) + "0");
    return aliases;
  }
  // 16 bytes of the build id, zero-padded.
  std::string first16(debug_id.substr(0, std::min<size_t>(debug_id.size(), 32)));
  first16.resize(32, '0');
  if (first16 != debug_id) aliases.push_back(first16);
  // Byte-swap the GUID fields (u32, u16, u16) the way Breakpad prints ELF ids.
  auto byteAt = [&](size_t i) { return first16.substr(2 * i, 2); };
  std::string swapped;
  for (size_t i : {3, 2, 1, 0, 5, 4, 7, 6}) swapped += byteAt(i);
  swapped += first16.substr(16);
  if (swapped != debug_id) aliases.push_back(swapped);
  aliases.push_back(swapped + "0");
  std::sort(aliases.begin(), aliases.end());
  aliases.erase(std::unique(aliases.begin(), aliases.end()), aliases.end());
  return aliases;
}

}  // namespace restack::native

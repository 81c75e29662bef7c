#include "formats/native/objc_metadata.h"

#include <llvm/BinaryFormat/MachO.h>
#include <llvm/Object/MachO.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_set>

namespace restack::native {
namespace {

using llvm::object::MachOObjectFile;

struct Segment {
  uint64_t vmaddr, vmsize, fileoff, filesize;
};

// Bounds-checked reads of the image's memory as laid out in the file.
class ImageMemory {
 public:
  ImageMemory(const MachOObjectFile& macho, uint64_t base, bool arm64e)
      : data_(macho.getData()), base_(base), arm64e_(arm64e) {
    for (const auto& command : macho.load_commands()) {
      if (command.C.cmd != llvm::MachO::LC_SEGMENT_64) continue;
      auto segment = macho.getSegment64LoadCommand(command);
      segments_.push_back({segment.vmaddr, segment.vmsize, segment.fileoff, segment.filesize});
    }
  }

  std::optional<std::string_view> bytes(uint64_t vmaddr, uint64_t size) const {
    for (const Segment& segment : segments_) {
      if (vmaddr < segment.vmaddr || vmaddr - segment.vmaddr >= segment.filesize) continue;
      uint64_t offset_in_segment = vmaddr - segment.vmaddr;
      if (size > segment.filesize - offset_in_segment) return std::nullopt;
      uint64_t file_offset = segment.fileoff + offset_in_segment;
      if (file_offset > data_.size() || size > data_.size() - file_offset) return std::nullopt;
      return std::string_view(data_.data() + file_offset, size);
    }
    return std::nullopt;
  }

  std::optional<uint64_t> u64(uint64_t vmaddr) const {
    auto b = bytes(vmaddr, 8);
    if (!b) return std::nullopt;
    uint64_t value;
    std::memcpy(&value, b->data(), 8);
    return value;
  }

  std::optional<uint32_t> u32(uint64_t vmaddr) const {
    auto b = bytes(vmaddr, 4);
    if (!b) return std::nullopt;
    uint32_t value;
    std::memcpy(&value, b->data(), 4);
    return value;
  }

  // A pointer field: plain address or chained-fixup rebase; 0 for binds and nulls.
  uint64_t pointer(uint64_t vmaddr) const {
    auto raw = u64(vmaddr);
    if (!raw || *raw == 0) return 0;
    uint64_t target;
    if (arm64e_) {
      // dyld_chained_ptr_arm64e_*: bit 63 auth, bit 62 bind.
      if ((*raw >> 62) & 1) return 0;
      target = (*raw >> 63) ? (*raw & 0xffffffffull) : (*raw & ((1ull << 43) - 1));
    } else {
      // dyld_chained_ptr_64*: bit 63 bind, target in bits 0..35.
      if (*raw >> 63) return 0;
      target = *raw & ((1ull << 36) - 1);
    }
    if (target < base_) target += base_;  // *_OFFSET formats store offsets from the image base
    return target;
  }

  std::optional<std::string_view> cString(uint64_t vmaddr, size_t max_length = 4096) const {
    for (const Segment& segment : segments_) {
      if (vmaddr < segment.vmaddr || vmaddr - segment.vmaddr >= segment.filesize) continue;
      uint64_t offset = segment.fileoff + (vmaddr - segment.vmaddr);
      uint64_t segment_end = std::min<uint64_t>(segment.fileoff + segment.filesize, data_.size());
      if (offset >= segment_end) return std::nullopt;
      size_t limit = static_cast<size_t>(std::min<uint64_t>(segment_end - offset, max_length));
      const char* start = data_.data() + offset;
      size_t length = strnlen(start, limit);
      if (length == limit || length == 0) return std::nullopt;
      return std::string_view(start, length);
    }
    return std::nullopt;
  }

 private:
  llvm::StringRef data_;
  uint64_t base_;
  bool arm64e_;
  std::vector<Segment> segments_;
};

class MethodCollector {
 public:
  MethodCollector(const ImageMemory& memory, uint64_t base, const ObjcReadOptions& options)
      : memory_(memory), base_(base), options_(options) {}

  // Reads a method_list_t at `list` and names each method "<kind>[<owner> <selector>]".
  void readMethodList(uint64_t list, char kind, std::string_view owner) {
    if (list == 0 || (list & 1)) return;  // absent, or a preoptimized list of lists
    // Compilers give every class and category its own list; reading one twice (a corrupt file
    // pointing many categories at it) would only repeat work.
    if (!visited_lists_.insert(list).second) return;
    auto header = memory_.u32(list);
    auto count = memory_.u32(list + 4);
    if (!header || !count) return;
    bool relative = (*header & 0x80000000u) != 0;
    uint32_t entry_size = *header & 0x0000fffcu;
    if (relative ? entry_size < 12 : entry_size < 24) return;
    for (uint64_t i = 0; i < *count; ++i) {
      if (methods_.size() >= options_.max_methods) return;
      uint64_t entry = list + 8 + i * entry_size;
      // A count larger than the file holds ends where the bytes end (not after 4 billion
      // unreadable entries).
      if (!memory_.bytes(entry, relative ? 12 : 24)) return;
      std::optional<std::string_view> selector;
      uint64_t imp = 0;
      if (relative) {
        auto name_offset = memory_.u32(entry);
        auto imp_offset = memory_.u32(entry + 8);
        if (!name_offset || !imp_offset) return;
        uint64_t selector_ref = entry + static_cast<int64_t>(static_cast<int32_t>(*name_offset));
        selector = memory_.cString(memory_.pointer(selector_ref));
        imp = entry + 8 + static_cast<int64_t>(static_cast<int32_t>(*imp_offset));
      } else {
        selector = memory_.cString(memory_.pointer(entry));
        imp = memory_.pointer(entry + 16);
      }
      if (!selector || imp < base_) continue;
      std::string name;
      name.reserve(owner.size() + selector->size() + 4);
      name.push_back(kind);
      name.push_back('[');
      name.append(owner);
      name.push_back(' ');
      name.append(*selector);
      name.push_back(']');
      methods_.push_back({imp - base_, 0, std::move(name), SymbolSource::kObjc, {}});
    }
  }

  // class_t at `cls`: its class_ro_t's name and methods, then the metaclass's methods.
  void readClass(uint64_t cls) {
    if (cls == 0 || !visited_.insert(cls).second) return;
    std::optional<std::string_view> name;
    uint64_t methods = 0;
    if (!readClassRo(cls, name, methods) || !name) return;
    readMethodList(methods, '-', *name);
    uint64_t metaclass = memory_.pointer(cls);
    std::optional<std::string_view> meta_name;
    uint64_t meta_methods = 0;
    if (metaclass != 0 && readClassRo(metaclass, meta_name, meta_methods)) {
      readMethodList(meta_methods, '+', *name);
    }
  }

  void readCategory(uint64_t category) {
    auto category_name = memory_.cString(memory_.pointer(category));
    if (!category_name) return;
    std::string owner = "?";
    uint64_t cls = memory_.pointer(category + 8);
    std::optional<std::string_view> class_name;
    uint64_t unused = 0;
    if (cls != 0 && readClassRo(cls, class_name, unused) && class_name) owner = *class_name;
    owner += "(" + std::string(*category_name) + ")";
    readMethodList(memory_.pointer(category + 16), '-', owner);
    readMethodList(memory_.pointer(category + 24), '+', owner);
  }

  std::vector<SymbolEntry> take() { return std::move(methods_); }

 private:
  bool readClassRo(uint64_t cls, std::optional<std::string_view>& name, uint64_t& methods) {
    uint64_t ro = memory_.pointer(cls + 32) & ~uint64_t{7};
    if (ro == 0) return false;
    name = memory_.cString(memory_.pointer(ro + 24));
    methods = memory_.pointer(ro + 32);
    return true;
  }

  const ImageMemory& memory_;
  uint64_t base_;
  const ObjcReadOptions& options_;
  std::vector<SymbolEntry> methods_;
  std::unordered_set<uint64_t> visited_;
  std::unordered_set<uint64_t> visited_lists_;
};

}  // namespace

std::vector<SymbolEntry> readObjcMethods(const ImageSlice& slice, const ObjcReadOptions& options) {
  if (slice.format != ObjectFormat::kMachO || slice.is_dsym) return {};
  const auto* macho = llvm::dyn_cast<MachOObjectFile>(slice.object);
  if (!macho || !macho->is64Bit()) return {};
  ImageMemory memory(*macho, slice.image_base, slice.arch == "arm64e");
  MethodCollector collector(memory, slice.image_base, options);
  for (const auto& section : macho->sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    bool classes = *name == "__objc_classlist";
    bool categories = *name == "__objc_catlist";
    if (!classes && !categories) continue;
    uint64_t start = section.getAddress();
    uint64_t count = section.getSize() / 8;
    for (uint64_t i = 0; i < count; ++i) {
      // The section header's size is not trusted: the list ends where the file's bytes end.
      if (!memory.bytes(start + i * 8, 8)) break;
      uint64_t pointer = memory.pointer(start + i * 8);
      if (classes) {
        collector.readClass(pointer);
      } else {
        collector.readCategory(pointer);
      }
    }
  }
  std::vector<SymbolEntry> methods = collector.take();
  std::sort(methods.begin(), methods.end(), [](const SymbolEntry& a, const SymbolEntry& b) {
    return a.address != b.address ? a.address < b.address : a.name < b.name;
  });
  methods.erase(std::unique(methods.begin(), methods.end(),
                            [](const SymbolEntry& a, const SymbolEntry& b) { return a.address == b.address; }),
                methods.end());
  return methods;
}

}  // namespace restack::native

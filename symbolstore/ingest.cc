#include "symbolstore/ingest.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <optional>

#include "formats/common/archive.h"
#include "formats/common/temp_dir.h"

namespace restack {
namespace fs = std::filesystem;

const char* symbolKindName(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::kDsym:
      return "dsym";
    case SymbolKind::kMachO:
      return "macho";
    case SymbolKind::kElf:
      return "elf";
    case SymbolKind::kProguard:
      return "proguard";
    case SymbolKind::kSourcemap:
      return "sourcemap";
  }
  return "unknown";
}

Expected<SymbolKind> parseSymbolKind(std::string_view text) {
  for (SymbolKind kind :
       {SymbolKind::kDsym, SymbolKind::kMachO, SymbolKind::kElf, SymbolKind::kProguard, SymbolKind::kSourcemap}) {
    if (text == symbolKindName(kind)) return kind;
  }
  return invalidArgument("unknown symbol kind '" + std::string(text) +
                         "' (expected dsym, macho, elf, proguard or sourcemap)");
}

namespace {

// The first bytes of an upload, enough to recognise its kind.
Expected<std::string> headOf(const UploadContent& content, size_t size) {
  if (content.path.empty()) return std::string(content.bytes.substr(0, size));
  std::ifstream in(content.path, std::ios::binary);
  if (!in) return ioError("cannot open " + content.path);
  std::string head(size, '\0');
  in.read(head.data(), static_cast<std::streamsize>(size));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

bool isMachOMagic(std::string_view head) {
  if (head.size() < 4) return false;
  const auto b = [&](size_t i) { return static_cast<uint8_t>(head[i]); };
  const uint32_t le = b(0) | (b(1) << 8) | (b(2) << 16) | (static_cast<uint32_t>(b(3)) << 24);
  const uint32_t be = (static_cast<uint32_t>(b(0)) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
  return le == 0xfeedface || le == 0xfeedfacf || be == 0xcafebabe || be == 0xcafebabf;
}

// A ProGuard/R8 mapping: "#" comment lines, then "original.Class -> obfuscated:".
bool looksLikeProguard(std::string_view head) {
  while (!head.empty()) {
    size_t end = head.find('\n');
    std::string_view line = head.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() != '#') {
      return line.find(" -> ") != std::string_view::npos && line.back() == ':';
    }
    if (end == std::string_view::npos) break;
    head.remove_prefix(end + 1);
  }
  return false;
}

// After unzipping: a .dSYM bundle folder inside the archive, or the single file it holds.
Expected<std::string> pickUnzippedContent(const std::string& directory) {
  std::vector<fs::path> files;
  std::error_code error;
  fs::recursive_directory_iterator it(directory, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    std::error_code type_error;
    const fs::file_status status = it->symlink_status(type_error);
    if (type_error) return ioError("cannot read " + it->path().string() + ": " + type_error.message());
    if (fs::is_directory(status) && it->path().extension() == ".dSYM") return it->path().string();
    if (fs::is_regular_file(status)) files.push_back(it->path());
  }
  if (error) return ioError("cannot list the unzipped upload in " + directory + ": " + error.message());
  if (files.size() == 1) return files.front().string();
  if (files.empty()) return malformed("the zip upload is empty");
  return unsupported("the zip upload holds " + std::to_string(files.size()) +
                     " files and no .dSYM bundle; upload one symbol file per message");
}

bool isDirectory(const std::string& path) {
  std::error_code ignored;
  return fs::is_directory(path, ignored);
}

Expected<IngestReport> ingestUploadOrThrow(SymbolStore& store, const UploadMeta& meta, const UploadContent& original,
                                           const IngestOptions& options) {
  UploadContent content = original;
  std::optional<TempDir> temp;
  const bool is_directory = !content.path.empty() && isDirectory(content.path);
  if (!is_directory) {
    if (!content.path.empty()) {
      std::error_code error;
      uint64_t size = fs::file_size(content.path, error);
      if (error) return ioError("cannot read " + content.path + ": " + error.message());
      if (size > options.max_input_bytes) {
        return tooLarge(content.path + " is " + std::to_string(size) + " bytes, over limits.max_upload_bytes (" +
                        std::to_string(options.max_input_bytes) + " bytes)");
      }
    } else if (content.bytes.size() > options.max_input_bytes) {
      return tooLarge("upload is " + std::to_string(content.bytes.size()) + " bytes, over limits.max_upload_bytes (" +
                      std::to_string(options.max_input_bytes) + " bytes)");
    }
    auto head = headOf(content, 8);
    if (!head) return head.error();
    Compression compression = detectCompression(*head);
    if (compression != Compression::kNone) {
      // Unpacked into scratch files, never into memory: the decompressed size is bounded by
      // the limits below, not by what the worker's memory could take.
      UnpackLimits limits;
      limits.max_bytes = options.max_input_bytes;
      limits.max_ratio = options.max_decompression_ratio;
      const PackedInput packed{content.path, content.bytes};
      auto dir = TempDir::create("restack-upload-");
      if (!dir) return dir.error();
      temp.emplace(std::move(*dir));
      if (compression == Compression::kZip) {
        RESTACK_RETURN_IF_ERROR(extractZip(packed, temp->path(), limits));
        auto inner = pickUnzippedContent(temp->path());
        if (!inner) return inner.error();
        if (content.display_name.empty() || content.display_name.ends_with(".zip")) {
          content.display_name = fs::path(*inner).filename().string();
        }
        content.path = *inner;
      } else {
        std::string target = temp->path() + "/upload";
        RESTACK_RETURN_IF_ERROR(decompressToFile(packed, compression, target, limits));
        content.path = target;
        for (std::string_view suffix : {".gz", ".zst"}) {
          if (content.display_name.ends_with(suffix))
            content.display_name.resize(content.display_name.size() - suffix.size());
        }
      }
      content.bytes = {};
    }
  }

  // Object-file readers (LLVM's among them) need naturally aligned buffers; a Kafka payload
  // can start anywhere.
  std::string aligned_copy;
  if (content.path.empty() && reinterpret_cast<uintptr_t>(content.bytes.data()) % 16 != 0) {
    aligned_copy.assign(content.bytes);
    content.bytes = aligned_copy;
  }

  UploadMeta resolved = meta;
  if (!resolved.kind) {
    auto kind = detectSymbolKind(content);
    if (!kind) return kind.error();
    resolved.kind = *kind;
  }
  Expected<IngestReport> report = [&]() -> Expected<IngestReport> {
    switch (*resolved.kind) {
      case SymbolKind::kDsym:
      case SymbolKind::kMachO:
      case SymbolKind::kElf:
        return ingestNative(store, resolved, content, options);
      case SymbolKind::kProguard:
        return ingestProguard(store, resolved, content, options);
      case SymbolKind::kSourcemap:
        return ingestSourcemap(store, resolved, content, options);
    }
    return Error(ErrorCode::kInternal, "unhandled symbol kind");
  }();
  if (report) report->kind = *resolved.kind;
  return report;
}

}  // namespace

Expected<SymbolKind> detectSymbolKind(const UploadContent& content) {
  if (!content.path.empty() && isDirectory(content.path)) {
    if (isDirectory((fs::path(content.path) / "Contents" / "Resources" / "DWARF").string())) return SymbolKind::kDsym;
    return unsupported(content.path + " is a folder but not a .dSYM bundle (no Contents/Resources/DWARF)");
  }
  auto head = headOf(content, 64 * 1024);
  if (!head) return head.error();
  std::string_view bytes = *head;
  if (bytes.size() >= 4 && bytes.substr(0, 4) ==
                               "\x7f"
                               "ELF")
    return SymbolKind::kElf;
  if (isMachOMagic(bytes)) return SymbolKind::kMachO;
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && bytes.substr(first, 3) == "\xef\xbb\xbf") first += 3;  // BOM
  if (first != std::string_view::npos && bytes[first] == '{') return SymbolKind::kSourcemap;
  if (looksLikeProguard(bytes)) return SymbolKind::kProguard;
  std::string name = content.display_name.empty() ? content.path : content.display_name;
  return unsupported("cannot tell what kind of symbol file " + (name.empty() ? std::string("the upload") : name) +
                     " is (not Mach-O, ELF, a source map or a ProGuard mapping); pass the kind explicitly");
}

Expected<IngestReport> ingestUpload(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                    const IngestOptions& options) {
  // The last resort: nothing may escape a message path. An exception here is a bug or memory
  // exhaustion; either way the upload is refused with a message and the worker goes on.
  auto name = [&content]() -> std::string {
    if (!content.display_name.empty()) return content.display_name;
    return content.path.empty() ? std::string("the upload") : content.path;
  };
  try {
    return ingestUploadOrThrow(store, meta, content, options);
  } catch (const std::bad_alloc&) {
    return tooLarge(name() +
                    ": ran out of memory while ingesting; lower limits.max_upload_bytes or give the worker "
                    "more memory");
  } catch (const std::exception& error) {
    return Error(ErrorCode::kInternal, name() + ": unexpected error while ingesting: " + error.what());
  } catch (...) {
    return Error(ErrorCode::kInternal, name() + ": unexpected error while ingesting");
  }
}

}  // namespace restack

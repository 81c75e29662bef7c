#include "symbolstore/ingest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <set>

#include "formats/common/archive.h"
#include "formats/common/temp_dir.h"
#include "symbolstore/breakpad/breakpad_ingest.h"
#include "symbolstore/symbol_source.h"
#include "symbolstore/usage.h"

namespace restack {
namespace fs = std::filesystem;

const char* symbolKindName(SymbolKind kind) {
  return kind.name();
}

std::ostream& operator<<(std::ostream& out, SymbolKind kind) {
  return out << kind.name();
}

Expected<SymbolKind> parseSymbolKind(std::string_view text) {
  if (const SymbolSource* source = findSymbolSource(text)) return source->kind();
  return invalidArgument("unknown symbol kind '" + std::string(text) + "' (expected " + symbolKindList(", ", " or ") +
                         ")");
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

// "a, b or c".
std::string joinList(const std::vector<std::string_view>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

// The .dSYM bundles of a folder (not looked into) and its other files, at any depth.
struct FolderContent {
  std::vector<fs::path> bundles;
  std::vector<fs::path> files;
  // The files beside the bundles, relative to the folder (Finder's .DS_Store left out): what a
  // folder of bundles holds that is not ingested.
  std::vector<std::string> besideBundles(const std::string& directory) const {
    std::vector<std::string> out;
    if (bundles.empty()) return out;
    for (const fs::path& file : files) {
      if (file.filename() != ".DS_Store") out.push_back(fs::relative(file, directory).string());
    }
    std::sort(out.begin(), out.end());  // in the order a listing shows them, not the directory's
    return out;
  }
};

Expected<FolderContent> scanFolder(const std::string& directory) {
  FolderContent content;
  std::error_code error;
  fs::recursive_directory_iterator it(directory, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    std::error_code type_error;
    const fs::file_status status = it->symlink_status(type_error);
    if (type_error) return ioError("cannot read " + it->path().string() + ": " + type_error.message());
    if (fs::is_directory(status) && it->path().extension() == ".dSYM") {
      content.bundles.push_back(it->path());
      it.disable_recursion_pending();  // the bundle is read whole by the native reader
    } else if (fs::is_regular_file(status)) {
      content.files.push_back(it->path());
    }
  }
  if (error) return ioError("cannot list " + directory + ": " + error.message());
  return content;
}

// What to ingest of an unzipped upload (`scanned`, the folder `directory`): its one .dSYM
// bundle, or the whole folder when it holds several (Xcode's dSYMs folder, App Store Connect's
// "Download dSYMs": one bundle per image, all of them ingested); else its one file. Files beside
// the bundles are named in `skipped`.
Expected<std::string> pickUnzippedContent(const FolderContent& scanned, const std::string& directory,
                                          std::vector<std::string>& skipped) {
  const std::vector<fs::path>& bundles = scanned.bundles;
  const std::vector<fs::path>& files = scanned.files;
  if (!bundles.empty()) {
    skipped = scanned.besideBundles(directory);
    return bundles.size() == 1 ? bundles.front().string() : directory;
  }
  if (files.size() == 1) return files.front().string();
  if (files.empty()) return malformed("the zip upload is empty");
  return unsupported("the zip upload holds " + std::to_string(files.size()) +
                     " files and no .dSYM bundle; upload one symbol file per message");
}

bool isDirectory(const std::string& path) {
  std::error_code ignored;
  return fs::is_directory(path, ignored);
}

// The family a source's records live in, for the upload times of symbolstore/usage.h: every
// source but ProGuard's and the source maps' writes native records (docs/design.md §11).
std::string_view familyOfKind(SymbolKind kind) {
  if (kind == SymbolKind::kProguard) return "proguard";
  if (kind == SymbolKind::kSourcemap) return "sourcemap";
  return "native";
}

// When the upload's symbol sets were uploaded (`restack store list`): the build's, and each
// native image's by its debug id (shared images have no build).
Status recordUploadTime(SymbolStore& store, const UploadMeta& meta, const IngestReport& report) {
  const int64_t now = usage::nowMinutes();
  const std::string_view family = familyOfKind(report.kind);
  rocksdb::WriteBatch batch;
  if (!meta.app.empty() || !meta.build_id.empty()) {
    usage::recordUpload(store, batch, usage::buildSet(family, meta.app, meta.build_id), now);
  }
  if (family == "native") {
    for (const std::string& id : report.ids) {
      const std::string hex = usage::normalizeDebugId(id);
      if (!hex.empty()) usage::recordUpload(store, batch, usage::imageSet(hex), now);
    }
  }
  if (batch.Count() == 0) return Status::ok();
  return store.write(batch);
}

Expected<IngestReport> ingestUploadOrThrow(SymbolStore& store, const UploadMeta& meta, const UploadContent& original,
                                           const IngestOptions& options);

// The zip's files are all native symbol files, each standing for one image (ELF, Mach-O or
// Breakpad .sym): the Android Gradle plugin's native-debug-symbols.zip (one folder per ABI:
// arm64-v8a/libfoo.so.dbg, …), a folder of unstripped libraries zipped, or Breakpad symbols as
// Crashpad and Electron ship them (<name>/<id>/<name>.sym). Finder's .DS_Store does not count.
Expected<bool> allNativeImages(const std::vector<fs::path>& files) {
  size_t images = 0;
  for (const fs::path& file : files) {
    if (file.filename() == ".DS_Store") continue;
    UploadContent content;
    content.path = file.string();
    auto head = headOf(content, 64);
    if (!head) return head.error();
    if (!looksLikeElf(*head) && !looksLikeMachO(*head) && !looksLikeBreakpad(*head)) return false;
    ++images;
  }
  return images > 1;
}

// Split-DWARF packages among the files of a zip or folder: `libfoo.so.dwp` beside `libfoo.so`
// (the name llvm-dwp and the Android and Chromium toolchains give it) is read with that library
// (UploadContent::dwp_path), not ingested as an image of its own; it describes no image by
// itself (it has no build id). A package whose library is not beside it is named in a warning.
struct SplitPackages {
  std::map<std::string, std::string> of_library;  // library path -> its package's path
  std::vector<std::string> warnings;
  bool only_packages = false;  // the files were all packages without their library
};

// Takes the packages out of `files`.
SplitPackages takeSplitPackages(std::vector<fs::path>& files, const std::string& directory) {
  SplitPackages packages;
  std::vector<fs::path> rest;
  std::set<fs::path> names(files.begin(), files.end());
  size_t orphans = 0;
  for (const fs::path& file : files) {
    if (file.extension() != ".dwp") {
      rest.push_back(file);
      continue;
    }
    fs::path library = file;
    library.replace_extension();
    if (names.count(library) != 0 && library.extension() != ".dwp") {
      packages.of_library[library.string()] = file.string();
      continue;
    }
    ++orphans;
    packages.warnings.push_back(fs::relative(file, directory).string() +
                                ": a split-DWARF package without its library (" + library.filename().string() +
                                ") beside it, not ingested; upload the two together in one zip");
  }
  packages.only_packages = orphans > 0 && rest.empty();
  files = std::move(rest);
  return packages;
}

// Each image of a zip of native images, ingested as if uploaded alone, in one report. The first
// that fails fails the upload (the ones before it are stored; uploading again is harmless).
Expected<IngestReport> ingestEachImage(SymbolStore& store, const UploadMeta& meta, const std::string& directory,
                                       std::vector<fs::path> files, const SplitPackages& packages,
                                       const IngestOptions& options) {
  std::sort(files.begin(), files.end());
  IngestReport total;
  bool first = true;
  for (const fs::path& file : files) {
    if (file.filename() == ".DS_Store") continue;
    const std::string relative = fs::relative(file, directory).string();
    UploadContent content;
    content.path = file.string();
    // Named by the file ("arm64-v8a/libfoo.so.dbg" is read as the image libfoo.so by the ELF
    // reader, which drops a debug file's suffix: formats/native/native_object.cc).
    content.display_name = file.filename().string();
    if (auto package = packages.of_library.find(file.string()); package != packages.of_library.end()) {
      content.dwp_path = package->second;
    }
    UploadMeta one = meta;
    one.kind.reset();  // each file's kind is told from its content (the zip's may mix them)
    auto report = ingestUploadOrThrow(store, one, content, options);
    if (!report) return report.error().withContext(relative);
    if (first) total.kind = report->kind;
    first = false;
    total.ids.insert(total.ids.end(), report->ids.begin(), report->ids.end());
    total.records += report->records;
    total.input_bytes += report->input_bytes;
    total.stored_bytes += report->stored_bytes;
    for (const std::string& warning : report->warnings) total.warnings.push_back(relative + ": " + warning);
  }
  total.warnings.insert(total.warnings.end(), packages.warnings.begin(), packages.warnings.end());
  return total;
}

Expected<IngestReport> ingestUploadOrThrow(SymbolStore& store, const UploadMeta& meta, const UploadContent& original,
                                           const IngestOptions& options) {
  for (const SymbolSource& source : symbolSources()) {
    if (!source.take_whole_upload) continue;
    if (auto taken = source.take_whole_upload(store, meta, original, options)) return std::move(*taken);
  }
  UploadContent content = original;
  std::optional<TempDir> temp;
  std::vector<std::string> skipped;  // files of a zip beside its .dSYM bundles
  SplitPackages packages;
  // A zip of native files without .dSYM bundles: its split-DWARF packages go with their
  // libraries; several images are ingested each on its own (with its package). Returns a report
  // when it ingested them, nothing when one file (or none) is left to ingest below.
  auto nativeFiles = [&](FolderContent& scanned,
                         const std::string& directory) -> std::optional<Expected<IngestReport>> {
    if (!scanned.bundles.empty()) return std::nullopt;
    packages = takeSplitPackages(scanned.files, directory);
    if (packages.only_packages) {
      return unsupported(packages.warnings.front() +
                         " (a .dwp holds the split DWARF of a library built with "
                         "-gsplit-dwarf, and no build id to match frames with)");
    }
    auto native = allNativeImages(scanned.files);
    if (!native) return native.error();
    if (*native) return ingestEachImage(store, meta, directory, scanned.files, packages, options);
    return std::nullopt;
  };
  const bool is_directory = !content.path.empty() && isDirectory(content.path);
  if (is_directory) {
    auto scanned = scanFolder(content.path);
    if (!scanned) return scanned.error();
    skipped = scanned->besideBundles(content.path);
    // A folder of one library and its package: the library, read with it. (Other folders are
    // .dSYM bundles or refused, as before.)
    if (scanned->bundles.empty()) {
      std::vector<fs::path> files = scanned->files;
      SplitPackages found = takeSplitPackages(files, content.path);
      if (files.size() == 1 && found.of_library.count(files.front().string()) != 0) {
        packages = std::move(found);
        content.path = files.front().string();
        content.dwp_path = packages.of_library[content.path];
        content.display_name = files.front().filename().string();  // the image, not the folder
      }
    }
  } else {
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
      auto dir = TempDir::create("restack-upload-", options.scratch_dir);
      if (!dir) return dir.error();
      temp.emplace(std::move(*dir));
      if (compression == Compression::kZip) {
        RESTACK_RETURN_IF_ERROR(extractZip(packed, temp->path(), limits));
        auto scanned = scanFolder(temp->path());
        if (!scanned) return scanned.error();
        if (auto ingested = nativeFiles(*scanned, temp->path())) return std::move(*ingested);
        auto inner = pickUnzippedContent(*scanned, temp->path(), skipped);
        if (!inner) return inner.error();
        if ((content.display_name.empty() || content.display_name.ends_with(".zip")) && *inner != temp->path()) {
          content.display_name = fs::path(*inner).filename().string();
        }
        content.path = *inner;
        if (auto package = packages.of_library.find(*inner); package != packages.of_library.end()) {
          content.dwp_path = package->second;
        }
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
  const SymbolSource* source = findSymbolSource(resolved.kind->name());
  if (source == nullptr) {
    return invalidArgument(std::string("unknown symbol kind '") + resolved.kind->name() + "' (expected " +
                           symbolKindList(", ", " or ") + ")");
  }
  IngestOptions with_transforms = options;
  for (const SymbolSource& other : symbolSources()) {
    if (other.native_transform != nullptr) with_transforms.native_transforms.push_back(other.native_transform);
  }
  Expected<IngestReport> report = source->ingest(store, resolved, content, with_transforms);
  if (!report) return report;
  // Named one by one up to a bound (a zip may list thousands of entries), then counted.
  constexpr size_t kSkippedNamed = 20;
  for (size_t i = 0; i < skipped.size() && i < kSkippedNamed; ++i) {
    report->warnings.push_back(skipped[i] + ": not inside a .dSYM bundle, not ingested (upload it on its own)");
  }
  if (skipped.size() > kSkippedNamed) {
    report->warnings.push_back("and " + std::to_string(skipped.size() - kSkippedNamed) +
                               " more files outside the .dSYM bundles, not ingested");
  }
  report->warnings.insert(report->warnings.end(), packages.warnings.begin(), packages.warnings.end());
  report->kind = *resolved.kind;
  RESTACK_RETURN_IF_ERROR(recordUploadTime(store, resolved, *report));
  return report;
}

}  // namespace

Expected<SymbolKind> detectSymbolKind(const UploadContent& content) {
  std::vector<std::string_view> described;
  if (!content.path.empty() && isDirectory(content.path)) {
    for (const SymbolSource& source : symbolSources()) {
      if (source.matches_folder == nullptr) continue;
      if (source.matches_folder(content.path)) return source.kind();
      described.push_back(source.description);
    }
    return unsupported(content.path + " is a folder but not " + joinList(described));
  }
  auto head = headOf(content, kDetectionBytes);
  if (!head) return head.error();
  for (const SymbolSource& source : symbolSources()) {
    if (source.matches_file == nullptr) continue;
    if (source.matches_file(*head)) return source.kind();
    described.push_back(source.description);
  }
  std::string name = content.display_name.empty() ? content.path : content.display_name;
  return unsupported("cannot tell what kind of symbol file " + (name.empty() ? std::string("the upload") : name) +
                     " is (not " + joinList(described) + "); pass the kind explicitly");
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

// In-app detection (in_app.h).
#include "grouping/in_app.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <vector>

#include "formats/common/system_images.h"
#include "grouping/kinds.h"
#include "grouping/kinds/native_rules.h"
#include "grouping/normalize.h"
#include "grouping/string_memo.h"

namespace restack::grouping {
namespace {

constexpr std::string_view kJavaLibraryPrefixes[] = {
    "java.", "javax.", "jdk.", "sun.", "com.sun.", "android.", "androidx.", "kotlin.", "kotlinx.", "dalvik.",
    "libcore.", "com.android.", "com.google.android.", "com.google.firebase.", "com.google.gson.",
    "com.google.protobuf.", "com.google.common.", "org.apache.", "org.json.", "org.xmlpull.", "org.w3c.", "org.xml.",
    "org.jetbrains.", "org.chromium.", "okhttp3.", "okio.", "retrofit2.", "com.squareup.", "io.reactivex.", "rx.",
    "dagger.", "com.bumptech.glide.", "com.facebook.react.", "com.facebook.hermes.", "com.facebook.jni.",
    "com.facebook.soloader.", "io.flutter.",
    // Libraries apps ship unrenamed in their own
    // package space (found by the real-build corpus:
    // Jackson's parser frames counted as app code
    // merged every Jackson parse error).
    "com.fasterxml.", "io.grpc.", "io.ktor.", "io.realm.", "io.sentry.", "com.airbnb.", "com.jakewharton.",
    "org.greenrobot.", "org.koin.", "org.joda.", "org.threeten.", "org.slf4j.", "ch.qos.logback.", "coil."};

std::string_view basename(std::string_view path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// kJavaLibraryPrefixes by their first byte and their fifth (those shorter than five bytes by
// their first alone), so that a name is compared with the one or two prefixes that can match
// instead of every prefix with its first letter (seventeen start with "com."). No prefix of the
// table is a prefix of another, so at most one matches and the lists' order does not matter.
constexpr bool noPrefixStartsAnother() {
  for (std::string_view a : kJavaLibraryPrefixes) {
    for (std::string_view b : kJavaLibraryPrefixes) {
      if (a != b && b.starts_with(a)) return false;
    }
  }
  return true;
}
static_assert(noPrefixStartsAnother(), "decideJava relies on at most one prefix matching a name");

struct JavaLibraryPrefixes {
  static constexpr size_t kShort = 5;  // prefixes shorter than this: by their first byte only
  static constexpr size_t kBuckets = 512;
  std::array<std::vector<std::string_view>, 256> short_by_first;
  std::array<std::vector<std::string_view>, kBuckets> by_first_and_fifth;  // shared buckets are fine
  static size_t bucket(char first, char fifth) {
    return (static_cast<unsigned char>(first) * 131u + static_cast<unsigned char>(fifth)) % kBuckets;
  }
  JavaLibraryPrefixes() {
    for (std::string_view prefix : kJavaLibraryPrefixes) {
      if (prefix.size() < kShort) {
        short_by_first[static_cast<unsigned char>(prefix.front())].push_back(prefix);
      } else {
        by_first_and_fifth[bucket(prefix[0], prefix[4])].push_back(prefix);
      }
    }
  }
};

InAppDecision decideJava(std::string_view name) {
  static const JavaLibraryPrefixes kPrefixes;
  auto libraryPackage = [](std::string_view prefix) {
    std::string reason;
    reason.reserve(13 + prefix.size());
    reason.append("java package ").append(prefix);
    return InAppDecision{false, std::move(reason)};
  };
  if (!name.empty()) {
    for (std::string_view prefix : kPrefixes.short_by_first[static_cast<unsigned char>(name.front())]) {
      if (name.starts_with(prefix)) return libraryPackage(prefix);
    }
  }
  if (name.size() >= JavaLibraryPrefixes::kShort) {
    for (std::string_view prefix : kPrefixes.by_first_and_fifth[JavaLibraryPrefixes::bucket(name[0], name[4])]) {
      if (name.starts_with(prefix)) return libraryPackage(prefix);
    }
  }
  return {true, "java package not a known library"};
}

InAppDecision decideNative(const GroupingFrame& frame) {
  std::string_view module = frame.module;
  if (module.empty()) return {false, "native frame without a module"};
  const NativeImageClass image = classifyNativeImage(module);
  switch (image.origin) {
    case NativeImageOrigin::kApp:
      return {true, "image inside the app's bundle"};
    case NativeImageOrigin::kSystemPath:
      return {false, "system image path"};
    case NativeImageOrigin::kSystemImage:
      return {false, "system image " + std::string(image.name)};
    case NativeImageOrigin::kRuntime:
      return {false, "runtime image " + std::string(image.name)};
    case NativeImageOrigin::kOther:
      break;
  }
  return {true, "image not a known system image"};
}

bool isVendorChunk(std::string_view base) {
  return base.starts_with("vendor") || base.starts_with("chunk-vendors") || base.starts_with("npm.") ||
         base.starts_with("framework-") || base.starts_with("framework.") || base.starts_with("polyfills") ||
         base.starts_with("runtime~") || base.starts_with("runtime-main") || base.starts_with("runtime.");
}

InAppDecision decideJs(const GroupingFrame& frame) {
  std::string_view file = frame.file;
  if (file.find("node_modules/") != std::string_view::npos) return {false, "node_modules"};
  // Node's built-in modules ("node:internal/timers", "node:events") are compiled into node.
  if (file.starts_with("node:")) return {false, "node built-in module"};
  if (file.starts_with("chrome-extension://") || file.starts_with("moz-extension://") ||
      file.starts_with("safari-extension://") || file.starts_with("safari-web-extension://")) {
    return {false, "browser extension"};
  }
  if (file.find("webpack/bootstrap") != std::string_view::npos ||
      file.find("webpack/runtime") != std::string_view::npos) {
    return {false, "bundler runtime"};
  }
  if (file.empty() || file == "[native code]" || file == "<anonymous>" || file == "native") {
    return {false, "native code"};
  }
  thread_local StringMemo<bool> vendor_chunks;  // by file: a bundle's few files recur in every stack
  if (vendor_chunks.get(file,
                        [](std::string_view script) { return isVendorChunk(basename(normalizeJsFile(script))); })) {
    return {false, "vendor chunk"};
  }
  return {true, "script not a library or vendor chunk"};
}

}  // namespace

namespace {

// The C++ standard library's headers (libstdc++ "…/include/c++/12/", libc++ "…/c++/v1/") and
// the system's C headers ("/usr/include/", a cross sysroot's "/usr/aarch64-linux-gnu/include/",
// an NDK's "…/sysroot/usr/include/").
bool isSystemHeader(std::string_view file) {
  if (file.find("/include/c++/") != std::string_view::npos || file.find("/c++/v1/") != std::string_view::npos ||
      file.find("/sysroot/usr/include/") != std::string_view::npos) {
    return true;
  }
  if (file.starts_with("/usr/include/") || file.starts_with("/usr/local/include/")) return true;
  if (!file.starts_with("/usr/")) return false;
  const size_t include = file.find("/include/", 5);
  const std::string_view triple = include == std::string_view::npos ? std::string_view() : file.substr(5, include - 5);
  return triple.find('/') == std::string_view::npos && triple.find("-linux-") != std::string_view::npos;
}

// The crates of a Rust toolchain's standard library and the crates it is built from.
bool isStandardLibraryCrate(std::string_view crate) {
  static constexpr std::string_view kCrates[] = {
      "std",    "core",   "alloc",       "panic_abort", "panic_unwind", "compiler_builtins", "addr2line",
      "gimli",  "object", "miniz_oxide", "adler",       "adler2",       "rustc_demangle",    "hashbrown",
      "memchr", "unwind", "std_detect",  "cfg_if",      "libc",         "proc_macro",        "test"};
  return std::find(std::begin(kCrates), std::end(kCrates), crate) != std::end(kCrates);
}

bool isRustStandardLibrary(std::string_view file) {
  if (file.starts_with("/rustc/")) {
    const size_t slash = file.find('/', 7);
    return slash != std::string_view::npos && file.substr(slash).starts_with("/library/");
  }
  if (file.find("/lib/rustlib/src/rust/library/") != std::string_view::npos) return true;
  // A codegen unit: "<crate>.<16 hex>-cgu.<n>".
  const size_t dot = file.find('.');
  const size_t cgu = file.rfind("-cgu.");
  if (dot == std::string_view::npos || cgu == std::string_view::npos || cgu < dot ||
      file.find('/') != std::string_view::npos) {
    return false;
  }
  return isStandardLibraryCrate(file.substr(0, dot));
}

// Rust crates downloaded by cargo: the registry's and git dependencies' sources.
bool isRustCrateDependency(std::string_view file) {
  return file.find("/.cargo/registry/src/") != std::string_view::npos ||
         file.find("/.cargo/git/checkouts/") != std::string_view::npos;
}

LibrarySource computeLibrarySource(std::string_view file) {
  if (file.empty()) return LibrarySource::kNone;
  if (isSystemHeader(file)) return LibrarySource::kSystemHeader;
  if (isRustStandardLibrary(file)) return LibrarySource::kRustStandardLibrary;
  if (isRustCrateDependency(file)) return LibrarySource::kRustCrate;
  return LibrarySource::kNone;
}

}  // namespace

// Memoized per thread: every native frame asks (decideInApp, and annotateStack again for frames
// not in-app), and the substring searches cost hundreds of instructions where finding a file
// again costs fewer.
LibrarySource librarySourceOf(std::string_view file) {
  thread_local StringMemo<LibrarySource> sources;
  return sources.get(file, computeLibrarySource);
}

InAppDecision decideInApp(const GroupingFrame& frame, std::string_view normalized, std::string_view platform,
                          const AppRules* rules) {
  const FrameKindRules& kind = *frame.kind;
  if (rules != nullptr) {
    for (const InAppRule& rule : rules->in_app) {
      if (rule.match.matches(frame, normalized, platform)) {
        return {rule.in_app, "rule " + rule.origin, true};
      }
    }
    if (kind.app_rule != nullptr) {
      if (auto decision = kind.app_rule(frame, normalized, *rules)) return std::move(*decision);
    }
  }
  if (kind.library_code != nullptr) {
    if (const char* reason = kind.library_code(normalized)) return {false, reason};
  }
  // Inlined from a system or standard-library header into the app's image: GCC names such
  // frames from DWARF without their namespace when a template argument has no linkage
  // ("for_each<…, f(int)::<lambda(int)> >", "__invoke_impl<…>"), so only the file tells.
  if (frame.kind == &nativeRules()) {
    switch (librarySourceOf(frame.file)) {
      case LibrarySource::kSystemHeader:
        return {false, "system header"};
      case LibrarySource::kRustStandardLibrary:
        return {false, "Rust standard library"};
      case LibrarySource::kRustCrate:
        return {false, "Rust crate dependency"};
      case LibrarySource::kNone:
        break;
    }
  }
  if (frame.in_app.has_value()) {
    return {*frame.in_app, *frame.in_app ? "restorer: app's symbols" : "restorer: system or ignore-listed"};
  }
  return kind.in_app_default(frame, normalized);
}

namespace kinds {

// With app_packages set, a Java frame outside them is not in-app.
std::optional<InAppDecision> javaAppRule(const GroupingFrame&, std::string_view normalized, const AppRules& rules) {
  if (rules.app_packages.empty()) return std::nullopt;
  for (const std::string& prefix : rules.app_packages) {
    if (normalized.starts_with(prefix)) return InAppDecision{true, "app_packages " + prefix, true};
  }
  return InAppDecision{false, "not in app_packages", true};
}

std::optional<InAppDecision> nativeAppRule(const GroupingFrame& frame, std::string_view, const AppRules& rules) {
  if (frame.module.empty()) return std::nullopt;
  for (const std::string& pattern : rules.app_modules) {
    if (globMatch(pattern, frame.module) || globMatch(pattern, basename(frame.module))) {
      return InAppDecision{true, "app_modules " + pattern, true};
    }
  }
  return std::nullopt;
}

// Standard-library templates instantiated into the app's image are still library code.
const char* nativeLibraryCode(std::string_view normalized) {
  if (normalized.starts_with("std::") || normalized.starts_with("__gnu_cxx::") ||
      normalized.starts_with("__cxxabiv1::")) {
    return "C++ standard library";
  }
  // The Rust standard library's own entry points (rust_begin_unwind, __rust_abort, …), named so
  // since Rust 1.88 whatever their file.
  if (normalized.starts_with("__rustc::")) return "Rust standard library";
  return nullptr;
}

InAppDecision javaInAppDefault(const GroupingFrame&, std::string_view normalized) {
  return decideJava(normalized);
}
InAppDecision nativeInAppDefault(const GroupingFrame& frame, std::string_view) {
  return decideNative(frame);
}
InAppDecision jsInAppDefault(const GroupingFrame& frame, std::string_view) {
  return decideJs(frame);
}
InAppDecision unknownInAppDefault(const GroupingFrame&, std::string_view) {
  return {false, "unknown frame kind"};
}

}  // namespace kinds

}  // namespace restack::grouping

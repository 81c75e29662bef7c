// Native lookups (iOS images, Android .so): debug id + address -> function, file, line, inlines.
//
// Reads the records of symbolstore/native/native_records.h. Decoded records are kept in memory
// per image (function records, symbol chunks and the strings they use, plus the gaps between
// records, so a miss is answered from memory too); RocksDB is only read the first time an
// address range of an image is needed. The cache is bounded by `cache_bytes` and evicts whole
// images, least recently used first. Safe to call from several threads at once.
//
// Which image a frame means:
//   - frames with a debug id: the image with that id, or with that id as an alias (the 16-byte
//     prefix or the Breakpad form of an ELF build id, see native_object.h);
//   - frames without one (Apple crash report lines, tombstones without BuildId): the images the
//     event's app and build uploaded under that module name, then shared images of that name;
//     when several match (the slices of a fat file, every ABI of an Android library) the first
//     that covers the address answers, and images of other architectures that answer otherwise
//     are kept as its alternatives (reason ambiguous): nothing in the frame tells them apart,
//     unless it names its architecture (the ABI folder of an Android library's path,
//     ".../lib/arm64/libfoo.so", or the SDK form's ABI): then only images of that architecture
//     answer, when one was uploaded.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "formats/common/status.h"
#include "formats/stack/native_line.h"
#include "symbolstore/frame_lookup.h"
#include "symbolstore/resolver.h"
#include "symbolstore/store.h"
#include "symbolstore/symbolizer.h"

namespace restack {

// A frame no upload can restore, told by where the device says it ran (Android's memory-map
// names): `runtime_code` for JIT caches and other anonymous memory ("[anon:dalvik-jit-code-cache]",
// "/memfd:jit-cache (deleted)"), ART's compiled Java (".oat", ".odex") and the kernel's "[vdso]";
// `address_outside_module` for Android's "<unknown>" and Apple's "???" (an address in no
// image). Such frames do not hold an event for symbols that will never come. std::nullopt for an
// image like any other.
std::optional<FrameLookup> unrestorableNativeFrame(const stack::NativeFrameLine& frame);

struct NativeResolverOptions {
  // Decoded records kept in memory in front of RocksDB. Default 512 MiB.
  size_t cache_bytes = 512u << 20;
  // How long "no symbols uploaded for this debug id / module" is remembered before the store is
  // asked again (a later upload becomes visible after at most this long; `forget` makes it
  // immediate). Default 10 s.
  uint32_t missing_ttl_ms = 10'000;
  // Most debug ids and module names remembered as absent (and module names with their ids): events
  // name ids without limit (every device build of a system library has its own), so past this
  // many the expired ones are dropped, and all of them when most are still fresh. Default 65,536
  // (a few MiB).
  size_t max_remembered = 65'536;
  // An operating-system image's frame (formats/common/system_images.h) whose symbols are missing
  // is reason missing_symbols, awaited like any other, instead of system_image, which no event
  // waits for. Default false.
  bool await_system_symbols = false;
};

class NativeResolver : public Resolver {
 public:
  NativeResolver(SymbolStore& store, const NativeResolverOptions& options);
  ~NativeResolver();
  // `frame` as parsed; `lookup_address` is the image-relative address to look up, already
  // adjusted (address - 1) for return addresses. Errors are store failures only; "no symbols"
  // and "not covered" are statuses of the lookup.
  Expected<FrameLookup> lookup(const EventScope& scope, const stack::NativeFrameLine& frame, uint64_t lookup_address);

  // Drops everything cached about these debug ids (call after ingesting them) …
  void forget(std::string_view debug_id);
  void forgetId(std::string_view id) override { forget(id); }
  // Debug ids and module names remembered from earlier lookups (bounded by max_remembered).
  size_t rememberedCount() const;
  // … or about every image.
  void clear();
  // Bytes of decoded records currently cached (approximate).
  size_t cachedBytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The Symbolizer's native resolver (its slot in symbolstore/resolvers.cc).
inline NativeResolver& nativeResolver(Symbolizer& symbolizer) {
  static const size_t slot = resolverSlot("native");
  return static_cast<NativeResolver&>(symbolizer.resolver(slot));
}
// Makes the resolver for the registry, with its cache size from `options`.
std::unique_ptr<Resolver> makeNativeResolver(SymbolStore& store, const SymbolizerOptions& options);

}  // namespace restack

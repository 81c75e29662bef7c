#include "formats/swift/rust_demangle.h"

#include <cstddef>
#include <cstdint>

#if RESTACK_SWIFT_DEMANGLER
extern "C" size_t restack_rust_demangle(const uint8_t* input, size_t input_len, uint8_t* output,
                                        size_t output_capacity);
#endif

namespace restack::rust {

namespace {
// Longer inputs are not symbols a compiler emits; refusing them bounds the demangler's work.
constexpr size_t kMaxMangledBytes = 16 * 1024;

// Every Rust symbol starts so (Mach-O symbol tables add one '_'); other names skip the call.
bool mayBeRust(std::string_view name) {
  if (name.starts_with("__")) name.remove_prefix(1);
  return name.starts_with("_ZN") || name.starts_with("_R");
}
}  // namespace

bool rustDemanglerAvailable() {
  return RESTACK_SWIFT_DEMANGLER != 0;
}

std::optional<std::string> demangleRust(std::string_view mangled) {
#if RESTACK_SWIFT_DEMANGLER
  if (!mayBeRust(mangled) || mangled.size() > kMaxMangledBytes) return std::nullopt;
  const auto* input = reinterpret_cast<const uint8_t*>(mangled.data());
  // Demangled names are shorter than their symbols but for v0 back-references.
  std::string text(mangled.size() * 2 + 64, '\0');
  size_t length = restack_rust_demangle(input, mangled.size(), reinterpret_cast<uint8_t*>(text.data()), text.size());
  if (length == 0) return std::nullopt;
  if (length > text.size()) {
    text.assign(length, '\0');
    length = restack_rust_demangle(input, mangled.size(), reinterpret_cast<uint8_t*>(text.data()), text.size());
    if (length == 0 || length > text.size()) return std::nullopt;
  }
  text.resize(length);
  return text;
#else
  (void)mangled;
  (void)kMaxMangledBytes;
  (void)mayBeRust;
  return std::nullopt;
#endif
}

}  // namespace restack::rust

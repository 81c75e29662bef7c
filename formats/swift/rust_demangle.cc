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
  // Most C++ names of an image start "_ZN" and are refused: a buffer on the stack spares them an
  // allocation; a longer demangled name is asked for again at its length.
  uint8_t buffer[1024];
  const size_t length = restack_rust_demangle(input, mangled.size(), buffer, sizeof buffer);
  if (length == 0) return std::nullopt;
  if (length <= sizeof buffer) return std::string(reinterpret_cast<const char*>(buffer), length);
  std::string text(length, '\0');
  if (restack_rust_demangle(input, mangled.size(), reinterpret_cast<uint8_t*>(text.data()), text.size()) != length) {
    return std::nullopt;
  }
  return text;
#else
  (void)mangled;
  (void)kMaxMangledBytes;
  (void)mayBeRust;
  return std::nullopt;
#endif
}

}  // namespace restack::rust

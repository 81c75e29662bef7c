#include "formats/swift/swift_demangle.h"

#include <cstddef>
#include <cstdint>

#if RESTACK_SWIFT_DEMANGLER
extern "C" size_t restack_swift_demangle(const uint8_t* input, size_t input_len, uint32_t style, uint8_t* output,
                                         size_t output_capacity);
#endif

namespace restack::swift {

namespace {
// Longer inputs are not symbols a compiler emits; refusing them bounds the demangler's work.
constexpr size_t kMaxMangledBytes = 16 * 1024;
}  // namespace

bool isSwiftMangled(std::string_view name) {
  if (name.starts_with("_")) name.remove_prefix(1);
  return name.starts_with("$s") || name.starts_with("$S") || name.starts_with("$e") || name.starts_with("_T0");
}

bool swiftDemanglerAvailable() {
  return RESTACK_SWIFT_DEMANGLER != 0;
}

std::optional<std::string> demangleSwift(std::string_view mangled, SwiftNameStyle style) {
#if RESTACK_SWIFT_DEMANGLER
  if (!isSwiftMangled(mangled) || mangled.size() > kMaxMangledBytes) return std::nullopt;
  const uint32_t code = style == SwiftNameStyle::kNameOnly ? 1 : 0;
  const auto* input = reinterpret_cast<const uint8_t*>(mangled.data());
  std::string text(mangled.size() * 4 + 64, '\0');
  size_t length =
      restack_swift_demangle(input, mangled.size(), code, reinterpret_cast<uint8_t*>(text.data()), text.size());
  if (length == 0) return std::nullopt;
  if (length > text.size()) {
    text.assign(length, '\0');
    length = restack_swift_demangle(input, mangled.size(), code, reinterpret_cast<uint8_t*>(text.data()), text.size());
    if (length == 0 || length > text.size()) return std::nullopt;
  }
  text.resize(length);
  return text;
#else
  (void)mangled;
  (void)style;
  (void)kMaxMangledBytes;
  return std::nullopt;
#endif
}

}  // namespace restack::swift

// libFuzzer: any bytes, in both Swift styles and as a Rust name (the other entry point of the same
// crate, formats/swift/rust_demangle.h), must come back as a name or nullopt, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/swift/rust_demangle.h"
#include "formats/swift/swift_demangle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)restack::swift::demangleSwift(input, restack::swift::SwiftNameStyle::kComplete);
  (void)restack::swift::demangleSwift(input, restack::swift::SwiftNameStyle::kNameOnly);
  (void)restack::rust::demangleRust(input);
  return 0;
}

// Rust symbol names as Rust's own backtrace prints them (RUST_BACKTRACE=1), with the
// rustc-demangle crate built from formats/swift/Cargo.toml: its alternate form, which drops
// the legacy hash and v0's crate disambiguators and decodes legacy escapes.
//
//   "_ZN9inventory14Order$LT$T$GT$4push17h0123456789abcdefE" -> "inventory::Order<T>::push"
//   "_RNvCs1234_7mycrate4main"                               -> "mycrate::main"
//   "_ZN3foo3barEi" (C++), "_ZN3foo3barE" (no hash)           -> nullopt
//
// A legacy name counts as Rust only when its last path element is rustc's hash ("17h" and 16 hex
// digits before the closing 'E'): rustc-demangle alone would read any C++ nested name without
// parameters as Rust.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace restack::rust {

// The demangled name, or nullopt when `mangled` is not a Rust symbol (legacy with its hash, or
// v0) or the demangler cannot read it; callers then use their other demangler. Thread-safe.
std::optional<std::string> demangleRust(std::string_view mangled);

// False when this build was configured without the Rust crate (RESTACK_SWIFT_DEMANGLER=OFF).
bool rustDemanglerAvailable();

}  // namespace restack::rust

// Swift symbol names, demangled with Apple's own demangler (vendored by Sentry's
// symbolic-demangle crate, built from formats/swift/Cargo.toml).
//
// Two styles:
//   kComplete  what `swift demangle` prints, and what restored frames show:
//                "$s4main3runyyFyycfU_" -> "closure #1 () -> () in main.run() -> ()"
//   kNameOnly  the name without module, parameter or return types, for grouping keys that
//              must not move when a signature changes:
//                "$s4main3runyyFyycfU_" -> "closure #1 in run"
//
// Symbols are stored mangled and demangled when read, so that a newer demangler also fixes
// names stored by an older release.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace restack::swift {

enum class SwiftNameStyle { kComplete, kNameOnly };

// True for the manglings of Swift 4 and later ("$s", "$S", "$e", with or without the leading
// underscore of Mach-O symbol tables) and Swift 4.0's "_T0".
bool isSwiftMangled(std::string_view name);

// The demangled name, or nullopt when `mangled` is not a Swift symbol the demangler can read
// (callers then keep the mangled name). Thread-safe.
std::optional<std::string> demangleSwift(std::string_view mangled, SwiftNameStyle style = SwiftNameStyle::kComplete);

// False when this build was configured without the demangler (RESTACK_SWIFT_DEMANGLER=OFF).
bool swiftDemanglerAvailable();

}  // namespace restack::swift

// Function names as the program's own toolchain prints them:
//
// - Rust (legacy "_ZN…17h<16 hex>E" with rustc's hash, and v0 "_R…"): as Rust's own backtrace
//   prints them under RUST_BACKTRACE=1 (and gdb, perf and Sentry do), with the rustc-demangle
//   crate (formats/swift/rust_demangle.h): escapes decoded, no hash, no crate disambiguators.
//   LLVM's demangler, which llvm-symbolizer uses, reads legacy Rust names by the Itanium rules
//   and leaves both in ("inventory::Order$LT$T$GT$::push::h0123456789abcdef"). A legacy-looking
//   name whose last element is not the hash is C++, and stays LLVM's.
// - C++ (Itanium): as llvm-symbolizer prints them, with LLVM's demangler.
// - C and Objective-C names ("-[Foo bar:]"): unchanged.
// - Swift: LLVM has no Swift demangler, so Swift symbols ("$s4main3FooV3baryyF", "_$s…", "$S…",
//   "_T0…") come back unchanged and are stored mangled; the native resolver demangles them when
//   it reads them, with Apple's demangler (formats/swift/swift_demangle.h).
//
// A build without the crates (RESTACK_SWIFT_DEMANGLER=OFF) prints Rust names as LLVM does.
//
//   demangleName("_ZN9inventory14Order$LT$T$GT$4push17h0123456789abcdefE")
//                                        -> "inventory::Order<T>::push"
//   demangleName("_RNvCs1234_7mycrate4main") -> "mycrate::main"
//   demangleName("_ZN3foo17h0123456789abcdefEv") -> "foo::h0123456789abcdef()" (C++: parameters)
//   demangleName("_ZN3foo3barEi")        -> "foo::bar(int)"
//   demangleName("-[Foo bar:]")          -> "-[Foo bar:]"
#pragma once

#include <string>
#include <string_view>

namespace restack::native {

std::string demangleName(std::string_view name);

}  // namespace restack::native

// Function names as llvm-symbolizer prints them: C++ (Itanium) and Rust (v0 and legacy, which
// is Itanium-shaped) demangled with LLVM's demangler; C and Objective-C names ("-[Foo bar:]")
// unchanged.
//
// Swift: LLVM has no Swift demangler, so Swift symbols ("$s4main3FooV3baryyF", "_$s…", "$S…",
// "_T0…") come back unchanged and are stored mangled; the native resolver demangles them when it
// reads them, with Apple's demangler (formats/swift/swift_demangle.h).
//
//   demangleName("_ZN3foo3barEi")        -> "foo::bar(int)"
//   demangleName("_RNvCs1234_4core3fmt") -> "core::fmt"
//   demangleName("-[Foo bar:]")          -> "-[Foo bar:]"
#pragma once

#include <string>
#include <string_view>

namespace restack::native {

std::string demangleName(std::string_view name);

}  // namespace restack::native

// Function names as llvm-symbolizer prints them: C++ (Itanium) and Rust (v0 and legacy, which
// is Itanium-shaped) demangled with LLVM's demangler; C and Objective-C names ("-[Foo bar:]")
// unchanged.
//
// Swift: LLVM has no Swift demangler and a partial one would print wrong names, so Swift symbols
// ("$s4main3FooV3baryyF", "_$s…", "$S…", "_T0…") are kept mangled and flagged so the frame can
// say so ("swift name left mangled"; `swift demangle` restores them offline).
//
//   demangleName("_ZN3foo3barEi")        -> "foo::bar(int)"
//   demangleName("_RNvCs1234_4core3fmt") -> "core::fmt"
//   demangleName("-[Foo bar:]")          -> "-[Foo bar:]"
#pragma once

#include <string>
#include <string_view>

namespace restack::native {

std::string demangleName(std::string_view name);
bool isSwiftMangled(std::string_view name);

}  // namespace restack::native

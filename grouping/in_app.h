// In-app detection (issue 6, step 1): is a frame the app's own code or system / library code?
//
// First answer wins:
//   1. the app's rule file: `in_app` rules in order, then `app_packages` / `app_modules`
//      (with app_packages set, a Java frame outside them is not in-app);
//   2. C++ and Rust standard-library code (std::, __gnu_cxx::, a Rust toolchain's library/
//      sources, __rustc::) and Rust crates from a registry (.cargo/registry/src/) are never
//      in-app, even inside the app's image; then the restorer's own decision (native module from the app's upload vs
//      the shared store, a JS source on the source map's ignore list);
//   3. per-platform defaults:
//      - Java: java., javax., android., androidx., kotlin., kotlinx., dalvik., com.android.,
//        com.google.android., and well-known libraries (okhttp3., com.squareup., io.reactivex.,
//        com.facebook.react., …) are not in-app; anything else is;
//      - native: system paths (/System/Library/, /usr/lib/, /system/, /apex/, /vendor/) and
//        known system images (UIKitCore, CoreFoundation, libsystem_*.dylib, libc.so, libart.so,
//        …) are not in-app; app paths (.app/, /data/app/) and other images are (the lists are
//        formats/common/system_images.h, which the native restorer reads too);
//      - JavaScript: node_modules, browser extensions (chrome-extension://, moz-extension://,
//        safari-(web-)extension://), bundler runtimes (webpack/bootstrap) and vendor chunks
//        (vendor*.js, chunk-vendors*, framework-*, polyfills*, runtime~*) are not in-app.
// Worked example: "android.view.View.performClick" -> {false, "java package android."};
// "com.shopee.cart.Cart.load" with app_packages [com.shopee.] -> {true, "shopee.yaml app_packages com.shopee."}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "grouping/model.h"
#include "grouping/rules.h"

namespace restack::grouping {

struct InAppDecision {
  bool in_app = false;
  std::string reason;
  bool from_app_rule = false;  // decided by the app's rule file (listed in rules_applied)
};

// Code in the app's image that is not the app's own, told by the file DWARF (or, for the Rust
// standard library's code without DWARF, the symbol table) names:
//   kSystemHeader: the C++ standard library's headers (libstdc++ "…/include/c++/12/", libc++
//     "…/c++/v1/") and the system's C headers ("/usr/include/", a cross sysroot's
//     "/usr/aarch64-linux-gnu/include/", an NDK's "…/sysroot/usr/include/");
//   kRustStandardLibrary: what a Rust toolchain ships, as rustup's toolchains name its sources
//     ("/rustc/<commit>/library/core/src/option.rs"), as a toolchain with the rust-src component
//     does ("…/lib/rustlib/src/rust/library/std/src/…"), and, for its code without DWARF, the
//     codegen unit a standard-library crate's symbols sit under ("core.c1f1a4ba0609d1f2-cgu.0",
//     formats/native/symbol_table.h);
//   kRustCrate: a crate cargo downloaded ("…/.cargo/registry/src/…", "…/.cargo/git/checkouts/…").
// Whether code of a header or of the Rust standard library shows as a frame is the compiler's
// (and the toolchain version's) choice. Memoized per thread.
enum class LibrarySource : uint8_t { kNone, kSystemHeader, kRustStandardLibrary, kRustCrate };
LibrarySource librarySourceOf(std::string_view file);

// `normalized` is the frame's normalized function (normalizeFrame), `platform` the event's.
InAppDecision decideInApp(const GroupingFrame& frame, std::string_view normalized, std::string_view platform,
                          const AppRules* rules);

}  // namespace restack::grouping

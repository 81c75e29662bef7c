// Normalization of restored names: each case is a decoration a rebuild changes (or a name that
// must stay apart from its neighbours).
#include "grouping/normalize.h"
#include "grouping/kinds/java_rules.h"
#include "grouping/kinds/js_rules.h"
#include "grouping/kinds/native_rules.h"

#include <gtest/gtest.h>

#include <utility>

namespace restack::grouping {
namespace {

std::string nativeName(std::string_view name) {
  return normalizeNativeName(name).name;
}
std::string javaName(std::string_view name) {
  return normalizeJavaName(name).name;
}

TEST(NormalizeNative, StripsArgumentsReturnTypesQualifiersAndTemplates) {
  EXPECT_EQ(nativeName("void foo::Bar<int>::run(std::__1::vector<int, std::__1::allocator<int> > const&) const"),
            "foo::Bar<T>::run");
  EXPECT_EQ(nativeName("foo::Bar<float>::run(std::__ndk1::vector<float>&&)"), "foo::Bar<T>::run");
  EXPECT_EQ(nativeName("std::__1::basic_string<char> util::join(char const*, int)"), "util::join");
  EXPECT_EQ(nativeName("(anonymous namespace)::Parser::parse(int)"), "{anon}::Parser::parse");
  EXPECT_EQ(nativeName("plain_c_function"), "plain_c_function");
}

TEST(NormalizeNative, KeepsOperatorNames) {
  EXPECT_EQ(nativeName("foo::Vec::operator()(int) const"), "foo::Vec::operator()");
  EXPECT_EQ(nativeName("foo::operator<<(std::ostream&, foo::Vec const&)"), "foo::operator<<");
  EXPECT_EQ(nativeName("foo::Vec::operator bool() const"), "foo::Vec::operator_bool");
  EXPECT_NE(nativeName("foo::Vec::operator<(foo::Vec const&)"), nativeName("foo::Vec::operator>(foo::Vec const&)"));
}

TEST(NormalizeNative, StripsCloneSuffixesAndOffsets) {
  EXPECT_EQ(nativeName("parse_header(char*) [clone .cold]"), "parse_header");
  EXPECT_EQ(nativeName("parse_header(char*) [clone .constprop.0] [clone .isra.0]"), "parse_header");
  EXPECT_EQ(nativeName("parse_header.cold.12"), "parse_header");
  EXPECT_EQ(nativeName("parse_header(char*) (.cold)"), "parse_header");  // LLVM's demangler
  EXPECT_EQ(nativeName("parse_header.llvm.8812312"), "parse_header");
  EXPECT_EQ(nativeName("abort+164"), "abort");
  EXPECT_EQ(nativeName("memcpy + 0x1c"), "memcpy");
}

TEST(NormalizeNative, LambdasAndBlocks) {
  EXPECT_EQ(nativeName("Feed::load()::{lambda(int)#2}::operator()(int) const"), "Feed::load::{lambda}::operator()");
  EXPECT_EQ(nativeName("Feed::load()::'lambda0'(int)::operator()(int) const"),
            nativeName("Feed::load()::'lambda'(int)::operator()(int) const"));
  // Clang's name for the lambda GCC calls {lambda()#1}: one key whichever compiler built it.
  EXPECT_EQ(nativeName("Feed::load()::$_12::operator()() const"), "Feed::load::'lambda'::operator()");
  EXPECT_EQ(nativeName("Feed::load()::$_12::operator()() const"),
            nativeName("Feed::load()::'lambda'()::operator()() const"));
  EXPECT_EQ(
      nativeName(
          "Cache<Item>::total(std::vector<Item> const&) const::'lambda'(Item const&)::operator()(Item const&) const"),
      "Cache<T>::total::'lambda'::operator()");
  // std::for_each whose return type is the lambda: the function is std::for_each.
  EXPECT_EQ(nativeName("Cache<Item>::total(int) const::'lambda'(Item const&) std::for_each<It, Cache<Item>::total(int) "
                       "const::'lambda'(Item const&)>(It, It, Cache<Item>::total(int) const::'lambda'(Item const&))"),
            "std::for_each<T>");
  EXPECT_EQ(nativeName("__29-[ViewController viewDidLoad]_block_invoke_2"),
            "-[ViewController viewDidLoad]_block_invoke");
  EXPECT_EQ(nativeName("__main_block_invoke.17"), "__main_block_invoke");
  EXPECT_EQ(nativeName("-[NSObject(Foo) bar:baz:]"), "-[NSObject(Foo) bar:baz:]");
  auto outlined = normalizeNativeName("_OUTLINED_FUNCTION_12");
  ASSERT_NE(outlined.drop_reason, nullptr);
}

TEST(NormalizeNative, SwiftAndRust) {
  EXPECT_EQ(nativeName("closure #2 in MyApp.Feed.load(id: Swift.Int) -> ()"), "closure in MyApp.Feed.load");
  EXPECT_EQ(nativeName("closure #1 (Swift.Int) -> () in closure #3 in MyApp.Feed.load() -> ()"),
            "closure in closure in MyApp.Feed.load");
  EXPECT_EQ(nativeName("specialized MyApp.Cache.get<A>(key: A) -> A?"), "MyApp.Cache.get<T>");
  EXPECT_EQ(nativeName("core::result::unwrap_failed::h6a3c0f2b8d1e4f70"), "core::result::unwrap_failed");
  EXPECT_EQ(nativeName("<alloc::vec::Vec<T> as core::ops::Drop>::drop::h0123456789abcdef"),
            "<alloc::vec::Vec<T> as core::ops::Drop>::drop");
  // Legacy-mangled names as LLVM demangles them (symbol table) and DWARF's: one key.
  EXPECT_EQ(nativeName("_$LT$inventory..Item$u20$as$u20$core..fmt..Debug$GT$::fmt::h0123456789abcdef"),
            nativeName("<inventory::Item as core::fmt::Debug>::fmt"));
  EXPECT_EQ(nativeName("inventory::Cache$LT$T$GT$::get::h0123456789abcdef"), nativeName("inventory::Cache<T>::get"));
  EXPECT_EQ(nativeName("<inventory::Item as core::fmt::Debug>::fmt"), "<inventory::Item as core::fmt::Debug>::fmt");
  // Rust closures: DWARF (and v0 mangling) number them, legacy mangling does not; one key.
  EXPECT_EQ(nativeName("inventory::Inventory::parse::{closure#1}"),
            nativeName("inventory::Inventory::parse::{closure#0}"));
  EXPECT_EQ(nativeName("inventory::Inventory::parse::{closure#1}"),
            nativeName("inventory::Inventory::parse::{{closure}}::h0123456789abcdef"));
}

// Restack used to store legacy Rust names as LLVM's demangler spells them, and now stores them
// as Rust's backtrace prints them (formats/native/demangle.h); images uploaded before keep the old
// spelling. Both must get one key, or fingerprints would move. The pairs are the frames of
// tests/native/fixtures/orders.rs, each as LLVM demangled it and as the program printed it.
TEST(NormalizeNative, RustNamesKeyAlikeInLlvmsAndRustsSpelling) {
  const std::pair<const char*, const char*> pairs[] = {
      {"_$LT$orders..Sku$u20$as$u20$orders..Priced$GT$::price::_$u7b$$u7b$closure$u7d$$u7d$::hcf6ec6e5cb6a29f8",
       "<orders::Sku as orders::Priced>::price::{{closure}}"},
      {"_$LT$orders..Sku$u20$as$u20$orders..Priced$GT$::price::heb27dc400083ea54",
       "<orders::Sku as orders::Priced>::price"},
      {"orders::Order$LT$T$GT$::total::_$u7b$$u7b$closure$u7d$$u7d$::hee1f9ed5175d20a5",
       "orders::Order<T>::total::{{closure}}"},
      {"orders::Order$LT$T$GT$::total::hc4157ac8c6a19a9f", "orders::Order<T>::total"},
      {"orders::main::_$u7b$$u7b$closure$u7d$$u7d$::h34c690c4d766aa60", "orders::main::{{closure}}"},
      {"orders::on_screen::h7c768fcb551cdc79", "orders::on_screen"},
      {"core::ptr::drop_in_place$LT$orders..Order$LT$orders..Sku$GT$$GT$::h4e66b6b79a069453",
       "core::ptr::drop_in_place<orders::Order<orders::Sku>>"},
  };
  for (const auto& [llvm, rust] : pairs) {
    EXPECT_EQ(nativeName(llvm), nativeName(rust)) << llvm;
    EXPECT_FALSE(nativeName(rust).empty()) << rust;
  }
}

TEST(NormalizeNative, UnknownNamesAreUnusable) {
  EXPECT_EQ(nativeName("???"), "");
  EXPECT_EQ(nativeName("<redacted>"), "");
  EXPECT_EQ(nativeName("   "), "");
}

TEST(NormalizeJava, LambdasAccessorsAnonymousClasses) {
  EXPECT_EQ(javaName("com.a.Cart.lambda$onLoad$0"), "com.a.Cart.lambda$onLoad");
  EXPECT_EQ(javaName("com.a.Cart.lambda$onLoad$3"), "com.a.Cart.lambda$onLoad");
  EXPECT_EQ(javaName("com.a.Cart.onLoad$lambda-1"), "com.a.Cart.onLoad$lambda");
  EXPECT_EQ(javaName("com.a.Cart.onLoad$lambda$2"), "com.a.Cart.onLoad$lambda");
  EXPECT_EQ(javaName("com.a.Cart$1.run"), "com.a.Cart$_.run");
  EXPECT_EQ(javaName("com.a.Cart$2$1.run"), "com.a.Cart$_$_.run");
  EXPECT_EQ(javaName("com.a.Cart$Inner.run"), "com.a.Cart$Inner.run");
  EXPECT_EQ(javaName("com.a.Cart.load$default"), "com.a.Cart.load");
  EXPECT_EQ(javaName("com.a.Cart.$r8$lambda$Xy_9dQ2"), "com.a.Cart.$r8$lambda");
  EXPECT_EQ(javaName("com.a.Cart.load(Cart.java:12)"), "com.a.Cart.load");
  EXPECT_STREQ(normalizeJavaName("com.a.Cart.access$000").drop_reason, "synthetic accessor");
  EXPECT_STREQ(normalizeJavaName("com.a.Cart$$Lambda$12/0x0000000800c02a00.run").drop_reason, "lambda trampoline");
  EXPECT_STREQ(normalizeJavaName("com.a.-$$Lambda$Cart$3GkDZ3ZQhYV7kYm2.onClick").drop_reason, "lambda trampoline");
  EXPECT_STREQ(normalizeJavaName("com.a.Cart$$ExternalSyntheticLambda0.run").drop_reason, "lambda trampoline");
  EXPECT_STREQ(normalizeJavaName("com.a.Cart$$ExternalSyntheticOutline1.m").drop_reason, "synthetic outline");
}

TEST(NormalizeJs, PrefixesAliasesAndAnonymousFrames) {
  EXPECT_EQ(normalizeJsName("async Object.loadFeed [as load]", "").name, "loadFeed");
  EXPECT_EQ(normalizeJsName("new Cart", "").name, "Cart");
  EXPECT_EQ(normalizeJsName("Object.<anonymous>", "https://h/static/js/207.e017fea1.chunk.js").name,
            "<anonymous>@static/js/207.chunk.js");
  EXPECT_EQ(normalizeJsName("", "webpack:///./src/cart.ts").name, "<anonymous>@src/cart.ts");
  // Top-level code prints without a name in V8, as an anonymous function does.
  EXPECT_EQ(normalizeJsName("<global>", "webpack:///./src/cart.ts").name, "<anonymous>@src/cart.ts");
  EXPECT_EQ(normalizeJsName("", "").name, "");
}

TEST(NormalizeJs, FileHashesGoAway) {
  EXPECT_EQ(normalizeJsFile("https://cdn.x.com/static/js/main.3f9a1c2b.js?v=2#x"), "static/js/main.js");
  EXPECT_EQ(normalizeJsFile("https://cdn.x.com/static/js/main.77ab01fe.js"), "static/js/main.js");
  EXPECT_EQ(normalizeJsFile("app:///index.android.bundle"), "index.android.bundle");
  EXPECT_EQ(normalizeJsFile("https://h/assets/index-a1b2c3d4.js"), "assets/index.js");
  EXPECT_EQ(normalizeJsFile("webpack://shop/./src/a.js"), "src/a.js");
  // Relative to the map's folder: the output layout is not the source's identity.
  EXPECT_EQ(normalizeJsFile("../../src/cart.js"), "src/cart.js");
  EXPECT_EQ(normalizeJsFile("../../../src/cart.js"), "src/cart.js");
}

TEST(MaskMessage, NumbersIdsAndAddresses) {
  EXPECT_EQ(maskMessage("Index 5 out of bounds for length 3", 200), "Index <n> out of bounds for length <n>");
  EXPECT_EQ(maskMessage("user 0f8e3c2a-1b2c-4d5e-8f90-0123456789ab not found at 0x7ffee4b2", 200),
            "user <uuid> not found at <hex>");
  EXPECT_EQ(maskMessage("token deadbeef12 expired\nsecond line", 200), "token <hex> expired");
  EXPECT_EQ(maskMessage("order42 failed", 200), "order<n> failed");
  EXPECT_EQ(maskMessage("abcdef", 3), "abc");
  EXPECT_EQ(maskMessage("\xC3\xA9\xC3\xA9", 3), "\xC3\xA9");  // never cut inside a character
}

TEST(Noise, ThrowAbortAndThreadEntryFrames) {
  EXPECT_NE(noiseReason("abort", nativeRules()), nullptr);
  EXPECT_NE(noiseReason("objc_exception_throw", nativeRules()), nullptr);
  EXPECT_NE(noiseReason("__cxa_throw", nativeRules()), nullptr);
  EXPECT_NE(noiseReason("_pthread_start", nativeRules()), nullptr);
  EXPECT_NE(noiseReason("java.lang.Thread.run", javaRules()), nullptr);
  EXPECT_NE(noiseReason("com.a.MyCrashHandler.uncaughtException", javaRules()), nullptr);
  EXPECT_EQ(noiseReason("com.a.Cart.load", javaRules()), nullptr);
  EXPECT_EQ(noiseReason("foo::abort_checkout", nativeRules()), nullptr);
}

}  // namespace
}  // namespace restack::grouping

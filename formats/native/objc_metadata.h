// The Objective-C tier: method names and implementation addresses read from the runtime
// metadata of an iOS app binary, for apps uploaded without any dSYM (58.com's approach,
// background 003). Only 64-bit images; only what is needed to name a method:
//
//   __objc_classlist: pointers to class_t          __objc_catlist: pointers to category_t
//   class_t    { isa, superclass, cache, vtable, data }      data & ~7 -> class_ro_t
//   class_ro_t { u32 flags, start, size, reserved; ivarLayout; name; baseMethods; … }
//   category_t { name, cls, instanceMethods, classMethods, … }
//   method_list_t { u32 entsize_and_flags, u32 count, entries }
//     classic entry:  { SEL name (-> C string), types, imp }                  entsize 24
//     relative entry: { i32 name (-> selector ref -> C string), i32 types, i32 imp }, flag 1<<31
//   class methods live in the metaclass (class_t.isa), instance methods in the class.
//
// Pointers in the file may be plain addresses or dyld chained-fixup rebases (iOS 13.4+): a
// rebase keeps its target in the low 36 bits (an address, or an offset from the image base); a
// bind (bit 63) points outside the image (superclass NSObject) and is not followed.
//
// Worked example: class "Foo" with method list {count 2: {"bar", imp 0x100003f10},
// {"baz:", imp 0x100003f40}} and metaclass method {"make", imp 0x100003f80}, base 0x100000000 ->
//   {0x3f10, "-[Foo bar]"}, {0x3f40, "-[Foo baz:]"}, {0x3f80, "+[Foo make]"}.
// Category "Extras" on Foo with method "qux" -> "-[Foo(Extras) qux]".
#pragma once

#include <vector>

#include "formats/common/status.h"
#include "formats/native/native_object.h"
#include "formats/native/symbol_table.h"

namespace restack::native {

struct ObjcReadOptions {
  // Upper bound on methods read from one image (malformed counts). Default 4 million.
  uint64_t max_methods = 4u << 20;
};

// Methods of a Mach-O slice, sorted by address (source kObjc, size 0). Empty for ELF, dSYMs
// and images without Objective-C classes. Malformed metadata is skipped, never trusted.
std::vector<SymbolEntry> readObjcMethods(const ImageSlice& slice, const ObjcReadOptions& options = {});

}  // namespace restack::native

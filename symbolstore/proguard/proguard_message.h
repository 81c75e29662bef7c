// Obfuscated class, method and field names inside exception messages, restored.
//
// Runtimes name the classes and members involved in some exceptions inside the message, in
// their obfuscated form. The shapes recognised (everything else is left as printed):
//
//   Android (ART) NullPointerException
//     "Attempt to invoke virtual method 'void a.b.c(d.e)' on a null object reference"
//       -> "Attempt to invoke virtual method 'void com.shop.Cart.add(com.shop.Item)' on a null …"
//     (also interface / direct / static / super methods, and
//      "Attempt to read from field 'int a.b.c' …" / "Attempt to write to field …")
//   HotSpot helpful NullPointerException (JDK 14+)
//     "Cannot invoke \"a.b.c()\" because the return value of \"a.d.e()\" is null"
//       -> every quoted method reference ("class.method(params)") and static field
//          ("class.field") restored
//   ClassCastException
//     "a.b cannot be cast to c.d"                                   (Android)
//     "class a.b cannot be cast to class c.d (a.b and c.d are in unnamed module of loader 'app')"
//       -> both class names restored wherever they appear in the message (arrays "[La.b;" and
//          "a.b[]" included)
//   ArrayStoreException
//     "a.b cannot be stored in an array of type c.d[]"              (Android)
//   A cause's toString() as the message (`new RuntimeException(cause)`), and HotSpot's
//   ArrayStoreException, whose message is the stored object's class
//     "a.b: negative qty" -> "com.shop.ItemException: negative qty" (the rest restored as a
//     message of its own); "a.c" -> "com.shop.Holder" (package-qualified names only)
//   IllegalArgumentException of Enum.valueOf (JVM and Android; Kotlin's enumValueOf too)
//     "No enum constant a.b.FAST" -> "No enum constant com.shop.Mode.FAST" (a nested enum's
//     '$' printed as '.', as the class's canonical name spells it)
//
// A method name is restored only when every mapping of that obfuscated name in the class names
// the same original method; otherwise the obfuscated name is kept (a message cannot carry
// alternatives). Types in signatures (return, parameters, field type) are restored one by one.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "formats/common/status.h"
#include "symbolstore/proguard/proguard_records.h"

namespace restack::proguard {

// The record of an obfuscated class name, or null when the mapping does not have that class.
using ClassLookup = std::function<Expected<std::shared_ptr<const ClassRecord>>(std::string_view obfuscated)>;

// The message with every recognised obfuscated name restored; std::nullopt when nothing in it
// changed (no recognised shape, or no name in the mapping). Errors come only from `lookup`.
Expected<std::optional<std::string>> restoreExceptionMessage(std::string_view message, const ClassLookup& lookup);

}  // namespace restack::proguard

// R8-style text of retraced Java lines, for the `restored` text of an event and for tests:
//
//   "\tat a.a(SourceFile:4)"  ->  "\tat com.example.Foo.bar(Foo.java:12)"     (one line per frame
//                                 "\tat com.example.Foo.main(Foo.java:30)"     of an inline chain)
//   ambiguous                  ->  "\tat com.example.R8.bar(R8.java)"     (depth by depth: the
//                                 "\t<OR> at com.example.R8.foo(R8.java)"  distinct frames of
//                                                                          each inline level)
//   removed (synthesized)      ->  (no line)
//   not in mapping / missing   ->  the input line unchanged
//   "Caused by: a.b: msg"      ->  "Caused by: com.example.Boom: msg"   (names inside the message
//                                 restored too, see proguard_message.h)
//   "\tat app//a.a(SourceFile:4)" -> "\tat app//com.example.Foo.bar(Foo.java:12)"  (Java 9+ module
//                                 and class-loader prefix kept)
//   "\t... 2 more"               ->  "\t... 1 more"   (the restored lines the elided frames stand
//                                 for: JavaLineResult::more_count; no line when 0)
#pragma once

#include <span>
#include <string>
#include <vector>

#include "formats/stack/stack_line.h"
#include "symbolstore/proguard/proguard_resolver.h"

namespace restack::proguard {

// Appends the restored text of one input line to `out` (zero, one or several lines).
void renderJavaLine(const stack::StackLine& line, const JavaLineResult& result, std::vector<std::string>& out);

// Renders a whole run: `results` holds one entry per line of `lines`.
std::vector<std::string> renderJavaLines(std::span<const stack::StackLine> lines,
                                         std::span<const JavaLineResult> results);

}  // namespace restack::proguard

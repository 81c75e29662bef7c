// Retrace of one obfuscated Java frame against a decoded class record: the rules of R8's retrace
// specification (R8 doc/retrace.md and its reference stack-trace tests), with no I/O.
//
// Given frame `a.b.c(SourceFile:5)` and the record of class `a.b`:
//  1. The ranges of method `c` are cut into inline chains (consecutive ranges with the same
//     minified range, every caller with an original line; a range without a minified range
//     stands alone) and the chains into methods, keyed by
//     the outermost frame's original signature. Several methods = overloads sharing a name.
//  2. Each method contributes the first chain whose minified range holds the position (5). With
//     no position (missing or 0): the chain holding 0 (the `0:65535` catch-all), else the first
//     chain without a minified range. With a position that no chain holds: every chain without
//     a minified range. Nothing at all: without a position, the method's signature alone; with
//     one, the class is restored and the method name is left as it is.
//  3. More than one answer (or an original range wider than its minified one) is ambiguous:
//     every answer is kept, an original range that cannot be narrowed is split into one answer
//     per line, and the answers are sorted by class and method, as R8 prints them with <OR>.
//  4. Lines: a single original line (":14", "7:7", also 0) is that line; a range maps the
//     position linearly; no original range means the minified line is the original one. When
//     the mapping cannot tell, the input line is kept; an input without a line stays without
//     one when the answer is ambiguous. Line 0 means "no line".
//  5. Frames are dropped: the outermost frame of a synthesized (com.android.tools.r8.synthesized)
//     or outline method, or of a method of a class synthesized as a whole; the innermost n frames named by a
//     rewriteFrame rule whose throws(...) condition matches the exception directly above the frame.
//  6. An outline frame passes its position to the next frame, whose outlineCallsite positions
//     map it to the call site's position before step 2 runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbolstore/proguard/proguard_records.h"

namespace restack::proguard {

// Views into the ClassRecord that produced them: valid while that record is.
struct RetracedFrame {
  std::string_view holder;  // original class, "com.example.Foo"
  std::string_view method;  // original method name, "bar"
  std::string_view params;  // "int,java.lang.String" (for fingerprints and verbose output)
  std::string_view return_type;
  std::optional<uint32_t> line;  // never 0
  bool operator==(const RetracedFrame&) const = default;
};

// What a frame inherits from the line above it.
struct RetraceContext {
  // Set only for the frame directly under an exception line: the exception's class as printed
  // and as restored. rewriteFrame conditions are evaluated against either.
  std::string thrown_obfuscated;
  std::string thrown_original;
  // Set when the frame above was an outline: its (obfuscated) position.
  std::optional<uint32_t> outline_position;

  // Back to the default state, keeping the strings' storage (called frame after frame).
  void reset() {
    thrown_obfuscated.clear();
    thrown_original.clear();
    outline_position.reset();
  }
};

struct MethodRetrace {
  // false: the class is in the mapping but the method (at this position) is not; the caller
  // restores the class name only.
  bool method_found = false;
  bool ambiguous = false;
  // Every answer was dropped (synthesized, outline, rewriteFrame): the frame disappears.
  bool removed = false;
  // One entry per answer, each innermost frame first.
  std::vector<std::vector<RetracedFrame>> alternatives;
  // Set when this frame is an outline: the position the next frame must map.
  std::optional<uint32_t> next_outline_position;
  std::string note;  // something odd in the mapping that the reader should know

  // For reuse across calls (see the second retraceMethod): answers' storage is kept.
  void reset();
  std::vector<RetracedFrame>& newAnswer();
  void dropAnswer(size_t index);

 private:
  std::vector<std::vector<RetracedFrame>> spare_;  // cleared answer vectors, capacity kept
};

// `input_line`: the line printed in the trace, if any (0 counts as printed).
MethodRetrace retraceMethod(const ClassRecord& record, std::string_view obfuscated_method,
                            std::optional<uint32_t> input_line, const RetraceContext& context);
// The same into `out`, reusing its storage: a caller that keeps one MethodRetrace per thread
// retraces without allocating once warm.
void retraceMethod(const ClassRecord& record, std::string_view obfuscated_method, std::optional<uint32_t> input_line,
                   const RetraceContext& context, MethodRetrace& out);
// The same with hashName(obfuscated_method) computed by the caller.
void retraceMethod(const ClassRecord& record, std::string_view obfuscated_method, uint64_t method_hash,
                   std::optional<uint32_t> input_line, const RetraceContext& context, MethodRetrace& out);

// R8's file-name inference for a restored frame whose class has no `sourceFile` entry: the
// outer class's simple name, ".kt" for a class named "…Kt" (when the printed file has no
// extension or ".kt") or when the printed file is a ".kt" file, ".java" otherwise. "Native
// Method" stays as it is.
std::string inferSourceFile(std::string_view original_class, std::string_view printed_file);

// "Ljava/lang/NullPointerException;" -> "java.lang.NullPointerException".
// D8's interface desugaring (D8 before ProGuard, or classes desugared before R8, which then
// leaves them as they are) moves an interface's default method to the companion class
// "<interface>$-CC" as "$default$<name>", and its static methods there under their own names. The
// original program ran the interface's method: `holder` and `method` are set to it; false when
// `holder` is no such companion.
bool restoreDesugaredInterfaceMethod(std::string_view& holder, std::string_view& method);

std::string descriptorToClassName(std::string_view descriptor);

}  // namespace restack::proguard

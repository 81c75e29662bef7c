// The parsed form of a ProGuard / R8 mapping file (`mapping.txt`), one class block at a time.
//
// A mapping file is a sequence of class blocks. Worked example (R8, map version 2.2):
//
//   # compiler: R8
//   # pg_map_id: 3a5e0c1
//   # pg_map_hash: SHA-256 3a5e0c1f...
//   # {"id":"com.android.tools.r8.mapping","version":"2.2"}
//   com.example.Foo -> a.b:                       class line: original -> obfuscated
//   # {"id":"sourceFile","fileName":"Foo.kt"}     metadata of the class above
//       int count -> a                            field line
//       1:4:void bar(int):10:13 -> c              method: minified lines 1..4 = original 10..13
//       5:5:void com.example.Util.log():7:7 -> c  inline chain at minified line 5: innermost
//       5:5:void bar(int):14 -> c                 ... its caller, at original line 14
//       #
//       {"id":"com.android.tools.r8.rewriteFrame","conditions":["throws(Ljava/lang/NullPointerException;)"],"actions":["removeInnerFrames(1)"]}
//       0:65535:void baz():33:33 -> d             catch-all range: every position maps to 33
//       void qux() -> e                           no line information at all
//
// Consecutive method lines of one obfuscated name with the same minified range form an inline
// chain, innermost first. `:origstart` alone (":14") is the single original line of a caller
// in a chain; `:origstart:origend` is a range. Metadata lines (`# {...}` JSON, or the lenient
// single-quoted form R8 also writes) apply to the class or member line directly above them and
// are honoured only when the map version in force (the last `com.android.tools.r8.mapping`
// entry above them) is at least the version that introduced them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace restack::proguard {

// An inclusive line range "from:to".
struct LineRange {
  uint32_t from = 0;
  uint32_t to = 0;
  bool contains(uint32_t line) const { return from <= line && line <= to; }
  uint32_t span() const { return to - from + 1; }
  bool operator==(const LineRange&) const = default;
};

// "void com.example.Util.log(int,java.lang.String)": holder is empty when the method belongs to
// the class of its block; otherwise the method was moved or inlined from `holder`.
struct MethodSignature {
  std::string return_type;
  std::string holder;
  std::string name;
  std::string params;  // comma separated, as written, without spaces: "int,java.lang.String"
  bool operator==(const MethodSignature&) const = default;
};

// R8 `rewriteFrame`: when every condition holds, apply the actions to the retraced frames.
struct RewriteRule {
  // Descriptors of `throws(...)` conditions, e.g. "Ljava/lang/NullPointerException;".
  std::vector<std::string> throws_descriptors;
  // Sum of the `removeInnerFrames(n)` actions.
  uint32_t remove_inner_frames = 0;
};

// R8 `outlineCallsite`: maps a position inside an outline to the call site's position.
struct OutlineCallsite {
  std::vector<std::pair<uint32_t, uint32_t>> positions;  // outline position -> callsite position
  std::string outline;  // residual descriptor of the outline ("La;a()I"), map version >= 2.2
};

struct MethodMapping {
  std::string obfuscated_name;
  std::optional<LineRange> minified;  // "a:b:" prefix
  std::optional<LineRange> original;  // ":c" (-> c:c) or ":c:d"
  MethodSignature signature;
  bool synthesized = false;  // com.android.tools.r8.synthesized
  bool outline = false;      // com.android.tools.r8.outline
  std::vector<RewriteRule> rewrite_rules;
  std::optional<OutlineCallsite> outline_callsite;
  std::string residual_signature;  // com.android.tools.r8.residualsignature (no retrace effect)
};

struct FieldMapping {
  std::string type;
  std::string name;
  std::string obfuscated_name;
  bool synthesized = false;
  std::string residual_signature;
};

struct ClassMapping {
  std::string original_name;    // "com.example.Foo"
  std::string obfuscated_name;  // "a.b"
  std::string source_file;      // from the `sourceFile` metadata; empty when absent
  bool synthesized = false;
  std::vector<MethodMapping> methods;  // in file order (inline chains stay contiguous)
  std::vector<FieldMapping> fields;
  uint64_t line_number = 0;  // 1-based line of the class line, for messages
  // Other original classes whose blocks have the same obfuscated name (ProGuard's class merging
  // writes one block per merged class, all under the surviving class's name). Filled when such
  // blocks are merged into one (ingest); their methods then carry their class as `holder`.
  std::vector<std::string> merged_names;
};

// The file's header comments ("# key: value") and the latest map version seen.
struct MappingHeader {
  std::string compiler;  // "R8", "ProGuard"
  std::string compiler_version;
  std::string min_api;
  std::string pg_map_id;    // R8's short map id, also what %MAP_ID puts in source files
  std::string pg_map_hash;  // "SHA-256 <hex>"
  std::string map_version;  // latest `com.android.tools.r8.mapping` version, "" = none (0)
};

}  // namespace restack::proguard

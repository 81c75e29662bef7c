// Streaming reader of ProGuard / R8 mapping files (format: see mapping_model.h).
//
// Pull style: `next()` returns one class block at a time, so a mapping of several hundred MB is
// parsed in one pass over a memory-mapped file while only the current class is held in memory.
//
//   MappingReader reader(file.bytes());
//   RESTACK_RETURN_IF_ERROR(reader.readPreamble());   // header: pg_map_id, map version …
//   ClassMapping mapping;
//   while (true) {
//     auto more = reader.next(mapping);
//     if (!more) return more.error();   // "mapping line 12: expected 'original -> obfuscated:'"
//     if (!*more) break;
//     use(mapping);
//   }
//
// Unknown metadata ids, metadata newer than the map version in force, and map versions newer
// than this reader knows are ignored with a warning, as R8's specification asks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/proguard/mapping_model.h"

namespace restack::proguard {

// The newest map version this reader understands ("2.2").
inline constexpr uint32_t kSupportedMapVersion = 2002;  // major * 1000 + minor

struct MappingReaderOptions {
  // Longest line accepted; longer lines are an error (a binary file, not a mapping). Default 4 MiB.
  size_t max_line_bytes = 4u << 20;
  // How many warning messages are kept; further warnings are only counted. Default 50.
  size_t max_warning_messages = 50;
  // Restore the source name of methods ProGuard renamed "name$<hex>" when its optimizer changed
  // their descriptor (see restoreSpecializedName). Mappings of R8, which never does this, are
  // left as they are. Default true.
  bool restore_specialized_names = true;
  // Mark the lambda classes a desugarer made (isDesugaredLambdaClass) and the methods it added to
  // reach a lambda's body from them (isDesugaredLambdaForwarder) as synthesized, so that their
  // frames are dropped as R8's marked ones are: the JVM never prints the frame of a lambda's
  // proxy class, only the lambda body's. R8 marks the synthetics it makes itself, but neither
  // ProGuard nor R8 marks those D8 made before them (classes desugared by D8 first: the Android
  // Gradle plugin's order before R8, or a library shipped desugared): in R8's mappings only the
  // classes whose source file D8 named "D8$$SyntheticClass", and the forwarders, are marked.
  // Default true.
  bool hide_desugared_lambda_frames = true;
  // Drop the frame R8 adds from a Kotlin class's own line map (isKotlinLineMapFrame) at the top
  // of an inline chain: the original program never ran it, and R8's retrace prints it. Default
  // true.
  bool drop_kotlin_line_map_frames = true;
  // R8 8.0 and later record every class's source file (`sourceFile`), even one its name implies;
  // in their mappings a class without that entry had no SourceFile attribute (kotlinc's multifile
  // facades such as kotlinx.coroutines.BuildersKt, the objects it copies for inlined lambdas), and
  // the runtime printed its frames as "Unknown Source" (Android with the line, "Unknown
  // Source:1"). Such a class gets kUnknownSourceFile as its source file instead of a name
  // inferred from the class's. Earlier R8 (4.0.48 checked) wrote the entry only when it differed
  // from the inferred name, so their mappings are left as they are. Default true.
  bool unknown_source_without_file_entry = true;
};

// The file of a frame whose class had no source file, as Java and Android print it.
inline constexpr std::string_view kUnknownSourceFile = "Unknown Source";

class MappingReader {
 public:
  explicit MappingReader(std::string_view text, MappingReaderOptions options = {});

  // Reads the header comments before the first class line. Optional: next() calls it.
  Status readPreamble();
  // Reads the next class block into `out` (replacing its contents). true: a class was read;
  // false: end of input; error: the file is malformed at the line the message names.
  Expected<bool> next(ClassMapping& out);

  const MappingHeader& header() const { return header_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  uint64_t warningCount() const { return warning_count_; }
  // Bytes consumed so far (for progress reports).
  size_t position() const { return pos_; }
  uint64_t lineNumber() const { return line_number_; }

 private:
  enum class Target { kNone, kClass, kMethod, kField };

  bool readLine(std::string_view& line, size_t& line_start);
  Error lineError(const std::string& what, std::string_view line) const;
  Status parseClassLine(std::string_view line, ClassMapping& out);
  Status parseMemberLine(std::string_view trimmed, ClassMapping& out);
  void parseComment(std::string_view comment, ClassMapping* current);
  void applyMetadata(const struct JsonValue& json, ClassMapping* current);
  bool versionAtLeast(uint32_t version) const { return map_version_ >= version; }
  // R8 says so in its header; a mapping without one is taken as R8's once R8 metadata appeared.
  bool writtenByR8() const { return header_.compiler == "R8" || r8_metadata_seen_; }
  // R8 8.0 or later says so in its header: every class with a source file has a `sourceFile` entry.
  static bool recordsEverySourceFile(const MappingHeader& header);
  void warn(std::string message);
  void warnOnce(const std::string& key, std::string message);
  void finishClass(ClassMapping& out) const;

  std::string_view text_;
  MappingReaderOptions options_;
  size_t pos_ = 0;
  uint64_t line_number_ = 0;
  bool preamble_done_ = false;
  MappingHeader header_;
  uint32_t map_version_ = 0;
  bool r8_metadata_seen_ = false;
  bool records_every_source_file_ = false;  // recordsEverySourceFile(header_), kept as the header is read
  Target target_ = Target::kNone;
  std::vector<std::string> warnings_;
  std::vector<std::string> warned_keys_;
  uint64_t warning_count_ = 0;
};

// ProGuard's optimizer renames a method whose descriptor it changed (parameter types narrowed
// by specialization, unused parameters removed) to "name$" + Long.toHexString(Math.abs(hash of
// the original descriptor)), and its mapping lists that name as the original one, so a retrace
// would print "castToCart$5d527804" where the unobfuscated run printed "castToCart". Returns
// the name without such suffixes ("castToCart"), or the name unchanged when it does not end in
// one. Only suffixes of 5 to 8 hex digits (or ProGuard's 16-digit form of Integer.MIN_VALUE)
// count: a hash below 0x10000 is a 1-in-32768 case, while javac and Kotlin use short suffixes
// of their own ("access$000", "lambda$main$0"), which stay. "access$…" accessors also stay; a
// javac lambda body loses only a suffix after its own "$<number>".
std::string_view restoreSpecializedName(std::string_view name);

// A lambda class made by a desugarer rather than written in source: D8/R8's
// "Outer$$ExternalSyntheticLambda0" (source file "D8$$SyntheticClass" or "R8$$SyntheticClass"),
// the older desugar tool's "-$$Lambda$Outer$<hash>", ProGuard's backported "Outer$$Lambda$0".
// ProGuard run on desugared classes (the Android Gradle plugin before R8) keeps them as ordinary
// classes in its mapping, so their proxy frames ("run", no line) would otherwise be restored.
bool isDesugaredLambdaClass(std::string_view original_name, std::string_view source_file);

// A static method D8/R8's desugaring adds to a class so that its lambda classes can call a
// private lambda body: "$r8$lambda$<hash of the lambda>" (every Kotlin lambda compiled to
// invokedynamic gets one). Its frame sits between the lambda class's and the body's; the
// original program never ran it.
bool isDesugaredLambdaForwarder(std::string_view method_name);

// R8 8.5.35 and 9.5.28 add, at the top of an inline chain in a Kotlin class, a frame of a method of
// the class itself at the line of the frame below it: `1:1:void main():27:27 -> c` above
// `1:1:kotlin.Unit scenarios$lambda$0():27 -> c` (9.5.28, main() nearly everywhere), or
// `11:11:kotlin.Unit scenarios$lambda$1():28:28 -> f` above
// `11:11:java.util.List org.restack.kotlin.Configs.tokenize(java.lang.String):28 -> f` (8.5.35,
// the class's method covering that line). The line looks run through the class's own Kotlin line
// map (the SourceDebugExtension kotlinc writes for inline functions); the original program never
// ran that frame, and R8's retrace prints it. True for `chain[0]` of such a chain (innermost
// first, at least two frames): a method of the class itself (no holder) at one line L, not 0,
// whose caller is another method at line L, and with no R8 metadata of its own. A real call
// between two methods on one line of one file is rare; the calls that sit on one line by
// construction are kept: a bridge calling its method (same name), a Kotlin default-arguments
// stub calling its function (`copy$default` -> `copy`), an `access$` accessor.
bool isKotlinLineMapFrame(const MethodMapping& innermost, const MethodMapping& caller);

// Parses a map version such as "2.1" into major * 1000 + minor; "experimental" and unreadable
// versions are treated as newer than anything supported.
uint32_t parseMapVersion(std::string_view text);

}  // namespace restack::proguard

#include "symbolstore/proguard/fuzz/fuzz_entry.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "formats/proguard/mapping_reader.h"
#include "symbolstore/proguard/proguard_message.h"
#include "symbolstore/proguard/proguard_records.h"
#include "symbolstore/proguard/proguard_retrace.h"

namespace restack::proguard {

int fuzzProguardOnce(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)decodeClassRecord(bytes);
  (void)decodeBuildPointer(bytes);
  (void)decodeMapInfo(bytes);

  MappingReaderOptions options;
  options.max_line_bytes = 1u << 16;
  MappingReader reader(bytes, options);
  ClassMapping mapping;
  for (int classes = 0; classes < 1000; ++classes) {
    auto more = reader.next(mapping);
    if (!more || !*more) break;
    std::string encoded = encodeClassRecord(mapping);
    auto record = decodeClassRecord(encoded);
    if (!record) std::abort();  // what we encode we must be able to decode
    // Exception messages that name the class (its toString() as a cause, a cast, an enum
    // constant), the rest of the message from the input, restored through this record.
    const auto shared = std::make_shared<const ClassRecord>(std::move(*record));
    const ClassLookup lookup = [&](std::string_view name) -> Expected<std::shared_ptr<const ClassRecord>> {
      if (name == mapping.obfuscated_name) return shared;
      return std::shared_ptr<const ClassRecord>();
    };
    const std::string_view tail = bytes.substr(0, std::min<size_t>(bytes.size(), 512));
    for (const std::string& message :
         {mapping.obfuscated_name + ": " + std::string(tail),
          mapping.obfuscated_name + ": " + mapping.obfuscated_name + ": " + std::string(tail), std::string(tail),
          "No enum constant " + mapping.obfuscated_name + "." + std::string(tail.substr(0, 16)),
          mapping.obfuscated_name + " cannot be cast to " + std::string(tail)}) {
      (void)restoreExceptionMessage(message, lookup);
    }
    RetraceContext context;
    uint32_t salt = static_cast<uint32_t>(size);
    for (const MethodRecord& method : shared->methods) {
      // The resolver's prefetch steps read the record too: for a method it has, and for a name
      // whose hash tag may collide with one.
      for (ClassRecord::PrefetchStep step : ClassRecord::kPrefetchSteps) {
        shared->prefetchMethod(method.obfuscated_name, method.name_hash, step);
        shared->prefetchMethod("z", method.name_hash, step);
      }
      for (uint32_t probe = 0; probe < 4; ++probe) {
        std::optional<uint32_t> line;
        if (probe > 0) line = (salt * 2654435761u + probe * 97u) % 70000u;
        if (probe == 3 && !method.ranges.empty() && method.ranges[0].minified) line = method.ranges[0].minified->from;
        MethodRetrace result = retraceMethod(*shared, method.obfuscated_name, line, context);
        context = {};
        context.outline_position = result.next_outline_position;
        if (probe == 2) context.thrown_obfuscated = "java.lang.NullPointerException";
        for (const auto& answer : result.alternatives) {
          for (const RetracedFrame& frame : answer) {
            if (frame.line && *frame.line == 0) std::abort();  // 0 means "no line" and is never kept
            (void)inferSourceFile(frame.holder, "SourceFile");
          }
        }
      }
    }
  }
  return 0;
}

}  // namespace restack::proguard

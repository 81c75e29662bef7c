#include "formats/breakpad/fuzz/fuzz_entry.h"

#include <string_view>

#include "formats/breakpad/sym_reader.h"

namespace restack::breakpad {

int fuzzSymReaderOnce(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)looksLikeSymFile(text);
  SymReader reader = SymReader::fromBytes(text, "fuzz.sym");
  uint64_t previous_line = 0;
  for (;;) {
    auto record = reader.next();
    if (!record || std::holds_alternative<EndOfFile>(*record)) break;
    if (const auto* inlined = std::get_if<InlineRecord>(&*record)) {
      for (const AddressRange& range : inlined->ranges) (void)(range.address + range.size);
    }
    // Every record consumes at least one line: the loop ends.
    if (reader.lineNumber() <= previous_line) __builtin_trap();
    previous_line = reader.lineNumber();
  }
  return 0;
}

}  // namespace restack::breakpad

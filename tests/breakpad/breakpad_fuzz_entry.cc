#include "tests/breakpad/breakpad_fuzz_entry.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "formats/breakpad/fuzz/fuzz_entry.h"
#include "formats/breakpad/sym_reader.h"
#include "symbolstore/breakpad/sym_function.h"
#include "symbolstore/native/native_records.h"

namespace restack::breakpad_test {
namespace {

void buildAndCheck(const breakpad_store::SymFunction& function, const std::string& source) {
  breakpad_store::SymStringIds ids;
  uint32_t next = 0;
  ids.name = [&](std::string_view name) -> Expected<uint32_t> {
    (void)breakpad_store::llvmStyleName(name);
    return next++;
  };
  ids.file = [&](uint64_t number) -> Expected<uint32_t> { return number % 3 == 0 ? native_store::kNoString : next++; };
  ids.origin = [&](uint64_t number) -> Expected<uint32_t> { return next++; };
  breakpad_store::SymFunctionIssues issues;
  auto record = breakpad_store::buildFunctionRecord(function, ids, issues);
  if (!record) return;
  std::string encoded = native_store::encodeFunction(*record);
  auto decoded = native_store::decodeFunction(record->begin, encoded);
  if (!decoded) {
    fprintf(stderr, "%s: FUNC at 0x%llx built a record the native reader refuses: %s\n", source.c_str(),
            static_cast<unsigned long long>(function.begin), decoded.error().describe().c_str());
    abort();
  }
}

}  // namespace

void fuzzBreakpadInput(const uint8_t* data, size_t size) {
  breakpad::fuzzSymReaderOnce(data, size);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  breakpad::SymReader reader = breakpad::SymReader::fromBytes(text, "fuzz.sym");
  breakpad_store::SymFunction function;
  bool open = false;
  for (;;) {
    auto record = reader.next();
    const bool done = !record || std::holds_alternative<breakpad::EndOfFile>(*record);
    const auto* func = record ? std::get_if<breakpad::FuncRecord>(&*record) : nullptr;
    if ((done || func) && open) {
      buildAndCheck(function, "fuzz.sym");
      open = false;
    }
    if (done) break;
    if (func && func->size > 0) {
      function = {};
      function.begin = func->address;
      function.end = func->address + func->size;
      function.name = func->name;
      open = true;
    } else if (const auto* line = std::get_if<breakpad::LineRecord>(&*record); line && open) {
      function.lines.push_back(*line);
    } else if (const auto* inlined = std::get_if<breakpad::InlineRecord>(&*record); inlined && open) {
      function.inlines.push_back({inlined->depth,
                                  inlined->call_line,
                                  inlined->call_file,
                                  inlined->origin,
                                  {inlined->ranges.begin(), inlined->ranges.end()}});
    }
  }
}

}  // namespace restack::breakpad_test

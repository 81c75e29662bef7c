// The Breakpad ingest path as one function of untrusted bytes, shared by the libFuzzer target
// (fuzz_breakpad.cc, -DRESTACK_FUZZ=ON) and the regression run in breakpad_unit_test: the .sym
// reader (formats/breakpad/fuzz/fuzz_entry.h), then every FUNC with its lines and INLINE records
// built into a native FunctionRecord (symbolstore/breakpad/sym_function.h), encoded, and decoded
// again. A record the ingester builds that the native reader refuses would fail every lookup in
// that function, so that is treated as a crash, like any sanitizer report.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::breakpad_test {

void fuzzBreakpadInput(const uint8_t* data, size_t size);

}  // namespace restack::breakpad_test

// libFuzzer target for the Breakpad ingest path without a store (breakpad_fuzz_entry.h: the .sym
// reader and the FunctionRecord builder). Build it with the libraries instrumented too, so that libFuzzer sees its
// coverage and ASan/UBSan check it:
//   cmake -S . -B build-bpfuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 \
//     -DCMAKE_C_COMPILER=clang-19 -DRESTACK_FUZZ=ON -DRESTACK_SANITIZE=ON \
//     -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link
//   cmake --build build-bpfuzz --target fuzz_breakpad
//   mkdir -p /tmp/corpus && build-bpfuzz/tests/breakpad/fuzz_breakpad -max_total_time=300 \
//     /tmp/corpus tests/breakpad/fuzz_regressions
// Inputs it finds are kept in tests/breakpad/fuzz_regressions/ (run by breakpad_unit_test).
#include <cstddef>
#include <cstdint>

#include "tests/breakpad/breakpad_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restack::breakpad_test::fuzzBreakpadInput(data, size);
  return 0;
}

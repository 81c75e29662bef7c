// libFuzzer target for the native ingest path (object opening, symbol tables, Objective-C
// metadata, the DWARF walk on its threads, record decoders). Build it with the libraries
// instrumented too, so that libFuzzer sees their coverage and ASan/UBSan check them:
//   cmake -S . -B build-natfuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 \
//     -DCMAKE_C_COMPILER=clang-19 -DRESTACK_FUZZ=ON -DRESTACK_SANITIZE=ON \
//     -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link
//   cmake --build build-natfuzz --target fuzz_native
//   tests/native/make_fuzz_seeds.sh /tmp/seeds && mkdir -p /tmp/corpus
//   build-natfuzz/tests/native/fuzz_native -max_len=100000 -max_total_time=300 \
//     -rss_limit_mb=2048 -timeout=25 /tmp/corpus /tmp/seeds
// Inputs it found are kept in tests/native/fuzz_regressions/ (run by native_unit_test).
#include <cstddef>
#include <cstdint>

#include "tests/native/native_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restack::native_test::fuzzNativeInput(data, size);
  return 0;
}

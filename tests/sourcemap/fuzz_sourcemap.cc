// libFuzzer target over every source-map parser (build with -DRESTACK_FUZZ=ON and clang):
//   build/tests/sourcemap/fuzz_sourcemap -max_total_time=60 corpus/
#include <cstddef>
#include <cstdint>

#include "formats/sourcemap/fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return restack::sourcemap::fuzzSourcemapOnce(data, size);
}

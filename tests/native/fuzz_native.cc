// libFuzzer target for the native ingest path: cmake -DRESTACK_FUZZ=ON, then
//   ./fuzz_native -max_len=65536 corpus/   (seed the corpus with small .so / Mach-O files)
#include <cstddef>
#include <cstdint>

#include "tests/native/native_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restack::native_test::fuzzNativeInput(data, size);
  return 0;
}

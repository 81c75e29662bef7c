// libFuzzer target for unpacking uploads: gzip, zstd and zip from bytes into a temporary folder
// with small limits (-DRESTACK_FUZZ=ON):
//   build/tests/archive/fuzz_archive -max_len=65536 -max_total_time=60 tests/archive/fuzz_regressions
// Inputs it found are kept in tests/archive/fuzz_regressions/ (run by upload_message_test).
#include <cstddef>
#include <cstdint>

#include "tests/archive/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return restack::archive_test::fuzzArchiveOnce(data, size);
}

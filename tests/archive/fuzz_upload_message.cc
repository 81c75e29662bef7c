// libFuzzer target for decodeUploadMessage over a fuzzed key and headers (-DRESTACK_FUZZ=ON):
//   build/tests/archive/fuzz_upload_message -max_len=16384 -max_total_time=60
// Inputs it found are kept in tests/archive/fuzz_regressions/ (run by upload_message_test).
#include <cstddef>
#include <cstdint>

#include "tests/archive/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return restack::archive_test::fuzzUploadMessageOnce(data, size);
}

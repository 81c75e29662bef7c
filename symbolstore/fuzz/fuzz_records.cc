// libFuzzer target for the record codec and every record decoder (-DRESTACK_FUZZ=ON, clang):
//   build/symbolstore/fuzz/fuzz_records -max_len=4096 -max_total_time=60
// Seeds: tests/records/golden/records.txt holds one value of every type (hex; prefix the type
// byte of symbolstore/fuzz/record_fuzz_entry.h).
#include <cstddef>
#include <cstdint>

#include "symbolstore/fuzz/record_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restack::records::recordFuzzOne(data, size);
  return 0;
}

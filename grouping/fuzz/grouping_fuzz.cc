// libFuzzer target: build with -DRESTACK_FUZZ=ON (clang) and run
//   build/grouping/grouping_fuzz -max_len=4096 -max_total_time=60 <corpus dir>
#include <cstddef>
#include <cstdint>

#include "grouping/fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restack::grouping::groupingFuzzOne(data, size);
  return 0;
}

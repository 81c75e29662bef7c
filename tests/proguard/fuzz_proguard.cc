// libFuzzer target over the mapping reader, record codec and retrace rules (build with
// -DRESTACK_FUZZ=ON and clang):
//   build/tests/proguard/fuzz_proguard -max_total_time=60 -dict=tests/proguard/mapping.dict
#include <cstddef>
#include <cstdint>

#include "symbolstore/proguard/fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return restack::proguard::fuzzProguardOnce(data, size);
}

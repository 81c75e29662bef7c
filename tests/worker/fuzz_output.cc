// libFuzzer target for the output writer (-DRESTACK_FUZZ=ON): fuzzed restored events -> JSON
// writer -> valid JSON within limits.max_output_bytes; worker/pipeline/fuzz/fuzz_output.h.
//   build/tests/worker/fuzz_output -max_len=65536 -max_total_time=60
// Inputs it found are kept in tests/worker/fuzz_regressions/ (run by output_fuzz_test).
#include <cstddef>
#include <cstdint>

#include "worker/pipeline/fuzz/fuzz_output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)restack::pipeline::outputFuzzOne(data, size);
  return 0;
}

// libFuzzer target for upload location parsing and the location/address policy (no network).
// Build the libraries instrumented too, so that libFuzzer sees their coverage:
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19 \
//     -DRESTACK_FUZZ=ON -DRESTACK_SANITIZE=ON -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link
//   cmake --build build-fuzz --target fuzz_upload_location
//   mkdir -p /tmp/corpus && build-fuzz/tests/worker/fuzz_upload_location -max_len=512 \
//     -max_total_time=120 /tmp/corpus tests/worker/upload_location_fuzz_inputs
// Inputs worth keeping go to tests/worker/upload_location_fuzz_inputs/ (run by upload_fetch_test).
#include <cstddef>
#include <cstdint>

#include "tests/worker/upload_location_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restack::worker_test::fuzzUploadLocation(data, size);
  return 0;
}

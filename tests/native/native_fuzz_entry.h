// The native ingest path as one function of untrusted bytes, shared by the libFuzzer target
// (fuzz_native.cc, -DRESTACK_FUZZ=ON) and the deterministic run in native_unit_test.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::native_test {

// Parses `data` as an uploaded native symbol file (every slice: symbols, Objective-C metadata,
// DWARF) and as each kind of stored record. Must never crash, whatever the bytes.
void fuzzNativeInput(const uint8_t* data, size_t size);

}  // namespace restack::native_test

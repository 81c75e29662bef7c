// One fuzz iteration over the ProGuard code paths that read untrusted bytes: the mapping reader
// (the input as a mapping file), the class-record codec (every parsed class encoded and decoded
// again, and the input itself decoded as a record) and the retrace rules (every method of every
// parsed class retraced at positions taken from the input). Shared by the libFuzzer target
// (tests/proguard/fuzz_proguard.cc, -DRESTACK_FUZZ=ON) and the unit tests' deterministic run.
// Returns 0 always; a crash, sanitizer report, hang or failed invariant (abort) is the failure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::proguard {

int fuzzProguardOnce(const uint8_t* data, size_t size);

}  // namespace restack::proguard

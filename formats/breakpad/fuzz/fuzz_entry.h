// One fuzz iteration over the .sym reader: every record of the bytes, and the MODULE-line
// detector. Shared by the libFuzzer target (tests/breakpad/fuzz_breakpad.cc, -DRESTACK_FUZZ=ON)
// and the unit tests' run over tests/breakpad/fuzz_regressions/. Returns 0 always; a crash,
// sanitizer report or hang is the failure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::breakpad {

int fuzzSymReaderOnce(const uint8_t* data, size_t size);

}  // namespace restack::breakpad

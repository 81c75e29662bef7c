// A -gsplit-dwarf library and its split-DWARF package (libfoo.so + libfoo.so.dwp) through the
// ingest path a worker takes for them, as one function of untrusted bytes. Shared by the
// libFuzzer target (fuzz_dwp.cc, -DRESTACK_FUZZ=ON), native_unit_test's replay of
// tests/native/fuzz_regressions/*.dwpair and native_tools_test's run over real packages.
//
// Input ("dwpair"): the library's size as a little-endian u32, the library, then the package.
// tests/native/make_dwp_fuzz_seeds.sh writes such inputs from packages built with clang-19
// -gsplit-dwarf and llvm-dwp-19; fuzz_dwp mutates mostly the package part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace restack::native_test {

struct DwpPair {
  std::string_view library;
  std::string_view package;
};

// The two parts of a dwpair input; nothing when the size prefix does not fit the bytes.
std::optional<DwpPair> splitDwpPair(std::string_view input);
std::string makeDwpPair(std::string_view library, std::string_view package);

// What one input did, for the tests that run the entry on real packages.
struct DwpFuzzOutcome {
  bool ingested = false;             // the upload was accepted
  size_t warnings = 0;               // of its report
  size_t package_warnings = 0;       // of those, LLVM's reports on the package ("libfuzz.so.dwp: …")
  size_t symbols = 0;                // of the library's symbol table, looked up below
  size_t restored = 0;               // of those, restored frames
  size_t restored_with_inlines = 0;  // of those, with inline frames (only the package has them)
};

// Writes the library and its package as libfuzz.so and libfuzz.so.dwp into a folder, uploads the
// folder (symbolstore/ingest.h, ingestUpload: the pair is found by its names, as in a zip) into a
// store that is emptied first, then looks up every function of the library's symbol table through
// the native resolver. Must never crash, hang or exhaust memory, whatever the bytes; aborts when
// a promise breaks: an upload error that is a bug (ErrorCode::kInternal), a store failure on
// lookup, a package warning that repeats, is not printable or is longer than 403 bytes, more than
// 20 package warnings.
DwpFuzzOutcome fuzzDwpInput(const uint8_t* data, size_t size);

}  // namespace restack::native_test

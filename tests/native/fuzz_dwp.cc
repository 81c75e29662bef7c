// libFuzzer target for split-DWARF packages: a -gsplit-dwarf library and its .dwp uploaded
// together, through ingest, the DWARF walk over the package and lookups of the stored records
// (tests/native/dwp_fuzz_entry.h; the input carries both files). Build it in a fuzz
// configuration, every library instrumented with ASan + UBSan (-DRESTACK_FUZZ=ON):
//   scripts/build.sh build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTACK_TESTS=ON \
//     -DRESTACK_BENCHMARKS=OFF -DRESTACK_SANITIZE=OFF -DRESTACK_FUZZ=ON --target fuzz_dwp
//   tests/native/make_dwp_fuzz_seeds.sh /tmp/dwpfuzz/seeds && mkdir -p /tmp/dwpfuzz/corpus
//   build-fuzz/tests/native/fuzz_dwp -max_len=65536 -max_total_time=720 -rss_limit_mb=2048 \
//     -timeout=25 /tmp/dwpfuzz/corpus /tmp/dwpfuzz/seeds
// (Name the corpus folder first: libFuzzer writes what it finds into the first folder.) Runs and
// findings: docs/benchmarks.md, "Fuzzing the ingest path". Inputs it found are kept in
// tests/native/fuzz_regressions/*.dwpair (run by native_unit_test).
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "tests/native/dwp_fuzz_entry.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  restack::native_test::fuzzDwpInput(data, size);
  return 0;
}

// Mutates the package and keeps the library, which fuzz_native covers, mostly as it is: a
// library mutated as often as the package would fail its own checks more often than it lets a
// package be read. One mutation in 16 changes the library (its skeleton units are what the
// package is matched with and read through: DWO ids, address and string offset bases).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  using restack::native_test::makeDwpPair;
  using restack::native_test::splitDwpPair;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto pair = splitDwpPair(input);
  if (!pair) return LLVMFuzzerMutate(data, size, max_size);
  std::minstd_rand random(seed);
  const size_t head = 4 + pair->library.size();
  if (random() % 16 != 0) {
    if (head >= max_size) return size;
    return head + LLVMFuzzerMutate(data + head, size - head, max_size - head);
  }
  std::string library(pair->library);
  const std::string package(pair->package);
  library.resize(library.size() + 64);
  library.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(library.data()), pair->library.size(), library.size()));
  const std::string mutated = makeDwpPair(library, package);
  if (mutated.size() > max_size) return size;
  std::copy(mutated.begin(), mutated.end(), data);
  return mutated.size();
}

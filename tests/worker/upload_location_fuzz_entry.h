// Upload location parsing and the policy decision as one function of untrusted bytes, shared by
// the libFuzzer target (fuzz_upload_location.cc, -DRESTACK_FUZZ=ON) and the deterministic run in
// upload_fetch_test. Nothing here touches the network: it fuzzes the decision, not the fetch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::worker_test {

// Treats `data` as a restack.location header and as address/network text: percent-decoding,
// redaction, address parsing and classification, and checkUploadLocation under a closed and an
// open policy. Must never crash; aborts when a property breaks (a redacted location that keeps a
// query, an address that does not survive formatting and parsing, an accepted location outside
// the policy).
void fuzzUploadLocation(const uint8_t* data, size_t size);

}  // namespace restack::worker_test

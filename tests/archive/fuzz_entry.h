// One fuzz iteration over archive extraction (fuzz_archive_entry.cc) and over upload-message
// decoding (fuzz_message_entry.cc). Shared by the libFuzzer targets (fuzz_archive.cc,
// fuzz_upload_message.cc, -DRESTACK_FUZZ=ON) and upload_message_test's run over
// tests/archive/fuzz_regressions/. A crash, a sanitizer report, an escaped exception or a
// broken invariant (abort) is the failure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace restack::archive_test {

// The bytes as gzip, as zstd and as a zip, unpacked into a fresh temporary folder with small
// limits (1 MiB, ratio 50, 64 zip entries); aborts when more than that was written.
int fuzzArchiveOnce(const uint8_t* data, size_t size);

// Bytes split at 0xff into: key, then header name / value pairs (a one-byte name 0-6 stands
// for restack.kind … restack.location, or a foreign header); the first byte's low bit says
// "shared topic". Aborts when a decoded upload breaks decodeUploadMessage's promises (no NUL,
// values within their caps).
int fuzzUploadMessageOnce(const uint8_t* data, size_t size);

}  // namespace restack::archive_test

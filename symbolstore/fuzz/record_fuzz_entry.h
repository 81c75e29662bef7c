// Fuzz entry point of the record codec (symbolstore/record_codec.h) through every record decoder,
// shared by the libFuzzer target (symbolstore/fuzz/fuzz_records.cc, -DRESTACK_FUZZ=ON) and the
// deterministic unit-test run (tests/records/record_codec_test.cc). Not part of any production
// library (docs/design.md, "Testing").
//
// Input layout: byte 0 picks the record type (kRecordFuzzTypes[byte % size]); the rest is the
// stored value. A value that decodes must encode to bytes that decode and encode to themselves
// again; a violated invariant aborts. Returns 1 when the value decoded, else 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace restack::records {

inline constexpr std::string_view kRecordFuzzTypes[] = {
    "native.image",      "native.function",      "native.symbols",         "native.strings",
    "native.module",     "native.alias",         "proguard.build-pointer", "proguard.id-pointer",
    "proguard.map-info", "proguard.source-file", "proguard.class",         "sourcemap.pointer",
    "sourcemap.header",  "sourcemap.source",     "sourcemap.text",         "sourcemap.chunk",
    "usage.time",        "sourcemap.functions",
};

int recordFuzzOne(const uint8_t* data, size_t size);

}  // namespace restack::records

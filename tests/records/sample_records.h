// A fixed set of records of every stored type (native, proguard, sourcemap, usage), built through the
// public encoders. tests/records/make_record_goldens.cc prints their bytes into
// tests/records/golden/records.txt; record_codec_test.cc checks that today's encoders still
// write exactly those bytes, so that stores written by earlier releases stay readable.
#pragma once

#include <string>
#include <vector>

namespace restack::records_test {

struct SampleRecord {
  std::string name;   // unique, "<family>.<type>.<case>"
  std::string key;    // the record's key bytes
  std::string value;  // the record's value bytes
};

std::vector<SampleRecord> sampleRecords();

// One line per record: "<name> <key hex> <value hex>".
std::string goldenText(const std::vector<SampleRecord>& records);

}  // namespace restack::records_test

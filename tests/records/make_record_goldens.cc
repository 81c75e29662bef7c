// Prints the golden bytes of tests/records/sample_records.cc: one line per record,
// "<name> <key hex> <value hex>". Regenerate only when a record format gains a version (and then
// keep the lines of the old version next to the new ones):
//   build/tests/records/make_record_goldens > tests/records/golden/records.txt
#include <iostream>

#include "tests/records/sample_records.h"

int main() {
  std::cout << restack::records_test::goldenText(restack::records_test::sampleRecords());
  return 0;
}

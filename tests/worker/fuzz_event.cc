// libFuzzer target for the event reader, the stack-line parsers and the pasted-report reader
// (-DRESTACK_FUZZ=ON):
//   build/tests/worker/fuzz_event -max_len=65536 -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/crash_report/crash_report.h"
#include "formats/stack/stack_line.h"
#include "worker/pipeline/raw_event.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto event = restack::pipeline::parseRawEvent(input, restack::pipeline::EventLimits{});
  if (event) {
    for (const auto& thread : event->threads) (void)restack::stack::parseStack(thread.stack);
  }
  (void)restack::stack::parseStack(input);
  if (auto report = restack::crash_report::parseCrashReport(input)) {
    for (const auto& thread : report->threads) (void)restack::stack::parseStack(thread.stack);
  }
  return 0;
}

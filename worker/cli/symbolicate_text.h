// `restack symbolicate` on pasted crash text: the report read by formats/crash_report becomes a
// raw event (docs/design.md §3), and the restored event (§5) is printed back as the platform's
// own tools print a stack, with what is missing said frame by frame.
#pragma once

#include <string>
#include <string_view>

#include "formats/common/status.h"
#include "formats/crash_report/crash_report.h"

namespace restack::cli {

// The raw event JSON of a pasted report, under `app` and `build`.
std::string rawEventFromReport(const crash_report::CrashReport& report, std::string_view app, std::string_view build);

// The restored text of every thread of `restored_event_json`, headed by the report's format,
// app, build and exception, and followed by the frames not restored and why.
Expected<std::string> formatRestoredReport(const crash_report::CrashReport& report,
                                           std::string_view restored_event_json);

}  // namespace restack::cli

// Crash reports as developers paste them, turned into the threads of a raw event
// (docs/design.md §3) whose stack lines are in the forms of docs/design.md §1.
//
// Formats read, and how each is recognised:
//   Apple .crash text     "Incident Identifier:", "Exception Type:" or "Binary Images:"; a Last
//                         Exception Backtrace may be one "(0x… 0x…)" line, placed by the images' ranges
//   Apple .ips (iOS 15+)  a JSON header line with "bug_type", then the JSON report
//   Android tombstone     "*** *** ***", "backtrace:" or "#00 pc …" frame lines
//   Android ANR dump      thread headers ("main" prio=5 tid=1 Blocked) over Java and
//                         "native: #00 pc …" frames (traces.txt, Play Console)
//   logcat AndroidRuntime lines tagged "AndroidRuntime" around a Java trace
//   printStackTrace()     a Java exception line followed by "at …" frames
//   browser console       V8 ("    at fn (url:l:c)"), SpiderMonkey and JavaScriptCore
//                         ("fn@url:l:c") stacks, with the "TypeError: …" line above them
//   React Native          red-box and Hermes stacks: JS frames whose URL is a bundle
//                         ("index.android.bundle", "main.jsbundle") or "address at …"
//
// Worked example, an Apple .crash frame and its image:
//   "3   DemoApp   0x0000000104a18040 0x104a14000 + 16448"
//   "0x104a14000 - 0x104a1ffff DemoApp arm64  <4c4c44be55553144a18fb1819e548735> /…/DemoApp"
//   -> "DemoApp 0x0000000104a18040 0x104a14000 + 16448 [4c4c44be-5555-3144-a18f-b1819e548735]"
// A frame a device already symbolicated ("DemoApp 0x0000000104a18040 main + 64") is rewritten
// the same way, from the image's load address. A name Binary Images lists at several addresses
// (two reports pasted together) places a frame by the entry loaded where the line says or whose
// range holds its address; a frame none or several hold is left as printed, with a note.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"

namespace restack::crash_report {

enum class ReportFormat {
  kAppleCrash,
  kAppleIps,
  kAndroidTombstone,
  kAndroidLogcat,
  kAndroidAnr,
  kJavaTrace,
  kBrowserConsole,
  kReactNative,
  kRawFrames,  // frames in the SDK form of docs/design.md §1, one per line
};

const char* reportFormatName(ReportFormat format);

struct ReportThread {
  std::string name;
  bool crashed = false;
  std::string stack;  // frames one per line, in forms formats/stack reads
};

struct CrashReport {
  ReportFormat format = ReportFormat::kRawFrames;
  std::string platform;  // ios | android | web | react_native
  std::string kind = "crash";
  std::string exception_type;
  std::string exception_message;
  std::string app;       // when the report names it (Apple "Identifier:", logcat "Process:")
  std::string build_id;  // when the report names it (Apple "Version:")
  std::vector<ReportThread> threads;
  // Things the reader could not use, for the user ("frame 4: image UIKitCore is not in Binary
  // Images").
  std::vector<std::string> notes;
};

// Reports larger than this are refused (kTooLarge) rather than read.
inline constexpr size_t kMaxReportBytes = 64u << 20;

// Reads a pasted report. Errors: kTooLarge past kMaxReportBytes; kMalformedInput when no format
// above is recognised or the report holds no frame (the message lists the formats).
Expected<CrashReport> parseCrashReport(std::string_view text);

}  // namespace restack::crash_report

// Reading pasted crash reports (formats/crash_report/crash_report.h): each format is recognised,
// its exception and threads are read, and its frames come out in forms formats/stack reads.
#include "formats/crash_report/crash_report.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "formats/stack/native_line.h"
#include "tests/support/mutate.h"

namespace restack::crash_report {
namespace {

// Every frame line of every thread must be one formats/stack reads as a frame.
size_t readableFrames(const CrashReport& report) {
  size_t frames = 0;
  for (const ReportThread& thread : report.threads) {
    for (const stack::StackLine& line : stack::parseStack(thread.stack)) {
      if (line.kindName() == "native" || line.kindName() == "java_frame" || line.kindName() == "js_frame") {
        ++frames;
      }
    }
  }
  return frames;
}

const char* kAppleCrash = R"(Incident Identifier: 1E2D3C4B-5A69-4788-9A0B-1C2D3E4F5A6B
Hardware Model:      iPhone14,2
Process:             Shop [1234]
Identifier:          com.example.shop
Version:             7.8.0 (78007)

Exception Type:  EXC_CRASH (SIGABRT)
Exception Codes: 0x0000000000000000, 0x0000000000000000
Triggered by Thread:  0

Application Specific Information:
*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '-[__NSCFNumber length]: unrecognized selector sent to instance 0x8'

Last Exception Backtrace:
0   CoreFoundation                	0x1a1b2c3d4 0x1a1a00000 + 1256404
1   Shop                          	0x0000000104a18040 -[CartViewController total] + 64

Thread 0 name:  Dispatch queue: com.apple.main-thread
Thread 0 Crashed:
0   libsystem_kernel.dylib        	0x00000001e1a2b1b0 __pthread_kill + 8
1   Shop                          	0x0000000104a180c0 0x104a14000 + 16576
2   Unlisted                      	0x0000000200000000 0x1ff000000 + 16777216

Thread 1:
0   libsystem_kernel.dylib        	0x00000001e1a2c000 0x1e1a25000 + 28672

Binary Images:
       0x104a14000 -        0x104a1ffff +Shop arm64  <4c4c44be55553144a18fb1819e548735> /private/var/containers/Bundle/Application/X/Shop.app/Shop
       0x1a1a00000 -        0x1a1cfffff CoreFoundation arm64e  <0a1b2c3d4e5f60718293a4b5c6d7e8f9> /System/Library/Frameworks/CoreFoundation.framework/CoreFoundation
       0x1e1a25000 -        0x1e1a5ffff libsystem_kernel.dylib arm64e  <11111111222233334444555555555555> /usr/lib/system/libsystem_kernel.dylib
)";

TEST(CrashReport, AppleCrashReportFramesGetTheirImagesUuidAndOffset) {
  auto report = parseCrashReport(kAppleCrash);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->format, ReportFormat::kAppleCrash);
  EXPECT_EQ(report->platform, "ios");
  EXPECT_EQ(report->app, "com.example.shop");
  EXPECT_EQ(report->build_id, "7.8.0(78007)");
  EXPECT_EQ(report->exception_type, "NSInvalidArgumentException");
  EXPECT_EQ(report->exception_message, "-[__NSCFNumber length]: unrecognized selector sent to instance 0x8");
  ASSERT_EQ(report->threads.size(), 3u);
  EXPECT_EQ(report->threads[0].name, "Last Exception Backtrace");
  EXPECT_TRUE(report->threads[0].crashed);
  EXPECT_EQ(report->threads[1].name, "Dispatch queue: com.apple.main-thread");
  EXPECT_TRUE(report->threads[1].crashed);
  EXPECT_FALSE(report->threads[2].crashed);
  // A frame the device symbolicated is placed from its image's load address: 0x104a18040 - 0x104a14000.
  auto lines = stack::parseStack(report->threads[0].stack);
  ASSERT_EQ(lines.size(), 2u);
  ASSERT_NE(stack::asNative(lines[1]), nullptr) << lines[1].raw;
  EXPECT_EQ(stack::asNative(lines[1])->address, 0x4040u);
  EXPECT_EQ(stack::asNative(lines[1])->debug_id, "4c4c44be55553144a18fb1819e548735");
  EXPECT_EQ(stack::asNative(lines[1])->module, "Shop");
  auto crashed = stack::parseStack(report->threads[1].stack);
  ASSERT_EQ(crashed.size(), 3u);
  EXPECT_EQ(stack::asNative(crashed[0])->address, 0x61b0u);  // 0x1e1a2b1b0 - 0x1e1a25000
  EXPECT_EQ(stack::asNative(crashed[0])->debug_id, "11111111222233334444555555555555");
  // The symbols the device printed stay with their frames; unsymbolicated frames have none.
  EXPECT_EQ(stack::asNative(crashed[0])->symbol_hint, "__pthread_kill + 8");
  EXPECT_EQ(stack::asNative(lines[1])->symbol_hint, "-[CartViewController total] + 64");
  EXPECT_EQ(stack::asNative(crashed[1])->symbol_hint, "");
  EXPECT_EQ(stack::asNative(lines[0])->symbol_hint, "");
  // An image missing from Binary Images keeps its printed offset, and the report says so.
  EXPECT_EQ(stack::asNative(crashed[2])->address, 16777216u);
  EXPECT_EQ(stack::asNative(crashed[2])->debug_id, "");
  EXPECT_EQ(readableFrames(*report), 6u);
}

// "0x… MyApp + 33764" names the image again before its offset: no symbol of the device's, and an
// image missing from Binary Images is still placed, from the offset.
TEST(CrashReport, AppleImagePlusOffsetFramesArePlaced) {
  auto report = parseCrashReport(
      "Exception Type:  EXC_CRASH (SIGABRT)\n\nThread 0 Crashed:\n"
      "0   MyApp    0x0000000104a1c3e4 MyApp + 33764\n1   Other    0x0000000105000010 Other + 16\n\n"
      "Binary Images:\n       0x104a14000 -        0x104a1ffff MyApp arm64  <4c4c44be55553144a18fb1819e548735> "
      "/x/MyApp\n");
  ASSERT_TRUE(report) << report.error().message();
  auto lines = stack::parseStack(report->threads.at(0).stack);
  ASSERT_EQ(lines.size(), 2u);
  ASSERT_NE(stack::asNative(lines[0]), nullptr) << lines[0].raw;
  EXPECT_EQ(stack::asNative(lines[0])->address, 33764u);
  EXPECT_EQ(stack::asNative(lines[0])->debug_id, "4c4c44be55553144a18fb1819e548735");
  EXPECT_EQ(stack::asNative(lines[0])->symbol_hint, "");
  ASSERT_NE(stack::asNative(lines[1]), nullptr) << lines[1].raw;
  EXPECT_EQ(stack::asNative(lines[1])->address, 16u);
  EXPECT_EQ(stack::asNative(lines[1])->module, "Other");
  EXPECT_TRUE(report->notes.empty());
}

// Binary Images may list one name at two addresses (two processes' reports pasted together, or two
// images of one name): a frame is placed by the entry loaded where its line says, or whose range
// holds its address, and never by one picked among them. An entry listed again is one entry.
TEST(CrashReport, AnImageListedTwiceInBinaryImagesPlacesEachFrameByItsAddress) {
  auto report = parseCrashReport(
      "Exception Type:  EXC_CRASH (SIGABRT)\n\nThread 0 Crashed:\n"
      "0   Shop    0x0000000104a18040 -[Cart total] + 64\n"
      "1   Shop    0x0000000105a18040 -[Cart total] + 64\n"
      "2   Shop    0x0000000106000000 -[Cart total] + 64\n"
      "3   Shop    0x0000000105a180c0 0x105a14000 + 16576\n"
      "4   Shop    0x0000000104a1c3e4 Shop + 33764\n\n"
      "Binary Images:\n"
      "       0x104a14000 -        0x104a1ffff +Shop arm64  <4c4c44be55553144a18fb1819e548735> /x/Shop.app/Shop\n"
      "       0x105a14000 -        0x105a1ffff +Shop arm64  <0123456789abcdef0123456789abcdef> /y/Shop.app/Shop\n"
      "       0x104a14000 -        0x104a1ffff +Shop arm64  <4c4c44be55553144a18fb1819e548735> /x/Shop.app/Shop\n");
  ASSERT_TRUE(report) << report.error().message();
  auto lines = stack::parseStack(report->threads.at(0).stack);
  ASSERT_EQ(lines.size(), 5u);
  for (const auto& line : lines) ASSERT_NE(stack::asNative(line), nullptr) << line.raw;
  // By the range that holds the address.
  EXPECT_EQ(stack::asNative(lines[0])->address, 0x4040u);
  EXPECT_EQ(stack::asNative(lines[0])->debug_id, "4c4c44be55553144a18fb1819e548735");
  EXPECT_EQ(stack::asNative(lines[1])->address, 0x4040u);
  EXPECT_EQ(stack::asNative(lines[1])->debug_id, "0123456789abcdef0123456789abcdef");
  // In neither range: left as the device printed it, and the report says why.
  EXPECT_TRUE(stack::asNative(lines[2])->image_offset_unknown);
  EXPECT_EQ(stack::asNative(lines[2])->symbol_hint, "-[Cart total] + 64");
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_NE(report->notes[0].find("0x0000000106000000"), std::string::npos) << report->notes[0];
  EXPECT_NE(report->notes[0].find("listed more than once in Binary Images"), std::string::npos) << report->notes[0];
  // By the load address the line prints, or the image's start its offset gives.
  EXPECT_EQ(stack::asNative(lines[3])->address, 16576u);
  EXPECT_EQ(stack::asNative(lines[3])->debug_id, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(stack::asNative(lines[4])->address, 33764u);
  EXPECT_EQ(stack::asNative(lines[4])->debug_id, "4c4c44be55553144a18fb1819e548735");
}

// A Last Exception Backtrace the device did not symbolicate is one line of addresses; each is
// placed in the image whose Binary Images range holds it, "???" when none does.
TEST(CrashReport, AppleAddressListBacktraceIsPlacedByImageRanges) {
  auto report = parseCrashReport(
      "Exception Type:  EXC_CRASH (SIGABRT)\n\nLast Exception Backtrace:\n(0x1a1b2c3d4 0x104a1c3e4 0x200000000)\n\n"
      "Binary Images:\n       0x104a14000 -        0x104a1ffff MyApp arm64  <4c4c44be55553144a18fb1819e548735> "
      "/x/MyApp\n"
      "       0x1a1a00000 -        0x1a1cfffff CoreFoundation arm64e  <0a1b2c3d4e5f60718293a4b5c6d7e8f9> /S/CF\n");
  ASSERT_TRUE(report) << report.error().message();
  ASSERT_EQ(report->threads.size(), 1u);
  EXPECT_EQ(report->threads[0].name, "Last Exception Backtrace");
  auto lines = stack::parseStack(report->threads[0].stack);
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& line : lines) ASSERT_NE(stack::asNative(line), nullptr) << line.raw;
  EXPECT_EQ(stack::asNative(lines[0])->module, "CoreFoundation");
  EXPECT_EQ(stack::asNative(lines[0])->address, 0x1a1b2c3d4u - 0x1a1a00000u);
  EXPECT_EQ(stack::asNative(lines[0])->debug_id, "0a1b2c3d4e5f60718293a4b5c6d7e8f9");
  EXPECT_EQ(stack::asNative(lines[1])->module, "MyApp");
  EXPECT_EQ(stack::asNative(lines[1])->address, 33764u);
  EXPECT_EQ(stack::asNative(lines[2])->module, "???");
}

TEST(CrashReport, AppleSignalCrashNamesTheSignalAndSubtype) {
  auto report = parseCrashReport(
      "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\nException Subtype: KERN_INVALID_ADDRESS at 0x8\n\n"
      "Thread 0 Crashed:\n0   App   0x0000000100004000 0x100000000 + 16384\n");
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->exception_type, "EXC_BAD_ACCESS");
  EXPECT_EQ(report->exception_message, "SIGSEGV: KERN_INVALID_ADDRESS at 0x8");
}

TEST(CrashReport, AppleIpsReportFramesComeFromUsedImages) {
  const std::string ips =
      R"({"app_name":"Shop","app_version":"7.8.0","build_version":"78007","bug_type":"309","bundleID":"com.example.shop"})"
      "\n"
      R"({"exception":{"type":"EXC_BAD_ACCESS","signal":"SIGSEGV","subtype":"KERN_INVALID_ADDRESS at 0x8"},
          "threads":[{"id":1},{"triggered":true,"queue":"com.apple.main-thread",
                      "frames":[{"imageOffset":16448,"imageIndex":0},
                                {"imageOffset":100,"symbol":"dyld4::start","symbolLocation":12,"imageIndex":1}]}],
          "usedImages":[{"base":4372643840,"name":"Shop","uuid":"4C4C44BE-5555-3144-A18F-B1819E548735"},
                        {"base":4294967296,"name":"dyld","uuid":"0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"}]})";
  auto report = parseCrashReport(ips);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->format, ReportFormat::kAppleIps);
  EXPECT_EQ(report->app, "com.example.shop");
  EXPECT_EQ(report->build_id, "7.8.0(78007)");
  EXPECT_EQ(report->exception_message, "SIGSEGV: KERN_INVALID_ADDRESS at 0x8");
  ASSERT_EQ(report->threads.size(), 2u);
  EXPECT_FALSE(report->threads[0].crashed);
  EXPECT_TRUE(report->threads[1].crashed);
  EXPECT_EQ(report->threads[1].name, "com.apple.main-thread");
  auto lines = stack::parseStack(report->threads[1].stack);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(stack::asNative(lines[0])->address, 16448u);
  EXPECT_EQ(stack::asNative(lines[0])->debug_id, "4c4c44be55553144a18fb1819e548735");
  EXPECT_EQ(stack::asNative(lines[1])->module, "dyld");
  // The device's own symbol of a frame stays with it (shown when Restack cannot restore it).
  EXPECT_EQ(stack::asNative(lines[0])->symbol_hint, "");
  EXPECT_EQ(stack::asNative(lines[1])->symbol_hint, "dyld4::start + 12");
  EXPECT_EQ(stack::asNative(lines[1])->address, 100u);
}

TEST(CrashReport, AnIpsReportWithABrokenBodySaysSo) {
  auto report = parseCrashReport("{\"bug_type\":\"309\"}\n{\"threads\": [");
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message().find(".ips"), std::string::npos) << report.error().message();
}

TEST(CrashReport, TombstoneSignalAbortMessageAndThreads) {
  auto report = parseCrashReport(R"(*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
ABI: 'arm64'
pid: 4321, tid: 4350, name: RenderThread  >>> com.example.demo <<<
signal 6 (SIGABRT), code -1 (SI_QUEUE), fault addr --------
Abort message: 'invalid pixel format 7'
backtrace:
      #00 pc 000000000004a6c8  /apex/com.android.runtime/lib64/bionic/libc.so (abort+164) (BuildId: 1f2e3d4c)
      #01 pc 000000000000457c  /data/app/~~x==/lib/arm64/libdemo.so (BuildId: ce661c5b08d91e24921ee768d6bd6490f7166b42)

--- --- --- --- --- --- --- --- --- --- --- --- --- --- --- ---
pid: 4321, tid: 4321, name: com.example.demo  >>> com.example.demo <<<
backtrace:
      #00 pc 00000000000a1b2c  /apex/com.android.runtime/lib64/bionic/libc.so (__epoll_pwait+8) (BuildId: 1f2e3d4c)
)");
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->format, ReportFormat::kAndroidTombstone);
  EXPECT_EQ(report->platform, "android");
  EXPECT_EQ(report->app, "com.example.demo");
  EXPECT_EQ(report->exception_type, "SIGABRT");
  EXPECT_EQ(report->exception_message, "invalid pixel format 7");
  ASSERT_EQ(report->threads.size(), 2u);
  EXPECT_EQ(report->threads[0].name, "RenderThread");
  EXPECT_TRUE(report->threads[0].crashed);
  EXPECT_FALSE(report->threads[1].crashed);
  auto lines = stack::parseStack(report->threads[0].stack);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(stack::asNative(lines[1])->debug_id, "ce661c5b08d91e24921ee768d6bd6490f7166b42");
}

TEST(CrashReport, TombstoneInLogcatIsReadThroughItsPrefixes) {
  auto report = parseCrashReport(
      "11-23 10:00:00.100  4350  4350 F DEBUG   : signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0\n"
      "11-23 10:00:00.100  4350  4350 I ActivityManager: unrelated\n"
      "11-23 10:00:00.101  4350  4350 F DEBUG   :       #00 pc 000000000000457c  /data/app/lib/arm64/libdemo.so "
      "(BuildId: ce661c5b08d91e24921ee768d6bd6490f7166b42)\n");
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->format, ReportFormat::kAndroidTombstone);
  EXPECT_EQ(report->exception_type, "SIGSEGV");
  EXPECT_EQ(report->exception_message, "SEGV_MAPERR, fault addr 0x0");
  EXPECT_EQ(readableFrames(*report), 1u);
}

TEST(CrashReport, LogcatAndroidRuntimeTraceKeepsOnlyItsOwnLines) {
  auto report = parseCrashReport(
      "11-23 10:00:00.100  4321  4321 I ActivityManager: Start proc\n"
      "11-23 10:00:00.123  4321  4321 E AndroidRuntime: FATAL EXCEPTION: main\n"
      "11-23 10:00:00.123  4321  4321 E AndroidRuntime: Process: com.example.demo, PID: 4321\n"
      "11-23 10:00:00.123  4321  4321 E AndroidRuntime: java.lang.IllegalStateException: a.b: boom\n"
      "11-23 10:00:00.123  4321  4321 E AndroidRuntime: \tat a.b.c(SourceFile:1)\n"
      "E/AndroidRuntime( 4321): Caused by: java.lang.NullPointerException\n"
      "E/AndroidRuntime( 4321): \tat a.d.e(SourceFile:2)\n"
      "11-23 10:00:00.124  4321  4321 W System.err: \tat not.this.one(Unknown Source)\n");
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->format, ReportFormat::kAndroidLogcat);
  EXPECT_EQ(report->app, "com.example.demo");
  EXPECT_EQ(report->exception_type, "java.lang.IllegalStateException");
  EXPECT_EQ(report->exception_message, "a.b: boom");
  ASSERT_EQ(report->threads.size(), 1u);
  EXPECT_EQ(report->threads[0].name, "main");
  EXPECT_EQ(readableFrames(*report), 2u);
  EXPECT_EQ(report->threads[0].stack.find("not.this.one"), std::string::npos);
  EXPECT_NE(report->threads[0].stack.find("Caused by: java.lang.NullPointerException"), std::string::npos);
}

TEST(CrashReport, PrintStackTraceTextNamesTheThreadAndException) {
  auto report = parseCrashReport(
      "some log line first\nException in thread \"worker-1\" java.lang.RuntimeException: x\n"
      "\tat a.b.c(SourceFile:1)\n\tat a.b.d(SourceFile:2)\n\t... 3 more\n");
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->format, ReportFormat::kJavaTrace);
  EXPECT_EQ(report->exception_type, "java.lang.RuntimeException");
  EXPECT_EQ(report->threads[0].name, "worker-1");
  EXPECT_EQ(report->threads[0].stack.find("some log line"), std::string::npos);
  EXPECT_EQ(readableFrames(*report), 2u);
}

TEST(CrashReport, BrowserConsoleStacksOfEveryEngine) {
  auto v8 = parseCrashReport(
      "Uncaught TypeError: Cannot read properties of undefined (reading 'x')\n"
      "    at n (https://cdn.example.com/app.js:1:60)\n    at https://cdn.example.com/app.js:1:255\n");
  ASSERT_TRUE(v8) << v8.error().message();
  EXPECT_EQ(v8->format, ReportFormat::kBrowserConsole);
  EXPECT_EQ(v8->platform, "web");
  EXPECT_EQ(v8->exception_type, "TypeError");
  EXPECT_EQ(v8->exception_message, "Cannot read properties of undefined (reading 'x')");
  EXPECT_EQ(readableFrames(*v8), 2u);

  auto firefox = parseCrashReport("n@https://cdn.example.com/app.js:1:60\n@https://cdn.example.com/app.js:1:255\n");
  ASSERT_TRUE(firefox) << firefox.error().message();
  EXPECT_EQ(firefox->platform, "web");
  EXPECT_EQ(readableFrames(*firefox), 2u);
}

// A line of the stack that reads as a frame to a person but to no reader stays in the thread,
// to be printed as it came (marked unparsed), rather than vanishing; text after the stack that
// looks like no frame is left out.
TEST(CrashReport, UnreadFrameLinesOfAConsoleStackStay) {
  auto v8 = parseCrashReport(
      "TypeError: x is not a function\n"
      "    at n (https://cdn.example.com/app.js:1:60)\n"
      "    at <some future V8 frame shape>\n"
      "    at https://cdn.example.com/app.js:1:255\n"
      "\n"
      "Press F12 for details\n");
  ASSERT_TRUE(v8) << v8.error().message();
  ASSERT_EQ(v8->threads.size(), 1u);
  EXPECT_EQ(v8->threads[0].stack,
            "    at n (https://cdn.example.com/app.js:1:60)\n"
            "    at <some future V8 frame shape>\n"
            "    at https://cdn.example.com/app.js:1:255");
  EXPECT_EQ(readableFrames(*v8), 2u);

  // The first frame too: one no reader knew used to vanish with the lines above the stack.
  auto first = parseCrashReport(
      "Error: x\n"
      "    at fn [a future V8 frame shape] https://cdn.example.com/app.js:1:30\n"
      "    at n (https://cdn.example.com/app.js:1:60)\n");
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->exception_message, "x");
  EXPECT_EQ(first->threads.at(0).stack,
            "    at fn [a future V8 frame shape] https://cdn.example.com/app.js:1:30\n"
            "    at n (https://cdn.example.com/app.js:1:60)");
  // A message's further lines are not frames, '@' or "at " in them or not.
  auto message = parseCrashReport(
      "Error: cannot reach user@example.com\n"
      "at least once, retried\n"
      "    at n (https://cdn.example.com/app.js:1:60)\n");
  ASSERT_TRUE(message) << message.error().message();
  EXPECT_EQ(message->threads.at(0).stack, "    at n (https://cdn.example.com/app.js:1:60)");
}

// ANR dumps: ART's traces (native frames prefixed "native: "), and Play Console's form (no prio,
// "#00  pc 0x…" native frames, which must not make it a tombstone). One thread per header, the
// main thread the blocked one; the notes about each thread stay in its stack.
TEST(CrashReport, AnrDumpsGiveOneThreadPerHeader) {
  auto art = parseCrashReport(
      "----- pid 12345 at 2026-11-20 10:00:00.000 -----\n"
      "Cmd line: com.example.shop:sync\n"
      "Subject: Input dispatching timed out (Waiting to send non-key event)\n\n"
      "DALVIK THREADS (2):\n"
      "\"main\" prio=5 tid=1 Blocked\n"
      "  | group=\"main\" sCount=1 ucsCount=0 flags=1 obj=0x72d6f8b8\n"
      "  at com.example.shop.a.b(SourceFile:12)\n"
      "  - waiting to lock <0x0a1b2c3d> (a com.example.shop.c) held by thread 12\n"
      "  at android.os.Looper.loop(Looper.java:288)\n\n"
      "\"Worker-1\" prio=5 tid=12 Native\n"
      "  native: #00 pc 00000000000a33b8  /apex/com.android.runtime/lib64/bionic/libc.so (__epoll_pwait+8)\n"
      "  at com.example.shop.c.d(SourceFile:40)\n"
      "----- end 12345 -----\n");
  ASSERT_TRUE(art) << art.error().message();
  EXPECT_EQ(art->format, ReportFormat::kAndroidAnr);
  EXPECT_EQ(art->kind, "anr");
  EXPECT_EQ(art->app, "com.example.shop");
  EXPECT_EQ(art->exception_message, "Input dispatching timed out (Waiting to send non-key event)");
  ASSERT_EQ(art->threads.size(), 2u);
  EXPECT_EQ(art->threads[0].name, "main");
  EXPECT_TRUE(art->threads[0].crashed);
  EXPECT_EQ(art->threads[1].name, "Worker-1");
  EXPECT_FALSE(art->threads[1].crashed);
  EXPECT_NE(art->threads[0].stack.find("  - waiting to lock <0x0a1b2c3d>"), std::string::npos);
  EXPECT_EQ(art->threads[1].stack.find("----- end"), std::string::npos);
  EXPECT_EQ(readableFrames(*art), 4u);

  auto play = parseCrashReport(
      "\"main\" tid=1 Native\n"
      "  #00  pc 0x00000000000a33b8  /apex/com.android.runtime/lib64/bionic/libc.so (__epoll_pwait+8)\n"
      "  at android.os.MessageQueue.nativePollOnce (Native method)\n"
      "  at android.os.MessageQueue.next (MessageQueue.java:335)\n");
  ASSERT_TRUE(play) << play.error().message();
  EXPECT_EQ(play->format, ReportFormat::kAndroidAnr);
  ASSERT_EQ(play->threads.size(), 1u);
  // Play Console prints Java frames with a space before the location; they are Java frames.
  EXPECT_EQ(readableFrames(*play), 3u) << play->threads[0].stack;
}

TEST(CrashReport, ReactNativeStacksAreTold) {
  auto hermes = parseCrashReport(
      "TypeError: Cannot read property 'token' of null\n\nThis error is located at:\n    in Profile\n\n"
      "    at authHeader (address at index.android.bundle:1:345)\n");
  ASSERT_TRUE(hermes) << hermes.error().message();
  EXPECT_EQ(hermes->format, ReportFormat::kReactNative);
  EXPECT_EQ(hermes->platform, "react_native");
  EXPECT_EQ(hermes->exception_type, "TypeError");

  auto jsc = parseCrashReport("render@main.jsbundle:1:550\n");
  ASSERT_TRUE(jsc) << jsc.error().message();
  EXPECT_EQ(jsc->platform, "react_native");
}

TEST(CrashReport, RawSdkFramesKeepTheirPlatform) {
  auto android =
      parseCrashReport("pc 0x0000000000010d78 libapmDemo.so [arm64-v8a::ba78e30f9664d0150fba525ab5981b19]\n");
  ASSERT_TRUE(android) << android.error().message();
  EXPECT_EQ(android->platform, "android");
  auto ios = parseCrashReport("MDAP  0x00000001079b59d3 0x1079b3000 + 10707 [8c17697f-2e84-39e5-b491-fcf5169106ff]\n");
  ASSERT_TRUE(ios) << ios.error().message();
  EXPECT_EQ(ios->platform, "ios");
}

TEST(CrashReport, TextWithoutAStackIsRefusedWithTheFormatsListed) {
  for (const char* text : {"", "hello world\n", "Exception Type: EXC_CRASH (SIGABRT)\n\nThread 0 Crashed:\n"}) {
    auto report = parseCrashReport(text);
    ASSERT_FALSE(report) << text;
    EXPECT_EQ(report.error().code(), ErrorCode::kMalformedInput);
  }
  EXPECT_NE(parseCrashReport("hello\n").error().message().find("tombstone"), std::string::npos);
}

TEST(CrashReport, OversizedReportsAreRefusedBeforeReading) {
  std::string huge(kMaxReportBytes + 1, 'a');
  auto report = parseCrashReport(huge);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), ErrorCode::kTooLarge);
}

TEST(CrashReport, DeterministicMutationRunNeverCrashes) {
  std::mt19937 random(1123);
  size_t read = 0;
  const std::string seeds[] = {
      kAppleCrash,
      "{\"bug_type\":\"309\"}\n{\"threads\":[{\"frames\":[{\"imageIndex\":0,\"imageOffset\":"
      "1}]}],\"usedImages\":[{\"base\":1,\"name\":\"A\"}]}",
      "backtrace:\n  #00 pc 0000000000001000  /a/libx.so (BuildId: 0102)\n",
      "E AndroidRuntime: java.lang.Error: x\nE AndroidRuntime: \tat a.b(c:1)\n",
      "TypeError: x\n    at f (https://a/b.js:1:2)\n",
      "Cmd line: a.b\n\"main\" prio=5 tid=1 Blocked\n  | group=\"main\"\n  at a.b.c(SourceFile:1)\n"
      "  - locked <0x1> (a a.b)\n  native: #00 pc 0000000000001000  /a/libx.so\n"};
  for (const std::string& seed : seeds) {
    for (int round = 0; round < 400; ++round) {
      const std::string mutated = test_support::mutate(seed, random, 6, 16);
      auto report = parseCrashReport(mutated);
      if (report) {
        ++read;
        EXPECT_GT(readableFrames(*report), 0u);
      }
    }
  }
  EXPECT_GT(read, 500u);  // most mutations still hold a readable frame
}

}  // namespace
}  // namespace restack::crash_report

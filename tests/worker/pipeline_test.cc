// The event pipeline without Kafka: raw event in, restored event + fingerprint record or DLQ
// record out, against a real .so ingested into a real store.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "tests/sourcemap/vlq_encoder.h"
#include "tests/worker/worker_fixtures.h"
#include "worker/pipeline/event_processor.h"
#include "worker/pipeline/kinds/java_kind.h"
#include "worker/pipeline/kinds/js_kind.h"
#include "worker/pipeline/kinds/native_kind.h"
#include "worker/pipeline/output_record.h"
#include "worker/pipeline/stack_kinds.h"

namespace restack::worker_test {
namespace {

using native_test::OracleFrame;
using pipeline::OutputKind;

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("pipeline-test-");
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    StoreOptions options;
    options.path = dir_->path();
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
    const NativeLibrary& library = nativeLibrary();
    ASSERT_FALSE(library.path.empty());
    UploadMeta meta;
    meta.app = "shop";
    meta.build_id = "1.0";
    UploadContent content;
    content.path = library.path;
    auto report = ingestUpload(*store_, meta, content, IngestOptions{});
    ASSERT_TRUE(report) << report.error().message();
    symbolizer_ = std::make_unique<Symbolizer>(*store_, SymbolizerOptions{});
    processor_ = std::make_unique<pipeline::EventProcessor>(*symbolizer_, pipeline::ProcessorOptions{});
  }

  pipeline::ProcessResult process(const std::string& event) {
    auto result = processor_->process("shop:1.0", event);
    EXPECT_TRUE(result) << result.error().message();
    return result ? std::move(*result) : pipeline::ProcessResult{};
  }

  std::optional<TempDir> dir_;
  std::unique_ptr<SymbolStore> store_;
  std::unique_ptr<Symbolizer> symbolizer_;
  std::unique_ptr<pipeline::EventProcessor> processor_;
  simdjson::dom::parser parser_;
};

TEST_F(PipelineTest, RestoresNativeFramesLikeLlvmSymbolizerAndPassesUnknownFieldsThrough) {
  const NativeLibrary& library = nativeLibrary();
  const std::string event = nativeCrashEvent("e1", "shop", "1.0", library);
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  ASSERT_EQ(result.records.size(), 2u);
  const auto& restored = result.records[0];
  EXPECT_EQ(restored.kind, OutputKind::kSymbolicated);
  ASSERT_EQ(result.records[1].kind, OutputKind::kFingerprint);
  EXPECT_EQ(restored.key, result.records[1].key);
  EXPECT_TRUE(restored.key.starts_with("shop:"));

  // Unknown fields pass through byte for byte (2.50 stays 2.50).
  EXPECT_NE(restored.value.find(R"("sdk":{"name":"apm","version":[1,2.50,null]})"), std::string::npos)
      << restored.value;

  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(restored.value).get(root), simdjson::SUCCESS) << restored.value;
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "complete");
  simdjson::dom::array frames = root["threads"].at(0)["frames"];
  ASSERT_GE(frames.size(), 2u);
  simdjson::dom::element first = frames.at(0);
  EXPECT_EQ(std::string_view(first["status"]), "symbolicated");
  EXPECT_EQ(std::string_view(first["function"]), library.expected_crash_function);
  EXPECT_EQ(std::string_view(first["tier"]), "dwarf");
  EXPECT_EQ(std::string_view(first["file"]).ends_with("crash.c"), true);
  // The second raw frame is a return address: looked up at address - 1, inside entry().
  simdjson::dom::element last = frames.at(frames.size() - 1);
  EXPECT_EQ(std::string_view(last["function"]), library.expected_caller_function);
  std::string_view restored_text = root["threads"].at(0)["restored"];
  EXPECT_NE(restored_text.find(library.expected_crash_function + " (in libcrash.so) (crash.c:"), std::string::npos)
      << restored_text;

  simdjson::dom::element record;
  ASSERT_EQ(parser_.parse(result.records[1].value).get(record), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(record["event_id"]), "e1");
  EXPECT_EQ(std::string_view(record["algorithm"]), "v2");
  EXPECT_EQ(restored.key, "shop:" + std::string(std::string_view(record["fingerprint"])));
}

TEST_F(PipelineTest, MissingSymbolsArePendingAndNamed) {
  NativeLibrary other;
  other.build_id = "00112233445566778899aabbccddeeff00112233";
  other.crash_address = 0x1000;
  other.caller_return = 0x2000;
  auto result = process(nativeCrashEvent("e2", "shop", "1.0", other));
  ASSERT_FALSE(result.dead_letter);
  EXPECT_TRUE(result.pending_symbols);
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "pending");
  EXPECT_EQ(std::string_view(root["threads"].at(0)["frames"].at(0)["status"]), "missing_symbols");
  std::string missing = std::string(std::string_view(root["symbolication"]["missing"].at(0)));
  EXPECT_TRUE(other.build_id.starts_with(missing) || missing.starts_with(other.build_id.substr(0, 32))) << missing;
  // The frame says why, with which identifier, and so does the restored text after the raw line.
  simdjson::dom::element frame = root["threads"].at(0)["frames"].at(0);
  EXPECT_EQ(std::string_view(frame["reason"]), "missing_symbols");
  EXPECT_EQ(std::string_view(frame["missing_id_kind"]), "debug_id");
  EXPECT_EQ(std::string_view(frame["missing_id"]), missing);
  const std::string_view text = root["threads"].at(0)["restored"];
  const std::string raw{std::string_view(frame["raw"])};
  EXPECT_NE(text.find(raw + "  (not restored: missing_symbols debug_id " + missing + ")"), std::string::npos) << text;
  EXPECT_EQ(result.frames_by_kind[pipeline::frameTallyIndex(&pipeline::nativeKind(), FrameReason::kMissingSymbols)],
            2u);
}

// A tombstone's frames in code no upload can restore (the runtime's JIT cache, ART's compiled
// Java, the kernel's vDSO, no mapping at all) are not_found and hold no event for symbols; a
// frame not restored keeps the symbol the device printed for it, outside grouping.
TEST_F(PipelineTest, RuntimeCodeFramesDoNotWaitForSymbolsAndDeviceSymbolsAreKept) {
  auto event = [](const std::string& id, const std::string& stack) {
    return R"({"event_id":")" + id + R"(","kind":"crash","platform":"android","app":"shop","build_id":"1.0",)" +
           R"("exception":{"type":"SIGABRT","message":"Abort message: x"},"threads":[{"name":"main","stack":")" +
           stack + R"("}]})";
  };
  const std::string runtime =
      R"(#00 pc 0000000000016b08  [anon:dalvik-jit-code-cache] (offset 0x2000000)\n)"
      R"(#01 pc 00000000000c2d3c  /system/framework/arm64/boot-framework.oat (android.os.Handler.dispatchMessage+204) (BuildId: 7c3a11)\n)"
      R"(#02 pc 0000000000054a70  <unknown>\n)"
      R"(#03 pc 0000000000001f40  /memfd:jit-cache (deleted) (offset 0x2000000)\n)"
      R"(#04 pc 0000000000000a10  [vdso])";
  auto only_runtime = process(event("r1", runtime));
  ASSERT_FALSE(only_runtime.dead_letter) << only_runtime.error;
  EXPECT_FALSE(only_runtime.pending_symbols);
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(only_runtime.records.at(0).value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "partial");
  EXPECT_EQ(root["symbolication"]["missing"].get_array().size(), 0u);
  std::vector<std::string> reasons;
  for (simdjson::dom::element frame : root["threads"].at(0)["frames"].get_array()) {
    EXPECT_EQ(std::string_view(frame["status"]), "not_found");
    reasons.emplace_back(std::string_view(frame["reason"]));
  }
  EXPECT_EQ(reasons, (std::vector<std::string>{"runtime_code", "runtime_code", "address_outside_module", "runtime_code",
                                               "runtime_code"}));
  EXPECT_EQ(std::string_view(root["threads"].at(0)["frames"].at(1)["device_symbol"]),
            "android.os.Handler.dispatchMessage+204");
  EXPECT_TRUE(root["threads"].at(0)["frames"].at(0)["device_symbol"].error());
  EXPECT_TRUE(root["threads"].at(0)["frames"].at(3)["device_symbol"].error());  // "(deleted)" is no symbol

  // A system library's frame is missing its symbols, but no app build uploads them: the event
  // does not wait (system_image, partial), and the device's symbol is kept; grouping does not
  // read it (no frame in the record).
  auto with_libc = process(
      event("r2", R"(#00 pc 000000000004a6c8  /apex/com.android.runtime/lib64/bionic/libc.so (abort+164) (BuildId: )"
                  R"(1f2e3d4c5b6a79881f2e3d4c5b6a7988)\n)" +
                      runtime));
  ASSERT_FALSE(with_libc.dead_letter) << with_libc.error;
  EXPECT_FALSE(with_libc.pending_symbols);
  ASSERT_EQ(parser_.parse(with_libc.records.at(0).value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "partial");
  EXPECT_EQ(root["symbolication"]["missing"].get_array().size(), 0u);
  simdjson::dom::element libc = root["threads"].at(0)["frames"].at(0);
  EXPECT_EQ(std::string_view(libc["status"]), "missing_symbols");
  EXPECT_EQ(std::string_view(libc["reason"]), "system_image");
  EXPECT_EQ(std::string_view(libc["missing_id"]), "1f2e3d4c5b6a79881f2e3d4c5b6a7988");
  EXPECT_EQ(std::string_view(libc["device_symbol"]), "abort+164");
  EXPECT_TRUE(libc["function"].error());
  EXPECT_EQ(root["fingerprint"]["frames"].get_array().size(), 0u);
  EXPECT_TRUE(with_libc.missing_frames.empty());

  // Apple prints "???" for an address in no image (a call through a null pointer).
  auto apple = process(R"({"event_id":"r3","kind":"crash","platform":"ios","app":"shop","build_id":"1.0",)"
                       R"("threads":[{"stack":"0   ???   0x0000000000000000 0x0 + 0"}]})");
  ASSERT_FALSE(apple.dead_letter) << apple.error;
  EXPECT_FALSE(apple.pending_symbols);
  ASSERT_EQ(parser_.parse(apple.records.at(0).value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(root["threads"].at(0)["frames"].at(0)["reason"]), "address_outside_module");
}

// Lines a device symbolicated, sent without the report's binary images, print the runtime address
// and the device's symbol but not where the image was loaded. A frame of an image another line
// places (its load address and build id) is restored as that line's form would be; a system
// image's frame is system_image with the device's symbol kept; an app frame nothing places is
// not_found (no_position): no symbol file could restore it, so the event does not wait.
TEST_F(PipelineTest, DeviceSymbolicatedAppleLinesWithoutALoadAddress) {
  const NativeLibrary& library = nativeLibrary();
  char line[256];
  const uint64_t load = 0x104a14000;
  auto event = [](const std::string& id, const std::string& stack) {
    return R"({"event_id":")" + id + R"(","kind":"crash","platform":"ios","app":"shop","build_id":"1.0",)" +
           R"("exception":{"type":"EXC_CRASH","message":"SIGABRT"},"threads":[{"name":"main","stack":")" + stack +
           R"("}]})";
  };
  // The crashing frame (a pc, looked up as it is), a system library's, then a return address.
  std::snprintf(line, sizeof line, "0   libcrash.so  0x%016llx crash_here + 4\\n",
                static_cast<unsigned long long>(load + library.crash_address));
  std::string stack = line;
  stack += "1   libsystem_kernel.dylib  0x00000001e1f1a1a0 __pthread_kill + 8\\n";
  std::snprintf(line, sizeof line, "2   libcrash.so  0x%016llx 0x%llx + %llu [%s]",
                static_cast<unsigned long long>(load + library.caller_return), static_cast<unsigned long long>(load),
                static_cast<unsigned long long>(library.caller_return), library.build_id.c_str());
  stack += line;
  auto placed = process(event("d1", stack));
  ASSERT_FALSE(placed.dead_letter) << placed.error;
  EXPECT_FALSE(placed.pending_symbols);
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(placed.records.at(0).value).get(root), simdjson::SUCCESS);
  simdjson::dom::array frames = root["threads"].at(0)["frames"];
  ASSERT_EQ(frames.size(), 3u) << placed.records.at(0).value;
  // Placed by the third line's load address: the same answer llvm-symbolizer gives there.
  EXPECT_EQ(std::string_view(frames.at(0)["status"]), "symbolicated");
  EXPECT_EQ(std::string_view(frames.at(0)["function"]), library.expected_crash_function);
  EXPECT_TRUE(frames.at(0)["device_symbol"].error());  // kept only on frames not restored
  EXPECT_EQ(std::string_view(frames.at(1)["status"]), "missing_symbols");
  EXPECT_EQ(std::string_view(frames.at(1)["reason"]), "system_image");
  EXPECT_EQ(std::string_view(frames.at(1)["device_symbol"]), "__pthread_kill + 8");
  EXPECT_EQ(std::string_view(frames.at(1)["missing_id"]), "libsystem_kernel.dylib");
  EXPECT_EQ(std::string_view(frames.at(2)["function"]), library.expected_caller_function);
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "partial");

  // Nothing places the app's frame: not restorable, and nothing to wait for.
  std::snprintf(line, sizeof line, "0   libcrash.so  0x%016llx crash_here + 4",
                static_cast<unsigned long long>(load + library.crash_address));
  auto alone = process(event("d2", line));
  ASSERT_FALSE(alone.dead_letter) << alone.error;
  EXPECT_FALSE(alone.pending_symbols);
  ASSERT_EQ(parser_.parse(alone.records.at(0).value).get(root), simdjson::SUCCESS);
  simdjson::dom::element frame = root["threads"].at(0)["frames"].at(0);
  EXPECT_EQ(std::string_view(frame["status"]), "not_found");
  EXPECT_EQ(std::string_view(frame["reason"]), "no_position");
  EXPECT_EQ(std::string_view(frame["device_symbol"]), "crash_here + 4");
  EXPECT_TRUE(frame["function"].error());
  EXPECT_NE(std::string_view(frame["note"]).find("no line of the event prints where libcrash.so was loaded"),
            std::string_view::npos)
      << alone.records.at(0).value;
}

// An Apple crash-report line of libcrash.so as JSON string text: "<index>   libcrash.so  0x<runtime>
// <rest>", where `rest` is the device's symbol ("crash_here + 4") or where the image was loaded
// ("0x104a14000 + 1234 [<uuid>]").
std::string appleLine(unsigned index, uint64_t runtime, const std::string& rest) {
  char line[256];
  std::snprintf(line, sizeof line, "%-4ulibcrash.so  0x%016llx %s", index, static_cast<unsigned long long>(runtime),
                rest.c_str());
  return line;
}

// "0x<load> + <offset> [<uuid>]", how a line prints where its image was loaded.
std::string loadedAt(uint64_t load, uint64_t offset, const std::string& uuid) {
  char text[160];
  std::snprintf(text, sizeof text, "0x%llx + %llu", static_cast<unsigned long long>(load),
                static_cast<unsigned long long>(offset));
  return uuid.empty() ? std::string(text) : std::string(text) + " [" + uuid + "]";
}

// An iOS event of the given threads: {name, stack (JSON string text, lines joined by "\n")}.
std::string appleEvent(const std::string& id, const std::string& kind,
                       const std::vector<std::pair<std::string, std::string>>& threads) {
  std::string out = R"({"event_id":")" + id + R"(","kind":")" + kind +
                    R"(","platform":"ios","app":"shop","build_id":"1.0","threads":[)";
  for (size_t i = 0; i < threads.size(); ++i) {
    if (i > 0) out += ',';
    out += R"({"name":")" + threads[i].first + R"(","stack":")" + threads[i].second + R"("})";
  }
  return out + "]}";
}

// The restored frames of one raw line are llvm-symbolizer's answer at that address (innermost
// first): function, file and line.
void expectLlvmSymbolizerFrames(simdjson::dom::array frames, size_t first, const std::vector<OracleFrame>& expected,
                                const std::string& context) {
  ASSERT_GE(frames.size(), first + expected.size()) << context;
  for (size_t i = 0; i < expected.size(); ++i) {
    simdjson::dom::element frame = frames.at(first + i);
    EXPECT_EQ(std::string_view(frame["status"]), "symbolicated") << context;
    EXPECT_EQ(std::string_view(frame["function"]), expected[i].function) << context;
    EXPECT_EQ(std::string_view(frame["file"]), expected[i].file) << context;
    EXPECT_EQ(uint64_t(frame["line"]), expected[i].line) << context;
  }
}

// A report's crashed thread often prints its app frames only as the device symbolicated them
// (no load address, no offset) while another thread prints where the app's image was loaded.
// One process loads an image once, so any stack of the event places them, as atos places every
// frame of a report by its Binary Images: another thread's line, another sample of a lag event.
// Lines that print the load address in either form and agree on it (one with the UUID, one
// without) place alike.
TEST_F(PipelineTest, DeviceSymbolicatedAppleLinesArePlacedByAnotherThreadOfTheEvent) {
  const NativeLibrary& library = nativeLibrary();
  const uint64_t load = 0x104a14000;
  // llvm-symbolizer's answers: the crashing pc as it is, a return address one byte back.
  const auto oracle = native_test::symbolizeWithLlvm(library.path, {library.crash_address, library.caller_return - 1});
  ASSERT_EQ(oracle.size(), 2u);
  ASSERT_FALSE(oracle[0].empty());
  ASSERT_FALSE(oracle[1].empty());
  const std::string crashed = appleLine(0, load + library.crash_address, "crash_here + 4") + "\\n" +
                              appleLine(1, load + library.caller_return, "entry + 20");
  const std::string placing =  // another thread, waiting in the app's code
      appleLine(0, load + library.caller_return, loadedAt(load, library.caller_return, library.build_id));
  // The "<image> + <offset>" form prints the load address too: runtime - offset.
  char image_plus[160];
  std::snprintf(image_plus, sizeof image_plus, "libcrash.so + %llu",
                static_cast<unsigned long long>(library.caller_return));
  const std::string agreeing = appleLine(0, load + library.caller_return, image_plus);

  auto result =
      process(appleEvent("t1", "crash", {{"main", crashed}, {"worker", placing}, {"com.apple.uikit", agreeing}}));
  ASSERT_FALSE(result.dead_letter) << result.error;
  EXPECT_FALSE(result.pending_symbols);
  simdjson::dom::element root;
  const std::string& value = result.records.at(0).value;
  ASSERT_EQ(parser_.parse(value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "complete") << value;
  simdjson::dom::array frames = root["threads"].at(0)["frames"];
  ASSERT_EQ(frames.size(), oracle[0].size() + oracle[1].size()) << value;
  expectLlvmSymbolizerFrames(frames, 0, oracle[0], value);
  expectLlvmSymbolizerFrames(frames, oracle[0].size(), oracle[1], value);
  EXPECT_TRUE(frames.at(0)["device_symbol"].error());  // kept only on frames not restored
  const std::string_view text = root["threads"].at(0)["restored"];
  EXPECT_NE(text.find(oracle[0].front().function +
                      " (in libcrash.so) (crash.c:" + std::to_string(oracle[0].front().line) + ")"),
            std::string_view::npos)
      << text;

  // A lag event's samples are stacks of one process too: one sample places another's frame.
  std::string lag = R"({"event_id":"t2","kind":"lag","platform":"ios","app":"shop","build_id":"1.0",)"
                    R"("threads":[{"name":"main","samples":[{"timestamp_ms":1,"stack":")" +
                    appleLine(0, load + library.crash_address, "crash_here + 4") + R"("},{"timestamp_ms":2,"stack":")" +
                    placing + R"("}]}]})";
  auto sampled = process(lag);
  ASSERT_FALSE(sampled.dead_letter) << sampled.error;
  ASSERT_EQ(parser_.parse(sampled.records.at(0).value).get(root), simdjson::SUCCESS);
  expectLlvmSymbolizerFrames(root["threads"].at(0)["samples"].at(0)["frames"], 0, oracle[0],
                             sampled.records.at(0).value);
}

// Lines of one event that disagree on where an image was loaded (two processes' threads pasted
// into one event, or a wrong line) place none of its frames that print no load address: which
// load address holds such a frame is not known, and picking one would restore it to another
// function. The frame is not_found (no_position) with the device's symbol and a note naming both
// addresses; the lines that print their own load address are still restored by it.
TEST_F(PipelineTest, AppleLinesThatDisagreeOnALoadAddressPlaceNoOtherLine) {
  const NativeLibrary& library = nativeLibrary();
  const uint64_t load = 0x104a14000, other_load = 0x1050f0000;
  const std::string crashed = appleLine(0, load + library.crash_address, "crash_here + 4");
  const std::string first =
      appleLine(0, load + library.caller_return, loadedAt(load, library.caller_return, library.build_id));
  const std::string second =
      appleLine(0, other_load + library.caller_return, loadedAt(other_load, library.caller_return, library.build_id));
  auto result = process(appleEvent("c1", "crash", {{"main", crashed}, {"a", first}, {"b", second}}));
  ASSERT_FALSE(result.dead_letter) << result.error;
  EXPECT_FALSE(result.pending_symbols);
  simdjson::dom::element root;
  const std::string& value = result.records.at(0).value;
  ASSERT_EQ(parser_.parse(value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "partial") << value;
  simdjson::dom::element frame = root["threads"].at(0)["frames"].at(0);
  EXPECT_EQ(std::string_view(frame["status"]), "not_found") << value;
  EXPECT_EQ(std::string_view(frame["reason"]), "no_position");
  EXPECT_EQ(std::string_view(frame["device_symbol"]), "crash_here + 4");
  EXPECT_TRUE(frame["function"].error());
  EXPECT_NE(std::string_view(frame["note"]).find("two load addresses for libcrash.so, 0x104a14000 and 0x1050f0000"),
            std::string_view::npos)
      << value;
  // Each line that prints a load address is restored by its own.
  for (size_t thread = 1; thread <= 2; ++thread) {
    simdjson::dom::element own = root["threads"].at(thread)["frames"].at(0);
    EXPECT_EQ(std::string_view(own["status"]), "symbolicated") << value;
    EXPECT_EQ(std::string_view(own["function"]), library.expected_caller_function) << value;
  }

  // One load address, but two UUIDs for the image at it: not one image either.
  const std::string other_uuid =
      appleLine(0, load + library.caller_return, loadedAt(load, library.caller_return, std::string(40, '7')));
  auto uuids = process(appleEvent("c2", "crash", {{"main", crashed}, {"a", first}, {"b", other_uuid}}));
  ASSERT_FALSE(uuids.dead_letter) << uuids.error;
  ASSERT_EQ(parser_.parse(uuids.records.at(0).value).get(root), simdjson::SUCCESS);
  frame = root["threads"].at(0)["frames"].at(0);
  EXPECT_EQ(std::string_view(frame["reason"]), "no_position") << uuids.records.at(0).value;
  EXPECT_NE(std::string_view(frame["note"]).find("two UUIDs for libcrash.so at 0x104a14000"), std::string_view::npos)
      << uuids.records.at(0).value;
}

// A tombstone of a library the runtime mapped straight out of the APK, printed without a build id
// (Android before 9): the image is found by the APK entry's name in the event's build.
TEST_F(PipelineTest, ALibraryMappedFromTheApkIsFoundByItsEntryName) {
  const NativeLibrary& library = nativeLibrary();
  char address[32];
  std::snprintf(address, sizeof address, "%016llx", static_cast<unsigned long long>(library.crash_address));
  const std::string line =
      std::string("#00 pc ") + address + "  /data/app/~~Xa1==/com.shop-Yb2==/base.apk!libcrash.so (offset 0x4000)";
  auto result = process(R"({"event_id":"apk1","kind":"crash","platform":"android","app":"shop","build_id":"1.0",)"
                        R"("threads":[{"name":"main","crashed":true,"stack":")" +
                        line + R"("}]})");
  ASSERT_FALSE(result.dead_letter) << result.error;
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records.at(0).value).get(root), simdjson::SUCCESS);
  simdjson::dom::element frame = root["threads"].at(0)["frames"].at(0);
  EXPECT_EQ(std::string_view(frame["status"]), "symbolicated") << frame;
  EXPECT_EQ(std::string_view(frame["function"]), library.expected_crash_function);
}

// A real crash through the app's library and the operating system's: the app's frames restore,
// the system images' (Android paths, an iOS image named bare) are system_image and hold nothing,
// while a library the app ships under a system image's name (libc++_shared.so in the APK) is the
// app's and still waits. With pending.await_system_symbols the system images wait too.
TEST_F(PipelineTest, SystemImageFramesHoldTheEventOnlyWhenConfiguredTo) {
  const NativeLibrary& library = nativeLibrary();
  const std::string app_frames = "pc " + hex(library.crash_address) + " libcrash.so [arm64-v8a::" + library.build_id +
                                 "]\\npc " + hex(library.caller_return) +
                                 " libcrash.so [arm64-v8a::" + library.build_id + "]";
  const std::string system_frames =
      R"(\n#02 pc 00000000000c5a10  /system/lib64/libhwui.so (BuildId: 9a8b7c6d5e4f30211a2b3c4d5e6f7081)\n)"
      R"(#03 pc 000000000004a6c8  /apex/com.android.runtime/lib64/bionic/libc.so (__start_thread+64) (BuildId: )"
      R"(1f2e3d4c5b6a79881f2e3d4c5b6a7988)\n)"
      R"(#04 pc 00000000000a1b2c  /data/app/~~Xa1==/com.shop-Yb2==/lib/arm64/libc++_shared.so (BuildId: )"
      R"(44556677889900aabbccddeeff001122))";
  auto event = [&](const std::string& id) {
    return R"({"event_id":")" + id + R"(","kind":"crash","platform":"android","app":"shop","build_id":"1.0",)" +
           R"("exception":{"type":"SIGSEGV","message":"null pointer"},"threads":[{"name":"main","crashed":true,)" +
           R"("stack":")" + app_frames + system_frames + R"("}]})";
  };
  const std::string ios_event =
      R"({"event_id":"i1","kind":"crash","platform":"ios","app":"shop","build_id":"1.0","threads":[{"stack":")"
      R"(0   UIKitCore   0x000000018c4e6c30 0x18c4b0000 + 224304"}]})";

  struct Case {
    bool await_system_symbols;
    std::vector<std::string> reasons;  // of frames #02, #03, #04
    size_t missing;
    size_t demand;
    const char* status;
    const char* ios_reason;
  };
  for (const Case& expected :
       {Case{false, {"system_image", "system_image", "missing_symbols"}, 1, 1, "pending", "system_image"},
        Case{true, {"missing_symbols", "missing_symbols", "missing_symbols"}, 3, 3, "pending", "missing_symbols"}}) {
    SCOPED_TRACE(expected.await_system_symbols ? "await_system_symbols" : "default");
    SymbolizerOptions options;
    options.await_system_symbols = expected.await_system_symbols;
    Symbolizer symbolizer(*store_, options);
    pipeline::EventProcessor processor(symbolizer, pipeline::ProcessorOptions{});
    auto result = processor.process("shop:1.0", event("s1"));
    ASSERT_TRUE(result) << result.error().message();
    ASSERT_FALSE(result->dead_letter) << result->error;
    simdjson::dom::element root;
    ASSERT_EQ(parser_.parse(result->records.at(0).value).get(root), simdjson::SUCCESS);
    simdjson::dom::array frames = root["threads"].at(0)["frames"].get_array();
    // The app's two frames are restored as llvm-symbolizer names them (inline frames may add more).
    EXPECT_EQ(std::string_view(frames.at(0)["function"]), library.expected_crash_function);
    std::vector<std::string> reasons;
    for (simdjson::dom::element frame : frames) {
      if (std::string_view(frame["status"]) == "symbolicated") continue;
      EXPECT_EQ(std::string_view(frame["status"]), "missing_symbols");
      reasons.emplace_back(std::string_view(frame["reason"]));
    }
    EXPECT_EQ(reasons, expected.reasons);
    EXPECT_EQ(std::string_view(root["symbolication"]["status"]), expected.status);
    EXPECT_TRUE(result->pending_symbols);
    EXPECT_EQ(root["symbolication"]["missing"].get_array().size(), expected.missing);
    EXPECT_EQ(result->missing_frames.size(), expected.demand);

    // Without the app's own library missing, only the system images are left: by default the
    // event is partial and waits for nothing, and its fingerprint cannot change any more.
    std::string without_app_library = event("s2");
    without_app_library.erase(
        without_app_library.find(R"(\n#04)"),
        std::string_view(R"(\n#04 pc 00000000000a1b2c  /data/app/~~Xa1==/com.shop-Yb2==/)"
                         R"(lib/arm64/libc++_shared.so (BuildId: 44556677889900aabbccddeeff001122))")
            .size());
    auto system_only = processor.process("shop:1.0", without_app_library);
    ASSERT_TRUE(system_only) << system_only.error().message();
    ASSERT_EQ(parser_.parse(system_only->records.at(0).value).get(root), simdjson::SUCCESS);
    EXPECT_EQ(system_only->pending_symbols, expected.await_system_symbols);
    EXPECT_EQ(std::string_view(root["symbolication"]["status"]), expected.await_system_symbols ? "pending" : "partial");
    EXPECT_EQ(std::string_view(root["fingerprint"]["quality"]), expected.await_system_symbols ? "partial" : "complete");

    auto ios = processor.process("shop:1.0", ios_event);
    ASSERT_TRUE(ios) << ios.error().message();
    ASSERT_EQ(parser_.parse(ios->records.at(0).value).get(root), simdjson::SUCCESS);
    EXPECT_EQ(std::string_view(root["threads"].at(0)["frames"].at(0)["reason"]), expected.ios_reason);
    EXPECT_EQ(ios->pending_symbols, expected.await_system_symbols);
  }
}

// An ANR dump's notes about the thread (ART's header and properties, the monitors it holds or
// waits for) are no frames: they stay in the restored text, in place, and count nowhere.
TEST_F(PipelineTest, ThreadDumpNotesStayInTheTextAndAreNoFrames) {
  const std::string stack =
      R"(\"main\" prio=5 tid=1 Blocked\n  | group=\"main\" sCount=1 ucsCount=0 flags=1\n)"
      R"(  at java.lang.Object.wait(Native method)\n  - waiting on <0x0c2d3e4f> (a java.lang.Object)\n)"
      R"(  at android.os.Handler.dispatchMessage(Handler.java:9))";
  auto result = process(R"({"event_id":"t1","kind":"anr","platform":"android","app":"shop","build_id":"1.0",)"
                        R"("threads":[{"name":"main","stack":")" +
                        stack + R"("}]})");
  ASSERT_FALSE(result.dead_letter) << result.error;
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records.at(0).value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(root["symbolication"]["frames_total"]), 2u);
  for (simdjson::dom::element frame : root["threads"].at(0)["frames"].get_array()) {
    EXPECT_TRUE(std::string_view(frame["raw"]).starts_with("  at ")) << std::string_view(frame["raw"]);
  }
  const std::string_view text = root["threads"].at(0)["restored"];
  EXPECT_TRUE(text.starts_with("\"main\" prio=5 tid=1 Blocked\n  | group=")) << text;
  EXPECT_NE(text.find(")\n  - waiting on <0x0c2d3e4f> (a java.lang.Object)\n  at android.os.Handler"),
            std::string::npos)
      << text;
}

TEST_F(PipelineTest, UnrecognisedLinesAreUnparsedAndLagSamplesAreRestored) {
  const NativeLibrary& library = nativeLibrary();
  char line[128];
  std::snprintf(line, sizeof line, "pc 0x%016llx libcrash.so [arm64-v8a::%s]",
                static_cast<unsigned long long>(library.crash_address), library.build_id.c_str());
  const std::string event = std::string(R"({"event_id":"lag1","kind":"lag","platform":"android","app":"shop",)") +
                            R"("build_id":"1.0","threads":[{"name":"main","samples":[)" +
                            R"({"timestamp_ms":1,"stack":")" + line + R"(\nThread 0 Crashed:"},)" +
                            R"({"timestamp_ms":2,"stack":")" + line + R"("}]}]})";
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS) << result.records[0].value;
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "partial");
  simdjson::dom::array samples = root["threads"].at(0)["samples"];
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(int64_t(samples.at(0)["timestamp_ms"]), 1);
  EXPECT_EQ(std::string_view(samples.at(0)["frames"].at(0)["function"]), library.expected_crash_function);
  EXPECT_EQ(std::string_view(samples.at(0)["frames"].at(1)["status"]), "unparsed");
  EXPECT_EQ(std::string_view(samples.at(0)["frames"].at(1)["reason"]), "unparsed");
  EXPECT_EQ(std::string_view(samples.at(1)["frames"].at(0)["status"]), "symbolicated");
  // A fully restored frame has no reason; a line no kind reads stays as printed in the text.
  EXPECT_EQ(samples.at(1)["frames"].at(0)["reason"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_TRUE(std::string_view(samples.at(0)["restored"]).ends_with("\nThread 0 Crashed:"))
      << std::string_view(samples.at(0)["restored"]);
}

// Java frames restored with something missing carry the resolver's reason: an overload the
// mapping cannot choose lists its candidates, a method the mapping lacks keeps its name.
TEST_F(PipelineTest, PartlyRestoredJavaFramesSayWhyAndListTheCandidates) {
  UploadMeta meta;
  meta.kind = SymbolKind::kProguard;
  meta.app = "shop";
  meta.build_id = "7";
  UploadContent content;
  content.bytes = "org.app.Gamma -> g:\n    void x(int) -> b\n    void y(long) -> b\n    3:3:void run():30 -> a\n";
  content.display_name = "mapping.txt";
  auto report = ingestUpload(*store_, meta, content, IngestOptions{});
  ASSERT_TRUE(report) << report.error().message();
  const std::string event =
      R"({"event_id":"j7","platform":"android","app":"shop","build_id":"7",)"
      R"json("threads":[{"name":"main","stack":"java.lang.Error\n\tat g.b(SourceFile:7)\n\tat g.q(SourceFile:3)\n\tat g.a(SourceFile:3)"}]})json";
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS) << result.records[0].value;
  simdjson::dom::array frames = root["threads"].at(0)["frames"];
  ASSERT_EQ(frames.size(), 3u) << result.records[0].value;
  EXPECT_EQ(std::string_view(frames.at(0)["status"]), "symbolicated");
  EXPECT_EQ(std::string_view(frames.at(0)["reason"]), "ambiguous");
  simdjson::dom::array candidates = frames.at(0)["candidates"];
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(std::string_view(candidates.at(0)), "org.app.Gamma.x");
  EXPECT_EQ(std::string_view(candidates.at(1)), "org.app.Gamma.y");
  EXPECT_EQ(std::string_view(frames.at(1)["reason"]), "method_not_mapped");
  EXPECT_EQ(std::string_view(frames.at(1)["function"]), "org.app.Gamma.q");
  EXPECT_EQ(frames.at(2)["reason"].error(), simdjson::NO_SUCH_FIELD);
  // Restored frames read as R8 retrace prints them: no reason in the text.
  EXPECT_EQ(std::string_view(root["threads"].at(0)["restored"]),
            "java.lang.Error\n\tat org.app.Gamma.x(Gamma.java:7)\n\t<OR> at org.app.Gamma.y(Gamma.java:7)\n"
            "\tat org.app.Gamma.q(Gamma.java:3)\n\tat org.app.Gamma.run(Gamma.java:30)");
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "complete");
  EXPECT_EQ(uint64_t(root["symbolication"]["frames_symbolicated"]), 3u);
  EXPECT_EQ(result.frames_by_kind[pipeline::frameTallyIndex(&pipeline::javaKind(), FrameReason::kAmbiguous)], 1u);
  EXPECT_EQ(result.frames_by_kind[pipeline::frameTallyIndex(&pipeline::javaKind(), FrameReason::kMethodNotMapped)], 1u);
  EXPECT_EQ(result.frames_by_kind[pipeline::frameTallyIndex(&pipeline::javaKind(), FrameReason::kNone)], 1u);
}

// Frames past limits.max_frames_per_thread stay raw with reason frame_limit; the frames before
// them say why they were not restored (no source map for the bundle), in the text too.
TEST_F(PipelineTest, FramesPastTheLimitAndWithoutAMapSayWhy) {
  std::string stack;
  for (int i = 0; i < 520; ++i) {
    stack += std::string(i ? "\\n" : "") + "    at f (https://cdn.shop/app.min.js:1:" + std::to_string(i + 1) + ")";
  }
  const std::string event = R"({"event_id":"js1","kind":"error","platform":"web","app":"shop","build_id":"1.0",)"
                            R"("threads":[{"name":"main","crashed":true,"stack":")" +
                            stack + R"("}]})";
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS);
  simdjson::dom::array frames = root["threads"].at(0)["frames"];
  ASSERT_EQ(frames.size(), 520u);
  EXPECT_EQ(std::string_view(frames.at(0)["reason"]), "missing_symbols");
  EXPECT_EQ(std::string_view(frames.at(0)["missing_id_kind"]), "bundle");
  EXPECT_EQ(std::string_view(frames.at(0)["missing_id"]), "app.min.js");
  EXPECT_EQ(std::string_view(frames.at(511)["reason"]), "missing_symbols");
  EXPECT_EQ(std::string_view(frames.at(512)["status"]), "unparsed");
  EXPECT_EQ(std::string_view(frames.at(512)["reason"]), "frame_limit");
  const std::string_view text = root["threads"].at(0)["restored"];
  EXPECT_TRUE(
      text.starts_with("    at f (https://cdn.shop/app.min.js:1:1)  (not restored: missing_symbols bundle "
                       "app.min.js)\n"))
      << text.substr(0, 200);
  EXPECT_TRUE(text.ends_with("\n    at f (https://cdn.shop/app.min.js:1:520)")) << text.substr(text.size() - 200);
  EXPECT_EQ(result.frames_by_kind[pipeline::frameTallyIndex(&pipeline::jsKind(), FrameReason::kMissingSymbols)], 512u);
  EXPECT_EQ(result.frames_by_kind[pipeline::frameTallyIndex(nullptr, FrameReason::kFrameLimit)], 8u);
}

// `fn@url:line:column` frames print their columns at the call's divot when JavaScriptCore printed
// them: always in React Native (Hermes prints V8's form), on the web when the stack holds
// JavaScriptCore's own frames (Safari), never when it holds Firefox's.
TEST_F(PipelineTest, JavaScriptCoreStacksRestoreToTheDivotFirefoxStacksToTheCallStart) {
  // Generated "a(x);new Error(m)": `a` at column 0 renamed from "fail" at 3:4, `Error` at column
  // 9 unnamed at 9:12. Printed `a(` is column 2, `Error(` column 15.
  const std::string mappings = sourcemap::test::encodeMappings({{{0, 0, 2, 4, 0}, {9, 0, 8, 12, -1}}});
  const std::string map = R"({"version":3,"sources":["app.js"],"names":["fail"],"mappings":")" + mappings + "\"}";
  for (const std::string& build : {"1.0", ""}) {  // React Native maps are keyed by build, web maps not
    UploadMeta meta;
    meta.kind = SymbolKind::kSourcemap;
    meta.app = "shop";
    meta.build_id = build;
    meta.name = "app.js";
    UploadContent content;
    content.bytes = map;
    auto report = ingestUpload(*store_, meta, content, IngestOptions{});
    ASSERT_TRUE(report) << report.error().message();
  }
  auto columns = [&](const std::string& platform, const std::string& stack) {
    const std::string event = R"({"event_id":"c","kind":"error","platform":")" + platform +
                              R"(","app":"shop","build_id":"1.0","threads":[{"stack":")" + stack + R"("}]})";
    auto result = process(event);
    std::vector<uint64_t> out;
    simdjson::dom::element root;
    EXPECT_EQ(parser_.parse(result.records.at(0).value).get(root), simdjson::SUCCESS);
    for (simdjson::dom::element frame : root["threads"].at(0)["frames"].get_array()) {
      uint64_t column = 0;
      if (!frame["column"].get_uint64().get(column)) out.push_back(column);
    }
    return out;
  };
  const std::string frames = R"(fail@https://h/app.js:1:2\nrun@https://h/app.js:1:15)";
  EXPECT_EQ(columns("react_native", frames), (std::vector<uint64_t>{9, 18}));
  EXPECT_EQ(columns("web", frames), (std::vector<uint64_t>{5, 13}));  // Safari or Firefox: undecided
  EXPECT_EQ(columns("web", frames + R"(\nforEach@[native code]\nglobal code@https://h/app.js:1:2)"),
            (std::vector<uint64_t>{9, 18, 9}));
  EXPECT_EQ(columns("web", frames + R"(\nrun/<@https://h/app.js:1:2)"), (std::vector<uint64_t>{5, 13, 5}));
  // SpiderMonkey's async causes are Firefox's alone; JavaScriptCore's module code is its own.
  EXPECT_EQ(columns("web", frames + R"(\npromise callback*run@https://h/app.js:1:2)"),
            (std::vector<uint64_t>{5, 13, 5}));
  EXPECT_EQ(columns("web", frames + R"(\nmodule code@https://h/app.js:1:2)"), (std::vector<uint64_t>{9, 18, 9}));
  // The cause is no part of the function's name; the restored text keeps it before the name, as
  // Firefox prints it. (This map names no function: the name is the one printed.)
  auto firefox = process(R"({"event_id":"f","kind":"error","platform":"web","app":"shop","build_id":"1.0",)"
                         R"("threads":[{"stack":"setTimeout handler*a@https://h/app.js:1:2"}]})");
  const std::string& restored = firefox.records.at(0).value;
  EXPECT_NE(restored.find(R"("function":"a","file":"app.js","line":3,"column":5)"), std::string::npos) << restored;
  EXPECT_NE(restored.find(R"("restored":"setTimeout handler*a@app.js:3:5")"), std::string::npos) << restored;
  // The engine frame is kept, restored as itself.
  auto safari = process(R"({"event_id":"s","kind":"error","platform":"web","app":"shop","build_id":"1.0",)"
                        R"("threads":[{"stack":"forEach@[native code]"}]})");
  EXPECT_NE(safari.records.at(0).value.find(R"("restored":"forEach@[native code]")"), std::string::npos)
      << safari.records.at(0).value;
  // Code Firefox ran through eval: a frame with no script position (its position is inside the
  // eval'd string), not a line no kind reads.
  auto evald = process(R"({"event_id":"e","kind":"error","platform":"web","app":"shop","build_id":"1.0",)"
                       R"("threads":[{"stack":"a@https://h/app.js:1:2\ninner@https://h/app.js line 1 > eval:1:26"}]})");
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(evald.records.at(0).value).get(root), simdjson::SUCCESS);
  simdjson::dom::array evald_frames = root["threads"].at(0)["frames"];
  ASSERT_EQ(evald_frames.size(), 2u) << evald.records.at(0).value;
  EXPECT_EQ(std::string_view(evald_frames.at(0)["file"]), "app.js");
  EXPECT_EQ(std::string_view(evald_frames.at(1)["reason"]), "no_position") << evald.records.at(0).value;
}

// The event's "pg_map_id" (top level, or in "attributes") reaches the Java kind's retrace through
// EventScope::symbol_ids and picks the mapping over the event's build.
TEST_F(PipelineTest, AnEventsPgMapIdPicksTheMappingOfItsJavaFrames) {
  for (const auto& [build, map_id] : {std::pair{"1", "aaaa111"}, std::pair{"2", "bbbb222"}}) {
    UploadMeta meta;
    meta.kind = SymbolKind::kProguard;
    meta.app = "shop";
    meta.build_id = build;
    const std::string mapping = std::string("# compiler: R8\n# pg_map_id: ") + map_id + "\norg.app.Build" + build +
                                " -> a:\n    1:1:void run():10:10 -> a\n";
    UploadContent content;
    content.bytes = mapping;
    content.display_name = "mapping.txt";
    auto report = ingestUpload(*store_, meta, content, IngestOptions{});
    ASSERT_TRUE(report) << report.error().message();
  }
  auto restoredText = [&](const std::string& id_fields) {
    const std::string event =
        R"({"event_id":"j1","platform":"android","app":"shop","build_id":"1",)" + id_fields +
        R"json("threads":[{"name":"main","stack":"java.lang.IllegalStateException\n\tat a.a(SourceFile:1)"}]})json";
    auto result = process(event);
    EXPECT_FALSE(result.dead_letter) << result.error;
    simdjson::dom::element root;
    if (result.records.empty() || parser_.parse(result.records[0].value).get(root)) return std::string("no output");
    return std::string(std::string_view(root["threads"].at(0)["restored"]));
  };
  EXPECT_EQ(restoredText(""), "java.lang.IllegalStateException\n\tat org.app.Build1.run(Build1.java:10)");
  EXPECT_EQ(restoredText(R"("pg_map_id":"bbbb222",)"),
            "java.lang.IllegalStateException\n\tat org.app.Build2.run(Build2.java:10)");
  EXPECT_EQ(restoredText(R"("attributes":{"pg_map_id":"bbbb222"},)"),
            "java.lang.IllegalStateException\n\tat org.app.Build2.run(Build2.java:10)");
  // An id the store does not know leaves the frame waiting for that mapping.
  EXPECT_EQ(restoredText(R"("pg_map_id":"cccc333",)"),
            "java.lang.IllegalStateException\n\tat a.a(SourceFile:1)  (not restored: missing_symbols pg_map_id "
            "cccc333)");
}

TEST_F(PipelineTest, UnreadableEventsGoToTheDlqWithTheirReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not valid JSON"},
      {"[1,2]", "must be a JSON object"},
      {R"({"platform":"ios","build_id":"1","threads":[]})", "missing field 'app'"},
      {R"({"app":"a","platform":"ios","threads":[]})", "missing field 'build_id'"},
      {R"({"app":"a","build_id":"1","platform":"symbian","threads":[]})", "unknown platform"},
      {R"({"app":"a","build_id":"1","platform":"flutter","threads":[]})",
       "unknown platform 'flutter' (expected ios, android, web or react_native)"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":"x"})", "'threads' must be an array"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[{"name":"t"}]})", "neither 'stack' nor 'samples'"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[{"stack":5}]})", "must be a string"},
      {R"({"app":"a","build_id":"1","platform":"ios"})", "missing field 'threads'"},
      {R"({"app":"a","build_id":"1","platform":"ios","kind":"boom","threads":[]})", "unknown kind"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[],"x":12e})", "not valid JSON"},
      // Values the walk does not read are checked all the same (raw_event.cc parses each event once).
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[],"sdk":{"v":[1,{"w":tru}]}})", "not valid JSON"},
      {R"({"app":"a","build_id":"1","platform":"ios","exception":{"type":"T","x":1.},"threads":[]})", "not valid JSON"},
      {R"({"app":"a","build_id":"1","platform":"ios","attributes":{"a":nul},"threads":[]})", "not valid JSON"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[{"stack":"x","tid":01}]})", "not valid JSON"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[]} {})", "not valid JSON"},
      // A JSON error after the point where the event is refused is still the reason given.
      {R"({"app":"a","build_id":"1","platform":"ios","threads":"x","y":1e})", "not valid JSON"},
      {R"({"app":"a","build_id":"1","platform":"ios","exception":"boom","threads":[]})",
       "field 'exception' must be an object"},
  };
  for (const auto& [event, reason] : cases) {
    auto result = process(event);
    ASSERT_TRUE(result.dead_letter) << event;
    ASSERT_EQ(result.records.size(), 1u);
    const auto& dlq = result.records[0];
    EXPECT_EQ(dlq.kind, OutputKind::kDeadLetter);
    EXPECT_EQ(dlq.value, event);  // the input bytes unchanged
    EXPECT_EQ(dlq.key, "shop:1.0");
    ASSERT_FALSE(dlq.headers.empty());
    EXPECT_EQ(dlq.headers[0].first, "restack.error");
    EXPECT_NE(dlq.headers[0].second.find(reason), std::string::npos) << event << " -> " << dlq.headers[0].second;
  }
  pipeline::ProcessorOptions small;
  small.event.max_event_bytes = 64;
  pipeline::EventProcessor bounded(*symbolizer_, small);
  auto big = bounded.process("k", nativeCrashEvent("big", "shop", "1.0", nativeLibrary()));
  ASSERT_TRUE(big);
  ASSERT_TRUE(big->dead_letter);
  EXPECT_NE(big->error.find("max_event_bytes"), std::string::npos);
}

TEST_F(PipelineTest, OutputIsValidJsonEvenForInvalidUtf8FromSymbols) {
  // Frames echo raw lines; a raw line with a control character must be escaped, not copied.
  const std::string event =
      R"J({"app":"a","build_id":"1","platform":"web","threads":[{"stack":"weird \u0001 line\n at x (y)"}]})J";
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter);
  simdjson::dom::element root;
  EXPECT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS) << result.records[0].value;
}

// Deterministic fuzzing of the whole pipeline: mutated events never crash it, and whatever comes
// out is either a DLQ record carrying the input unchanged or a restored event that is valid JSON.
TEST_F(PipelineTest, MutatedEventsNeverCrashAndAlwaysYieldValidOutput) {
  const std::string seed = nativeCrashEvent("fuzz", "shop", "1.0", nativeLibrary());
  const std::string lag =
      R"({"app":"a","build_id":"1","platform":"react_native","kind":"lag","threads":[)"
      R"J({"name":"main","samples":[{"timestamp_ms":5,"stack":"at f (address at index.android.bundle:1:9)"}]}]})J";
  std::mt19937 random(99);
  const std::string alphabet = "{}[]\":,\\ntu0123456789.-eE aAzZ\x01\xff";
  size_t restored = 0, dead = 0;
  for (int i = 0; i < 10000; ++i) {
    std::string event = (i % 2) ? seed : lag;
    int edits = 1 + random() % 4;
    for (int e = 0; e < edits && !event.empty(); ++e) {
      size_t at = random() % event.size();
      switch (random() % 3) {
        case 0:
          event[at] = alphabet[random() % alphabet.size()];
          break;
        case 1:
          event.erase(at, 1 + random() % 8);
          break;
        default:
          event.insert(at, 1, alphabet[random() % alphabet.size()]);
      }
    }
    auto result = processor_->process("k", event);
    ASSERT_TRUE(result) << result.error().message();
    if (result->dead_letter) {
      ++dead;
      EXPECT_EQ(result->records.at(0).value, event);
    } else {
      ++restored;
      simdjson::dom::element root;
      ASSERT_EQ(parser_.parse(result->records.at(0).value).get(root), simdjson::SUCCESS) << event;
      ASSERT_EQ(parser_.parse(result->records.at(1).value).get(root), simdjson::SUCCESS) << event;
    }
  }
  EXPECT_GT(restored, 0u);
  EXPECT_GT(dead, 0u);
}

// An Android native crash whose crashed thread has `frames` lines, every one restorable (the
// crash site and its caller, alternately), plus an "attributes" field of `padding` bytes.
std::string bigNativeEvent(size_t frames, size_t padding = 0) {
  const NativeLibrary& library = nativeLibrary();
  const std::string id = " libcrash.so [arm64-v8a::" + library.build_id + "]";
  char line[64];
  std::string stack;
  for (size_t i = 0; i < frames; ++i) {
    std::snprintf(line, sizeof line, "pc 0x%016llx",
                  static_cast<unsigned long long>(i % 2 ? library.caller_return : library.crash_address));
    if (i) stack += "\\n";
    stack += line + id;
  }
  return R"({"event_id":"big","kind":"crash","platform":"android","app":"shop","build_id":"1.0",)"
         R"("attributes":{"pad":")" +
         std::string(padding, 'p') + R"("},"threads":[{"name":"main","crashed":true,"stack":")" + stack +
         R"("},{"name":"other","stack":"pc 0x0000000000000001 libnothing.so"}]})";
}

pipeline::ProcessResult processWith(Symbolizer& symbolizer, uint64_t max_output_bytes, const std::string& event,
                                    uint64_t max_event_bytes = 1 << 20) {
  pipeline::ProcessorOptions options;
  options.max_output_bytes = max_output_bytes;
  options.event.max_event_bytes = max_event_bytes;
  pipeline::EventProcessor processor(symbolizer, options);
  auto result = processor.process("shop:1.0", event);
  EXPECT_TRUE(result) << result.error().message();
  return result ? std::move(*result) : pipeline::ProcessResult{};
}

TEST_F(PipelineTest, OversizedRestoredEventLosesItsRestoredTextFirst) {
  const std::string event = bigNativeEvent(400);
  auto whole = processWith(*symbolizer_, 100 << 20, event);
  ASSERT_FALSE(whole.dead_letter) << whole.error;
  const std::string& full = whole.records.at(0).value;
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(full).get(root), simdjson::SUCCESS);
  EXPECT_TRUE(root["symbolication"]["truncated"].error() == simdjson::NO_SUCH_FIELD);
  const size_t text_bytes = std::string_view(root["threads"].at(0)["restored"]).size();
  ASSERT_GT(text_bytes, 10000u);

  // One byte short of the whole event: the restored texts go, every frame stays.
  auto cut = processWith(*symbolizer_, full.size() - 1, event);
  ASSERT_FALSE(cut.dead_letter) << cut.error;
  const std::string& value = cut.records.at(0).value;
  EXPECT_LE(value.size(), full.size() - 1);
  ASSERT_EQ(parser_.parse(value).get(root), simdjson::SUCCESS) << value.substr(0, 500);
  EXPECT_TRUE(root["threads"].at(0)["restored"].error() == simdjson::NO_SUCH_FIELD);
  EXPECT_TRUE(root["threads"].at(0)["frames_dropped"].error() == simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(simdjson::dom::array(root["threads"].at(0)["frames"]).size(), 400u);
  simdjson::dom::element marker = root["symbolication"]["truncated"];
  EXPECT_EQ(uint64_t(marker["max_output_bytes"]), full.size() - 1);
  EXPECT_TRUE(bool(marker["restored_dropped"]));
  EXPECT_TRUE(marker["frames_dropped"].error() == simdjson::NO_SUCH_FIELD);
  // The fingerprint does not change with the shape of the output.
  EXPECT_EQ(cut.records.at(0).key, whole.records.at(0).key);
  EXPECT_EQ(cut.records.at(1).value, whole.records.at(1).value);
}

TEST_F(PipelineTest, OversizedRestoredEventThenDropsFramesAndSaysHowMany) {
  // 300 frames: the input fits the limit, its restored frames do not.
  const std::string event = bigNativeEvent(300);
  constexpr uint64_t kLimit = 65536;
  ASSERT_LT(event.size(), kLimit);
  auto result = processWith(*symbolizer_, kLimit, event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  const std::string& value = result.records.at(0).value;
  EXPECT_LE(value.size(), kLimit);
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(value).get(root), simdjson::SUCCESS) << value.substr(0, 500);
  simdjson::dom::element crashed = root["threads"].at(0);
  simdjson::dom::array frames = crashed["frames"];
  const uint64_t dropped = uint64_t(crashed["frames_dropped"]);
  // Frames are kept from the top (the crash site first), halving from the largest stack.
  EXPECT_EQ(frames.size(), 75u);
  EXPECT_EQ(dropped, 225u);
  EXPECT_EQ(std::string_view(frames.at(0)["function"]), nativeLibrary().expected_crash_function);
  EXPECT_EQ(std::string_view(frames.at(1)["function"]), nativeLibrary().expected_caller_function);
  EXPECT_TRUE(crashed["restored"].error() == simdjson::NO_SUCH_FIELD);
  // The input's own stack text is untouched.
  simdjson::dom::parser input_parser;
  simdjson::dom::element input;
  ASSERT_EQ(input_parser.parse(event).get(input), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(crashed["stack"]), std::string_view(input["threads"].at(0)["stack"]));
  // The short thread kept its single frame and says nothing was dropped.
  EXPECT_EQ(simdjson::dom::array(root["threads"].at(1)["frames"]).size(), 1u);
  EXPECT_TRUE(root["threads"].at(1)["frames_dropped"].error() == simdjson::NO_SUCH_FIELD);
  simdjson::dom::element marker = root["symbolication"]["truncated"];
  EXPECT_EQ(uint64_t(marker["max_output_bytes"]), kLimit);
  EXPECT_TRUE(bool(marker["restored_dropped"]));
  EXPECT_EQ(uint64_t(marker["frames_dropped"]), dropped);
  EXPECT_EQ(uint64_t(marker["frames_per_stack"]), 75u);
  // The totals still describe the whole event.
  EXPECT_EQ(uint64_t(root["symbolication"]["frames_total"]), 301u);
  // The fingerprint record is whole and valid.
  ASSERT_EQ(parser_.parse(result.records.at(1).value).get(root), simdjson::SUCCESS);
}

TEST_F(PipelineTest, AHundredThousandFrameEventStaysWithinBounds) {
  // 100,000 one-character lines: a small input whose frames (past limits.max_frames_per_thread,
  // kept raw) would take megabytes.
  std::string stack;
  for (int i = 0; i < 100000; ++i) stack += "x\\n";
  const std::string event = R"({"event_id":"deep","kind":"error","platform":"web","app":"shop","build_id":"1.0",)"
                            R"("threads":[{"name":"main","crashed":true,"stack":")" +
                            stack + R"("}]})";
  ASSERT_LT(event.size(), 900000u);
  const auto started = std::chrono::steady_clock::now();
  auto result = processWith(*symbolizer_, 900000, event);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(result.dead_letter) << result.error;
  const std::string& value = result.records.at(0).value;
  EXPECT_LE(value.size(), 900000u);
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(value).get(root), simdjson::SUCCESS);
  simdjson::dom::array frames = root["threads"].at(0)["frames"];
  EXPECT_EQ(frames.size(), 512u);  // limits.max_frames_per_thread
  EXPECT_EQ(frames.size() + uint64_t(root["threads"].at(0)["frames_dropped"]), 100000u);
  EXPECT_EQ(uint64_t(root["symbolication"]["frames_total"]), 100000u);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count(), 30);

  // 100,000 real frames make an input larger than the limit: the DLQ gets a cut copy.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "at f" + std::to_string(i % 10) + " (a.js:1:1)\\n";
  const std::string big = R"({"app":"shop","build_id":"1.0","platform":"web","threads":[{"stack":")" + deep + "\"}]}";
  auto dead = processWith(*symbolizer_, 900000, big, 16 << 20);
  ASSERT_TRUE(dead.dead_letter);
  EXPECT_EQ(dead.records.at(0).value.size(), 900000u);
  EXPECT_NE(dead.error.find("limits.max_output_bytes"), std::string::npos) << dead.error;
}

TEST_F(PipelineTest, AnEventWhoseOwnFieldsDoNotFitGoesToTheDlq) {
  constexpr uint64_t kLimit = 65536;
  // Readable and under the limit itself, but its restored form cannot fit.
  const std::string event = bigNativeEvent(2, kLimit - 1000);
  ASSERT_LT(event.size(), kLimit);
  auto result = processWith(*symbolizer_, kLimit, event);
  ASSERT_TRUE(result.dead_letter);
  ASSERT_EQ(result.records.size(), 1u);
  const auto& dlq = result.records[0];
  EXPECT_EQ(dlq.kind, OutputKind::kDeadLetter);
  EXPECT_EQ(dlq.value, event);
  EXPECT_EQ(dlq.key, "shop:1.0");
  EXPECT_EQ(dlq.headers.at(0).first, "restack.error");
  EXPECT_NE(dlq.headers.at(0).second.find("restored event exceeds limits.max_output_bytes (65536)"), std::string::npos)
      << dlq.headers.at(0).second;
  EXPECT_EQ(dlq.headers.at(1), (std::pair<std::string, std::string>{"restack.error.code", "too_large"}));
  EXPECT_EQ(dlq.headers.size(), 2u);  // not cut: no restack.truncated

  // Larger than the limit itself: the DLQ gets its first max_output_bytes bytes and says so.
  const std::string huge = bigNativeEvent(2, 3 * kLimit);
  auto cut = processWith(*symbolizer_, kLimit, huge);
  ASSERT_TRUE(cut.dead_letter);
  const auto& copy = cut.records.at(0);
  EXPECT_EQ(copy.value, huge.substr(0, kLimit));
  bool said_so = false;
  for (const auto& [name, text] : copy.headers) {
    if (name == "restack.truncated") {
      said_so = true;
      EXPECT_NE(text.find("first 65536 of " + std::to_string(huge.size()) + " bytes"), std::string::npos) << text;
    }
  }
  EXPECT_TRUE(said_so);
}

TEST_F(PipelineTest, UnreadableEventsLargerThanTheLimitAreCutInTheDlq) {
  constexpr uint64_t kLimit = 65536;
  const std::string junk = "{not json " + std::string(200000, 'x');
  const std::string long_key(10000, 'k');
  pipeline::ProcessorOptions options;
  options.max_output_bytes = kLimit;
  pipeline::EventProcessor processor(*symbolizer_, options);
  auto result = processor.process(long_key, junk);
  ASSERT_TRUE(result);
  ASSERT_TRUE(result->dead_letter);
  const auto& dlq = result->records.at(0);
  EXPECT_EQ(dlq.value, junk.substr(0, kLimit));
  EXPECT_EQ(dlq.key, long_key.substr(0, pipeline::kMaxKeyBytes));
  std::map<std::string, std::string> headers(dlq.headers.begin(), dlq.headers.end());
  EXPECT_EQ(headers["restack.error.code"], "malformed_input");
  EXPECT_NE(headers["restack.truncated"].find("of 200010 bytes"), std::string::npos) << headers["restack.truncated"];
  EXPECT_NE(headers["restack.key.truncated"].find("of 10000 bytes"), std::string::npos);
  for (const auto& [name, text] : dlq.headers) EXPECT_LE(text.size(), pipeline::kMaxHeaderValueBytes) << name;
}

TEST_F(PipelineTest, AnOversizedFingerprintRecordIsCutDownAndStillValid) {
  // A 300 KB exception type lands in the record twice (exception_type and title).
  const std::string type(300000, 'T');
  std::string event = nativeCrashEvent("fp", "shop", "1.0", nativeLibrary());
  const std::string from = R"("type":"SIGSEGV")";
  event.replace(event.find(from), from.size(), "\"type\":\"" + type + "\"");
  auto result = processWith(*symbolizer_, 900000, event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  const std::string& record = result.records.at(1).value;
  EXPECT_LE(record.size(), 65536u);
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(record).get(root), simdjson::SUCCESS) << record.substr(0, 300);
  EXPECT_TRUE(bool(root["truncated"]));
  EXPECT_EQ(std::string_view(root["app"]), "shop");
  EXPECT_EQ(result.records.at(1).key, "shop:" + std::string(std::string_view(root["fingerprint"])));
  EXPECT_EQ(std::string_view(root["exception_type"]).size(), 1024u);
  // The restored event embeds the same record and keeps the input's exception whole.
  simdjson::dom::parser other;
  simdjson::dom::element restored;
  ASSERT_EQ(other.parse(result.records.at(0).value).get(restored), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::minify(restored["fingerprint"]), simdjson::minify(root));
  EXPECT_EQ(std::string_view(restored["exception"]["type"]).size(), type.size());
}

// A restored event fed in again (a replay, a re-run of `restack symbolicate`) must not carry two
// copies of the fields Restack writes, on threads or on lag samples.
TEST_F(PipelineTest, FieldsRestackWritesAreNotPassedThroughTwice) {
  const std::string event =
      R"({"app":"a","build_id":"1","platform":"web","kind":"lag","threads":[{"name":"main","frames_dropped":3,)"
      R"J("frames":[],"restored":"old","samples":[{"timestamp_ms":1,"stack":"at f (x.js:1:1)","frames":[],)J"
      R"("restored":"old","frames_dropped":2,"note":"kept"}]}]})";
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  // The threads part (the fingerprint record further on has its own "frames").
  const std::string value = result.records.at(0).value.substr(0, result.records.at(0).value.find("\"symbolication\""));
  auto count = [&](std::string_view needle) {
    size_t n = 0;
    for (size_t at = value.find(needle); at != std::string::npos; at = value.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"frames\":"), 1u) << value;  // the sample's own, written by Restack
  EXPECT_EQ(count("\"restored\":"), 1u) << value;
  EXPECT_EQ(count("\"frames_dropped\":"), 0u) << value;
  EXPECT_EQ(count("\"note\":\"kept\""), 1u) << value;
}

TEST(OutputRecord, FingerprintRecordsFitTheirBudget) {
  std::string frames;
  for (int i = 0; i < 1000; ++i) frames += std::string(i ? "," : "") + "\"f" + std::to_string(i) + "\"";
  const std::string record = R"({"app":"a","fingerprint":"0123456789abcdef0123456789abcdef","algorithm":"v2",)"
                             R"("title":")" +
                             std::string(50000, 'x') + "\xc3\xa9" + R"(","frames":[)" + frames +
                             R"(],"lag_share":0.8,"lag_samples":10})";
  EXPECT_EQ(*pipeline::fitFingerprintRecord(record, record.size()), record);  // fits: unchanged
  for (size_t budget : {16384u, 2048u}) {
    auto fitted = pipeline::fitFingerprintRecord(record, budget);
    ASSERT_TRUE(fitted) << budget;
    EXPECT_LE(fitted->size(), budget);
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(*fitted).get(root), simdjson::SUCCESS) << *fitted;
    EXPECT_TRUE(bool(root["truncated"]));
    EXPECT_EQ(std::string_view(root["fingerprint"]), "0123456789abcdef0123456789abcdef");
    EXPECT_EQ(uint64_t(root["lag_samples"]), 10u);
    EXPECT_LE(simdjson::dom::array(root["frames"]).size(), 64u);
  }
  EXPECT_FALSE(pipeline::fitFingerprintRecord(record, 100));
  // A cut never splits a UTF-8 sequence.
  EXPECT_EQ(pipeline::cutUtf8("a\xc3\xa9", 2), "a");
  EXPECT_EQ(pipeline::cutUtf8("a\xc3\xa9", 3), "a\xc3\xa9");
}

TEST(OutputRecord, ARecordTheProducerRefusedGoesToTheDlqCutDown) {
  pipeline::OutputRecord refused;
  refused.kind = OutputKind::kSymbolicated;
  refused.key = "shop:0123";
  refused.value = std::string(2000000, 'v');
  pipeline::OutputRecord dlq = pipeline::refusedOutputDeadLetter(refused, "restack.events.symbolicated");
  EXPECT_EQ(dlq.kind, OutputKind::kDeadLetter);
  EXPECT_EQ(dlq.key, refused.key);
  EXPECT_EQ(dlq.value.size(), pipeline::kRefusedOutputKeptBytes);
  std::map<std::string, std::string> headers(dlq.headers.begin(), dlq.headers.end());
  EXPECT_EQ(headers["restack.error.code"], "too_large");
  EXPECT_NE(headers["restack.error"].find("2000000 bytes for restack.events.symbolicated"), std::string::npos);
  EXPECT_NE(headers["restack.truncated"].find("4096 of 2000000"), std::string::npos);
}

// The worker ingests uploads beside its restores (worker/kafka/symbol_feed.h). A large image is
// written over several batches, and a re-ingest deletes its records before writing them again, so a
// restore in between would find its functions missing or answered from the symbol table only. With
// the store's lookups pinned for the ingest (SymbolStore::pinLookups, as the feed does), every
// restore under way answers from the symbols as they were before it. The image is this test's own
// executable: real code, ~20 MB of records, several write batches.
TEST_F(PipelineTest, RestoresDuringAReIngestAnswerFromTheSymbolsBeforeIt) {
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&ingestUpload), &info), 0);
  const uint64_t base = reinterpret_cast<uint64_t>(info.dli_fbase);
  UploadMeta meta;
  meta.app = "shop";
  meta.build_id = "self";
  UploadContent content;
  content.path = std::filesystem::read_symlink("/proc/self/exe").string();
  auto first = ingestUpload(*store_, meta, content, IngestOptions{});
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_EQ(first->ids.size(), 1u);
  const std::string image = "[x86_64::" + first->ids[0] + "]";
  const std::string event =
      R"({"event_id":"again","kind":"crash","platform":"android","app":"shop","build_id":"self","threads":[)"
      R"({"name":"main","crashed":true,"stack":"pc )" +
      hex(reinterpret_cast<uint64_t>(&ingestUpload) - base + 16) + " pipeline_test " + image + "\\npc " +
      hex(reinterpret_cast<uint64_t>(&detectSymbolKind) - base + 16) + " pipeline_test " + image + R"("}]})";
  auto restoredText = [&]() -> std::string {
    // Nothing cached: every restore reads the store.
    Symbolizer fresh(*store_, SymbolizerOptions{});
    pipeline::EventProcessor processor(fresh, pipeline::ProcessorOptions{});
    auto result = processor.process("shop:self", event);
    EXPECT_TRUE(result) << result.error().message();
    if (!result) return {};
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(result->records[0].value).get(root) != simdjson::SUCCESS) return {};
    return std::string(std::string_view(root["threads"].at(0)["restored"]));
  };
  const std::string before = restoredText();
  ASSERT_NE(before.find("ingestUpload"), std::string::npos) << before;
  ASSERT_NE(before.find("detectSymbolKind"), std::string::npos) << before;

  size_t restores = 0;
  for (int round = 0; round < 2; ++round) {
    store_->pinLookups();
    std::atomic<bool> ingested{false};
    std::thread ingest([&] {
      auto report = ingestUpload(*store_, meta, content, IngestOptions{});
      EXPECT_TRUE(report) << report.error().message();
      ingested = true;
    });
    while (!ingested) {
      ASSERT_EQ(restoredText(), before) << "round " << round << ", restore " << restores;
      ++restores;
    }
    ingest.join();
    store_->unpinLookups();
  }
  EXPECT_GT(restores, 2u);
  EXPECT_EQ(restoredText(), before);
}

// Uploads ingested while lookups are pinned (the worker ingests beside its restores) are seen once
// the feed unpins and tells the symbolizer (Symbolizer::storeChanged). The ProGuard and source-map
// readers cache "which mapping serves this build" and "which map serves this file", missing ones
// included, under counters the ingest moves when it ends: a restore between that end and the
// unpin reads the older view under the new count, and without storeChanged its "no mapping" would
// hold every later event of the build back for good.
TEST_F(PipelineTest, SymbolsIngestedWhileLookupsArePinnedAreSeenOnceUnpinned) {
  const std::string mappings = sourcemap::test::encodeMappings({{{0, 0, 2, 4, 0}}});
  auto ingest = [&](SymbolKind kind, const std::string& name, const std::string& bytes) {
    UploadMeta meta;
    meta.kind = kind;
    meta.app = "shop";
    meta.build_id = "8";
    meta.name = name;
    UploadContent content;
    content.bytes = bytes;
    content.display_name = name.empty() ? "mapping.txt" : name + ".map";
    auto report = ingestUpload(*store_, meta, content, IngestOptions{});
    ASSERT_TRUE(report) << report.error().message();
  };
  const std::string java = R"({"event_id":"p1","platform":"android","app":"shop","build_id":"8",)"
                           R"json("threads":[{"name":"main","stack":"java.lang.Error\n\tat g.a(SourceFile:3)"}]})json";
  const std::string js = R"({"event_id":"p2","kind":"error","platform":"web","app":"shop","build_id":"8",)"
                         R"json("threads":[{"stack":"Error\n    at a (https://shop.example/app.js:1:1)"}]})json";
  auto status = [&](const std::string& event) {
    auto result = process(event);
    simdjson::dom::element root;
    if (result.records.empty() || parser_.parse(result.records[0].value).get(root) != simdjson::SUCCESS) {
      return std::string();
    }
    return std::string(std::string_view(root["symbolication"]["status"]));
  };
  ASSERT_EQ(status(java), "pending");
  ASSERT_EQ(status(js), "pending");

  store_->pinLookups();
  ingest(SymbolKind::kProguard, "", "org.app.Gamma -> g:\n    3:3:void run():30 -> a\n");
  ingest(SymbolKind::kSourcemap, "app.js",
         R"({"version":3,"sources":["app.js"],"names":["fail"],"mappings":")" + mappings + "\"}");
  // Restores while the ingests' records are not visible yet.
  EXPECT_EQ(status(java), "pending");
  EXPECT_EQ(status(js), "pending");
  store_->unpinLookups();
  symbolizer_->storeChanged();
  EXPECT_EQ(status(java), "complete");
  EXPECT_NE(status(js), "pending");  // the map restores the frame (its "Error" line is no frame)
}

}  // namespace
}  // namespace restack::worker_test

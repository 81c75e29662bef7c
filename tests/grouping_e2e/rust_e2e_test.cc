// Grouping of real Rust panics, end to end through Restack's own restorer.
//
// A Rust library (tests/native/fixtures/inventory.rs) is built twice by rustc, as apps ship Rust
// behind a C ABI in a native library: `-C opt-level=3` and `-C opt-level=2 -C codegen-units=1`,
// both with full debug info and `panic=abort`, so every address, the inlining and the build id
// differ. A C program calls it and panics it; its SIGABRT handler records the stack as a crash
// reporter does (glibc's backtrace() and dladdr(): image and offset of every frame), and the test
// sends that stack as tombstone lines. The run is the real one: the panic machinery of the
// toolchain's standard library (abort, __rust_start_panic, panic_fmt, Option::expect, …) sits
// above the app's own functions, as on a device.
//
// The panic machinery is the same in every Rust crash, so hashing it merged every panic of an app
// into one group; its frames come from the toolchain's sources ("/rustc/<commit>/library/…"),
// which grouping/in_app.h reads as library code, never hashed (like code from a system header).
//
// RustBacktraceNames (below) restores a Rust program's panic and compares every frame with the
// backtrace the program printed itself.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/grouping_e2e/e2e_support.h"

namespace restack::grouping_e2e {
namespace {

// The crash reporter: the frames from the signal on, as "frame <image path> <offset in hex>".
const char* kDriverSource = R"(#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned inventory_order(const char*, size_t, const char*, size_t, int);

static void onAbort(int signal_number) {
  void* pcs[64];
  int count = backtrace(pcs, 64);
  for (int i = 0; i < count; ++i) {
    Dl_info info;
    if (dladdr(pcs[i], &info) == 0 || info.dli_fname == NULL) continue;
    fprintf(stderr, "frame %s %lx\n", info.dli_fname, (unsigned long)((char*)pcs[i] - (char*)info.dli_fbase));
  }
  _exit(128 + signal_number);
}

int main(int argc, char** argv) {
  void* warm[4];
  backtrace(warm, 4);  /* loads the unwinder now, not in the signal handler */
  signal(SIGABRT, onAbort);
  const char* text = argv[1];
  const char* sku = argv[2];
  printf("%u\n", inventory_order(text, strlen(text), sku, strlen(sku), atoi(argv[3])));
  return 0;
}
)";

struct RustBuild {
  std::string folder;
  std::string build_id;  // GNU build id
  std::string label;     // the event's build_id
};

struct RustCrash {
  std::string stack;  // the tombstone lines sent
  Outcome outcome;
};

std::string describe(const RustCrash& crash) {
  return "stack:\n" + crash.stack + crash.outcome.describe();
}

class RustEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto dir = TempDir::create("restack-grouping-e2e-rust-");
    ASSERT_TRUE(dir) << dir.error().message();
    dir_ = new TempDir(std::move(*dir));
    pipeline_ = Pipeline::create().release();
    if (pipeline_ == nullptr) return;
    const std::string compiler = rustCompiler();
    ASSERT_FALSE(compiler.empty()) << "rustc missing: install Rust (scripts/setup.sh says how)";
    ASSERT_TRUE(requireTool("gcc"));
    const char* flags[2] = {"-C opt-level=3", "-C opt-level=2 -C codegen-units=1"};
    for (int number : {1, 2}) {
      RustBuild& build = builds_[number - 1];
      build.folder = dir_->path() + "/build" + std::to_string(number);
      build.label = "2.0." + std::to_string(number);
      std::filesystem::create_directories(build.folder);
      writeFile(build.folder + "/driver.c", kDriverSource);
      ASSERT_TRUE(runOrFail(build.folder, compiler +
                                              " --edition 2021 --crate-type cdylib -C debuginfo=2 -C panic=abort " +
                                              flags[number - 1] + " " + RESTACK_SOURCE_DIR +
                                              "/tests/native/fixtures/inventory.rs -o libinventory.so && "
                                              "gcc -O1 -g driver.c -L. -linventory -Wl,-rpath,$PWD -o driver"));
      build.build_id = gnuBuildId(build.folder, "libinventory.so");
      ASSERT_FALSE(build.build_id.empty()) << "libinventory.so has no build id";
      UploadMeta meta;
      meta.app = "inventory";
      meta.build_id = build.label;
      ASSERT_TRUE(pipeline_->ingest(meta, build.folder + "/libinventory.so"));
    }
  }

  static void TearDownTestSuite() {
    delete pipeline_;
    pipeline_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  // Runs the program of build `number` into the panic of `site` ("unknown sku" or "bad line")
  // from `screen` (0 checkout, 1 cart), and restores and groups the stack its handler recorded.
  static RustCrash crash(int number, const std::string& site, int screen) {
    RustCrash out;
    const RustBuild& build = builds_[number - 1];
    if (pipeline_ == nullptr || build.build_id.empty()) {
      ADD_FAILURE() << "the builds were not made";
      return out;
    }
    const std::string text = site == "bad line" ? "apple, 5, 100\\npear, two, 50" : "apple, 5, 100\\npear, 2, 50";
    CommandResult result =
        run(build.folder, "./driver \"$(printf '" + text + "')\" plum " + std::to_string(screen) + " 2>&1");
    EXPECT_EQ(result.exit_code, 128 + 6) << result.output;  // SIGABRT: the panic aborted
    // As a tombstone prints them: from the C library's abort on, each image under its device
    // path (the C program stands for the app process).
    std::istringstream frames(result.output);
    std::string line;
    int index = 0;
    bool started = false;
    while (std::getline(frames, line)) {
      std::istringstream fields(line);
      std::string tag, path, offset;
      if (!(fields >> tag >> path >> offset) || tag != "frame") continue;
      std::string device_path = "/system/bin/app_process64";
      std::string build_id = "(BuildId: 5f0c2a7e)";
      if (path.find("libc.so") != std::string::npos) {
        device_path = "/apex/com.android.runtime/lib64/bionic/libc.so";
        build_id = "(BuildId: 9d3c1e2f0a4b5c6d7e8f90a1b2c3d4e5)";
        started = true;
      } else if (path.ends_with("libinventory.so")) {
        device_path = "/data/app/~~Xq3nRk==/com.inventory-9aZ1==/lib/x86_64/libinventory.so";
        build_id = "(BuildId: " + build.build_id + ")";
      }
      if (!started) continue;  // the handler itself and the signal trampoline
      // As Android's unwinder prints them: a caller frame's return address less the size of the
      // call instruction it takes on x86-64 (1), the first frame's pc as it is.
      char text[64];
      snprintf(text, sizeof text, "#%02d pc %016llx", index, std::stoull(offset, nullptr, 16) - (index > 0 ? 1 : 0));
      ++index;
      out.stack += "      " + std::string(text) + "  " + device_path + " " + build_id + "\n";
    }
    EXPECT_GT(index, 5) << result.output;
    const std::string event = R"({"event_id":"rust-)" + build.label + "-" + std::to_string(screen) +
                              R"(","kind":"crash","platform":"android","app":"inventory","build_id":")" + build.label +
                              R"(","timestamp_ms":1700000000000,"exception":{"type":"SIGABRT","message":"SI_TKILL"},)"
                              R"("threads":[{"name":"main","crashed":true,"stack":)" +
                              jsonString(out.stack) + "}]}";
    out.outcome = pipeline_->process("inventory:" + build.label, event);
    return out;
  }

  static TempDir* dir_;
  static Pipeline* pipeline_;
  static RustBuild builds_[2];
};

TempDir* RustEndToEnd::dir_ = nullptr;
Pipeline* RustEndToEnd::pipeline_ = nullptr;
RustBuild RustEndToEnd::builds_[2];

TEST_F(RustEndToEnd, ThePanickingAppFunctionIsTheCulpritInEveryBuild) {
  ASSERT_NE(builds_[0].build_id, builds_[1].build_id);
  for (const auto& [site, culprit] :
       {std::pair{"unknown sku", "inventory::Inventory::take"}, std::pair{"bad line", "inventory::place_order"}}) {
    SCOPED_TRACE(site);
    RustCrash one = crash(1, site, 0);
    RustCrash two = crash(2, site, 0);
    for (const RustCrash* crash : {&one, &two}) {
      EXPECT_EQ(crash->outcome.source, "in_app") << describe(*crash);
      EXPECT_EQ(crash->outcome.culprit, culprit) << describe(*crash);
      // The standard library's frames are restored (the user sees the panic path) but not hashed.
      EXPECT_NE(crash->outcome.restored_event.find("core::panicking::panic_fmt"), std::string::npos)
          << describe(*crash);
      for (const std::string& frame : crash->outcome.frames) {
        EXPECT_TRUE(frame.starts_with("inventory::")) << frame << "\n" << describe(*crash);
      }
    }
    EXPECT_EQ(one.outcome.fingerprint, two.outcome.fingerprint) << describe(one) << "\n" << describe(two);
  }
}

TEST_F(RustEndToEnd, DifferentPanicSitesDiffer) {
  for (int number : {1, 2}) {
    SCOPED_TRACE(number);
    RustCrash unknown = crash(number, "unknown sku", 0);
    RustCrash bad_line = crash(number, "bad line", 0);
    EXPECT_NE(unknown.outcome.fingerprint, bad_line.outcome.fingerprint) << describe(unknown) << describe(bad_line);
  }
}

TEST_F(RustEndToEnd, DifferentCallPathsAboveTheAppFramesGroupTogether) {
  for (int number : {1, 2}) {
    SCOPED_TRACE(number);
    RustCrash checkout = crash(number, "unknown sku", 0);
    RustCrash cart = crash(number, "unknown sku", 1);
    EXPECT_NE(checkout.stack, cart.stack);
    EXPECT_EQ(checkout.outcome.fingerprint, cart.outcome.fingerprint) << describe(checkout) << describe(cart);
  }
}

// Function names as the Rust program itself prints them. tests/native/fixtures/orders.rs panics
// through a generic type, closures and a trait impl, and prints its own backtrace
// (RUST_BACKTRACE=1); its panic hook first recorded the same frames as a crash reporter does
// (glibc's backtrace() and dladdr()), and Restack restores those. Every frame of the program's
// own source restores to the function, line and column the program printed for it, in the same
// order. Built with rustc's default (legacy) symbol mangling and with v0.
struct PrintedFrame {
  std::string function;
  std::string file;
  uint64_t line = 0;
  uint64_t column = 0;
};

std::string describe(const std::vector<PrintedFrame>& frames) {
  std::string text;
  for (const PrintedFrame& frame : frames) {
    text += "  " + frame.function + "  at " + frame.file + ":" + std::to_string(frame.line) + ":" +
            std::to_string(frame.column) + "\n";
  }
  return text;
}

// Rust's short backtrace: "  12: name" lines, each followed by "      at file:line:column" when
// the program knows where the frame is.
std::vector<PrintedFrame> parseRustBacktrace(const std::string& output) {
  std::vector<PrintedFrame> frames;
  std::istringstream lines(output.substr(std::min(output.size(), output.find("stack backtrace:"))));
  std::string line;
  while (std::getline(lines, line)) {
    const size_t text = line.find_first_not_of(' ');
    if (text == std::string::npos) continue;
    const size_t colon = line.find(": ", text);
    if (line.compare(text, 3, "at ") == 0 && !frames.empty()) {
      // "at ./orders.rs:22:33": the path may hold ':' itself, so the numbers are read from the end.
      std::string where = line.substr(text + 3);
      const size_t column_at = where.rfind(':');
      const size_t line_at = column_at == std::string::npos ? std::string::npos : where.rfind(':', column_at - 1);
      if (line_at == std::string::npos) continue;
      frames.back().file = where.substr(0, line_at);
      frames.back().line = std::stoull(where.substr(line_at + 1, column_at - line_at - 1));
      frames.back().column = std::stoull(where.substr(column_at + 1));
    } else if (colon != std::string::npos && colon > text &&
               std::all_of(line.begin() + static_cast<std::ptrdiff_t>(text),
                           line.begin() + static_cast<std::ptrdiff_t>(colon),
                           [](char c) { return c >= '0' && c <= '9'; })) {
      frames.push_back({line.substr(colon + 2), "", 0, 0});
    }
  }
  return frames;
}

// The restored frames of the event's first thread, innermost first, inlined ones included.
std::vector<PrintedFrame> restoredFrames(const std::string& restored_event) {
  std::vector<PrintedFrame> frames;
  simdjson::dom::parser parser;
  simdjson::dom::element event;
  simdjson::dom::array list;
  if (parser.parse(restored_event).get(event) != simdjson::SUCCESS ||
      event["threads"].at(0)["frames"].get_array().get(list) != simdjson::SUCCESS) {
    ADD_FAILURE() << "no frames in the restored event: " << restored_event;
    return frames;
  }
  for (simdjson::dom::element frame : list) {
    PrintedFrame restored;
    std::string_view text;
    if (frame["function"].get_string().get(text) == simdjson::SUCCESS) restored.function = std::string(text);
    if (frame["file"].get_string().get(text) == simdjson::SUCCESS) restored.file = std::string(text);
    uint64_t number = 0;
    if (frame["line"].get_uint64().get(number) == simdjson::SUCCESS) restored.line = number;
    if (frame["column"].get_uint64().get(number) == simdjson::SUCCESS) restored.column = number;
    frames.push_back(std::move(restored));
  }
  return frames;
}

// The frames of the program's own source file.
std::vector<PrintedFrame> programFrames(const std::vector<PrintedFrame>& frames) {
  std::vector<PrintedFrame> own;
  for (const PrintedFrame& frame : frames) {
    if (std::filesystem::path(frame.file).filename() == "orders.rs") own.push_back(frame);
  }
  return own;
}

struct ProgramRun {
  std::string label;                   // the event's build_id, and the symbol mangling
  std::string output;                  // what the program printed: the reporter's frames and Rust's backtrace
  std::vector<PrintedFrame> printed;   // Rust's own backtrace
  std::vector<PrintedFrame> restored;  // Restack's frames for what the reporter recorded
  std::string stack;                   // the tombstone lines sent
};

class RustBacktraceNames : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto dir = TempDir::create("restack-rust-names-");
    ASSERT_TRUE(dir) << dir.error().message();
    dir_ = new TempDir(std::move(*dir));
    pipeline_ = Pipeline::create().release();
    ASSERT_NE(pipeline_, nullptr);
    const std::string compiler = rustCompiler();
    ASSERT_FALSE(compiler.empty()) << "rustc missing: install Rust (scripts/setup.sh says how)";
    const std::pair<const char*, const char*> manglings[2] = {{"legacy", ""}, {"v0", " -C symbol-mangling-version=v0"}};
    for (size_t i = 0; i < 2; ++i) {
      ProgramRun& program = runs_[i];
      program.label = manglings[i].first;
      const std::string folder = dir_->path() + "/" + program.label;
      std::filesystem::create_directories(folder);
      ASSERT_TRUE(runOrFail(folder, compiler + " --edition 2021 -C opt-level=2 -C debuginfo=2" + manglings[i].second +
                                        " " + RESTACK_SOURCE_DIR + "/tests/native/fixtures/orders.rs -o orders"));
      const std::string build_id = gnuBuildId(folder, "orders");
      ASSERT_FALSE(build_id.empty()) << "orders has no build id";
      UploadMeta meta;
      meta.app = "orders";
      meta.build_id = program.label;
      ASSERT_TRUE(pipeline_->ingest(meta, folder + "/orders"));

      CommandResult result = run(folder, "RUST_BACKTRACE=1 ./orders 5 2>&1");
      program.output = result.output;
      ASSERT_EQ(result.exit_code, 101) << result.output;  // Rust's exit code for a panic
      program.printed = parseRustBacktrace(result.output);
      // The program's own frames as a tombstone prints them. Every address the reporter recorded
      // is a return address: each is printed less one, as Android's unwinder does (x86-64).
      std::istringstream frames(result.output);
      std::string line;
      int index = 0;
      while (std::getline(frames, line)) {
        std::istringstream fields(line);
        std::string tag, path, offset;
        if (!(fields >> tag >> path >> offset) || tag != "frame" || !path.ends_with("/orders")) continue;
        char text[64];
        snprintf(text, sizeof text, "#%02d pc %016llx", index++, std::stoull(offset, nullptr, 16) - 1);
        program.stack += "      " + std::string(text) + "  /data/local/tmp/orders (BuildId: " + build_id + ")\n";
      }
      const std::string event = R"({"event_id":"orders-)" + program.label +
                                R"(","kind":"crash","platform":"android","app":"orders","build_id":")" + program.label +
                                R"(","timestamp_ms":1700000000000,"exception":{"type":"SIGABRT","message":"panic"},)"
                                R"("threads":[{"name":"main","crashed":true,"stack":)" +
                                jsonString(program.stack) + "}]}";
      program.restored = restoredFrames(pipeline_->process("orders:" + program.label, event).restored_event);
    }
  }

  static void TearDownTestSuite() {
    delete pipeline_;
    pipeline_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  static TempDir* dir_;
  static Pipeline* pipeline_;
  static ProgramRun runs_[2];
};

TempDir* RustBacktraceNames::dir_ = nullptr;
Pipeline* RustBacktraceNames::pipeline_ = nullptr;
ProgramRun RustBacktraceNames::runs_[2];

TEST_F(RustBacktraceNames, TheProgramsFramesReadAsTheProgramPrintedThem) {
  for (const ProgramRun& program : runs_) {
    SCOPED_TRACE(program.label);
    const std::string context = "the program printed:\n" + program.output + "\nsent:\n" + program.stack +
                                "restored:\n" + describe(program.restored);
    const std::vector<PrintedFrame> printed = programFrames(program.printed);
    const std::vector<PrintedFrame> restored = programFrames(program.restored);
    // The trait impl's closure and method, the generic type's closure and method, main's closure,
    // the generic function that calls it, and main.
    ASSERT_GE(printed.size(), 7u) << context;
    ASSERT_GE(restored.size(), printed.size()) << context;
    // The reporter recorded the hook's own frames first; the panic's frames end both lists.
    const std::vector<PrintedFrame> tail(restored.end() - static_cast<std::ptrdiff_t>(printed.size()), restored.end());
    for (size_t i = 0; i < printed.size(); ++i) {
      EXPECT_EQ(tail[i].function, printed[i].function) << "frame " << i << "\n" << context;
      EXPECT_EQ(tail[i].line, printed[i].line) << "frame " << i << "\n" << context;
      EXPECT_EQ(tail[i].column, printed[i].column) << "frame " << i << "\n" << context;
    }
    EXPECT_EQ(printed.front().function.rfind("<orders::Sku as orders::Priced>::price::", 0), 0u) << context;
    // The whole of what the program printed (the panic machinery and the standard library's
    // generic code inlined into the program's functions too) is one run of the restored frames.
    const auto same = [](const PrintedFrame& a, const PrintedFrame& b) {
      return a.function == b.function && a.line == b.line && a.column == b.column &&
             std::filesystem::path(a.file).filename() == std::filesystem::path(b.file).filename();
    };
    EXPECT_NE(std::search(program.restored.begin(), program.restored.end(), program.printed.begin(),
                          program.printed.end(), same),
              program.restored.end())
        << context;
  }
}

}  // namespace
}  // namespace restack::grouping_e2e

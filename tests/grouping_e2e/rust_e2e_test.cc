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
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

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
    const std::string rustc = run(dir_->path(), "command -v rustc || echo \"$HOME/.cargo/bin/rustc\"").output;
    const std::string compiler = rustc.substr(0, rustc.find('\n'));
    ASSERT_TRUE(std::filesystem::exists(compiler)) << "rustc missing: install Rust (scripts/setup.sh says how)";
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
      CommandResult notes = run(build.folder, "readelf -n libinventory.so");
      const size_t at = notes.output.find("Build ID: ");
      ASSERT_NE(at, std::string::npos) << notes.output;
      std::istringstream(notes.output.substr(at + 10)) >> build.build_id;
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

}  // namespace
}  // namespace restack::grouping_e2e

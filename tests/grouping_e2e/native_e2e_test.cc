// Grouping across two Android native builds, end to end through Restack's own restorer.
//
// The same C++ crash code (shop.cc, -O2 both times) is linked into an aarch64 libshop.so twice:
// build 2 adds a padding file linked first, compiles an unrelated file (util.cc) at -O0 instead
// of -O2, and moves the image base, so every address and the GNU build id change. Nothing here
// can run aarch64 code, so the crash stacks are computed from the real binaries: the crashing
// pc is an instruction the line table puts on the crash line, every caller frame the real `bl`
// to its callee (llvm-objdump-19 -d -l), exactly what Android's unwinder reports. They travel as
// tombstone lines ("#00 pc … libshop.so (BuildId: …)") under a JNI entry and two system frames
// whose symbols were never uploaded. Each build's .so is ingested with ingestUpload;
// EventProcessor::process restores and fingerprints the events.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <sstream>

#include "tests/grouping_e2e/e2e_support.h"

namespace restack::grouping_e2e {
namespace {

// Freestanding (no system headers without an NDK): a crash inside a lambda that is inlined
// through a template helper into priceCart, reached from two screens, and a second crash site.
// Built with -fvisibility=hidden like most Android libraries: only the JNI entry is exported,
// so calls inside the library are direct `bl`s rather than PLT calls.
const char* kShopSource = R"(namespace shop {
namespace cart {
struct Item { const char* name; int* price; };
template <typename T, typename Visit>
void forEach(const T* begin, const T* end, Visit visit) {
  for (; begin != end; ++begin) visit(*begin);
}
template <typename T>
class Cache {
 public:
  int total(const T* items, int count, int coupon) const {
    int sum = 0;
    forEach(items, items + count, [&](const T& item) {
      sum += *item.price - coupon;  // CRASH: total
    });
    return sum;
  }
};
__attribute__((noinline)) int priceCart(const Item* items, int count, int coupon) {
  Cache<Item> cache;
  return cache.total(items, count, coupon);
}
}  // namespace cart
namespace checkout {
__attribute__((noinline)) int pay(int* order, int coupon) {
  return *order + coupon;  // CRASH: pay
}
}  // namespace checkout
namespace screens {
__attribute__((noinline)) int refresh(int coupon) {
  cart::Item items[1] = {{"shoe", nullptr}};
  return cart::priceCart(items, 1, coupon) + 1;
}
__attribute__((noinline)) int feed(int coupon) { return refresh(coupon) * 2; }
__attribute__((noinline)) int searchResults(int coupon) { return refresh(coupon) * 3; }
__attribute__((noinline)) int search(int coupon) { return searchResults(coupon) + 4; }
__attribute__((noinline)) int checkout(int coupon) {
  int* volatile order = nullptr;
  return checkout::pay(order, coupon) + 5;
}
}  // namespace screens
}  // namespace shop
extern "C" __attribute__((visibility("default"))) int Java_com_shop_NativeBridge_run(void*, void*, int scenario, int coupon) {
  switch (scenario) {
    case 0: return shop::screens::feed(coupon) + 1;
    case 1: return shop::screens::search(coupon) + 1;
    default: return shop::screens::checkout(coupon) + 1;
  }
}
)";

// Unrelated code: build 2 compiles it at -O0, which changes its size and everything after it.
const char* kUtilSource = R"(namespace shop::util {
int checksum(const char* text) {
  int sum = 0;
  for (int i = 0; text[i] != 0; ++i) sum = sum * 31 + text[i];
  return sum;
}
}  // namespace shop::util
)";

// Build 2 only, linked first: pushes every later function to other addresses.
const char* kPaddingSource = R"(namespace shop::padding {
int table(int n) {
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 7 + n) % 13;
  int sum = 0;
  for (int i = 0; i < 64; ++i) sum += values[(i * n) & 63];
  return sum;
}
}  // namespace shop::padding
)";

// Where a library's frames of a real call chain lie: line table and calls from the disassembly.
struct Instruction {
  uint64_t address = 0;
  std::string function;  // demangled, as llvm-objdump prints it
  int line = 0;          // innermost line of the line table, 0 when none
  std::string mnemonic;
  std::string operands;
};

std::vector<Instruction> disassemble(const std::string& objdump_output) {
  static const std::regex kInstruction(R"(^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$)");
  std::vector<Instruction> out;
  std::istringstream lines(objdump_output);
  std::string line, function;
  int source_line = 0;
  while (std::getline(lines, line)) {
    if (line.size() > 2 && line.ends_with(">:") && line.find(" <") != std::string::npos) {
      // "0000000000404500 <shop::cart::priceCart(shop::cart::Item const*, int, int)>:"
      function = line.substr(line.find(" <") + 2, line.size() - line.find(" <") - 4);
      source_line = 0;
    } else if (line.starts_with("; /") || line.starts_with("; .")) {
      // "; /tmp/…/shop.cc:14"
      size_t colon = line.rfind(':');
      source_line = colon == std::string::npos ? 0 : std::atoi(line.c_str() + colon + 1);
    } else if (std::smatch match; std::regex_match(line, match, kInstruction)) {
      // "    404590:      \tldr\tw11, [x11]"
      Instruction instruction;
      instruction.address = std::stoull(match[1], nullptr, 16);
      instruction.function = function;
      instruction.line = source_line;
      instruction.mnemonic = match[2];
      instruction.operands = match[3];
      out.push_back(std::move(instruction));
    }
  }
  return out;
}

int lineOf(const std::string& source, const std::string& marker) {
  size_t at = source.find(marker);
  if (at == std::string::npos) return 0;
  return 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<long>(at), '\n'));
}

struct NativeBuild {
  std::string library;   // path of libshop.so
  std::string build_id;  // GNU build id, lowercase hex
  std::vector<Instruction> code;

  // The crashing pc: the first load the line table puts on `line` inside `function`.
  uint64_t crashSite(const std::string& function, int line) const {
    for (const Instruction& instruction : code) {
      if (instruction.function.starts_with(function) && instruction.line == line &&
          (instruction.mnemonic.starts_with("ldr") || instruction.mnemonic.starts_with("ldur"))) {
        return instruction.address;
      }
    }
    ADD_FAILURE() << "no load on line " << line << " in " << function;
    return 0;
  }
  // The pc a tombstone prints for a frame of `caller` while `callee` runs: Android's unwinder
  // takes the call instruction's size off the return address, so it is the `bl` itself.
  uint64_t callSite(const std::string& caller, const std::string& callee) const {
    for (const Instruction& instruction : code) {
      if (instruction.function.starts_with(caller) && instruction.mnemonic == "bl" &&
          instruction.operands.find("<" + callee) != std::string::npos) {
        return instruction.address;
      }
    }
    ADD_FAILURE() << "no call from " << caller << " to " << callee;
    return 0;
  }
};

std::string tombstoneLine(size_t index, uint64_t pc, const std::string& path, const std::string& suffix) {
  char head[64];
  std::snprintf(head, sizeof head, "      #%02zu pc %016llx  ", index, static_cast<unsigned long long>(pc));
  return head + path + " " + suffix;
}

class NativeEndToEnd : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    for (const char* tool : {"clang++-19", "clang-19", "llvm-objdump-19", "llvm-readelf-19"}) {
      if (!requireTool(tool)) return;
    }
    auto dir = TempDir::create("restack-grouping-e2e-native-");
    ASSERT_TRUE(dir) << dir.error().message();
    dir_ = new TempDir(std::move(*dir));
    pipeline_ = Pipeline::create().release();
    ASSERT_NE(pipeline_, nullptr);
    const std::string compile =
        "clang++-19 --target=aarch64-linux-android24 -g -fPIC -ffreestanding -nostdlibinc "
        "-fno-exceptions -fno-rtti -fvisibility=hidden -c ";
    const std::string link = "clang-19 --target=aarch64-linux-android24 -shared -nostdlib -fuse-ld=lld -Wl,--build-id ";
    for (int number : {1, 2}) {
      const std::string folder = dir_->path() + "/build" + std::to_string(number);
      writeFile(folder + "/shop.cc", kShopSource);
      writeFile(folder + "/util.cc", kUtilSource);
      writeFile(folder + "/padding.cc", kPaddingSource);
      std::string commands = compile + "-O2 shop.cc -o shop.o && ";
      if (number == 1) {
        commands += compile + "-O2 util.cc -o util.o && " + link + "shop.o util.o -o libshop.so";
      } else {
        commands += compile + "-O0 util.cc -o util.o && " + compile + "-O0 padding.cc -o padding.o && " + link +
                    "-Wl,--image-base=0x200000 padding.o util.o shop.o -o libshop.so";
      }
      ASSERT_TRUE(runOrFail(folder, commands));
      NativeBuild& build = builds_[number - 1];
      build.library = folder + "/libshop.so";
      build.build_id = gnuBuildId(folder, "libshop.so");
      ASSERT_FALSE(build.build_id.empty()) << "libshop.so has no build id";
      CommandResult objdump = run(folder, "llvm-objdump-19 -d -l -C --no-show-raw-insn libshop.so");
      ASSERT_EQ(objdump.exit_code, 0) << objdump.output;
      build.code = disassemble(objdump.output);
      ASSERT_FALSE(build.code.empty()) << objdump.output;
      UploadMeta meta;
      meta.app = "shop";
      meta.build_id = "1." + std::to_string(number);
      ASSERT_TRUE(pipeline_->ingest(meta, build.library));
    }
  }
  static void TearDownTestSuite() {
    delete pipeline_;
    pipeline_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  struct NativeCrash {
    std::string stack;  // the tombstone lines sent
    Outcome outcome;
  };

  // The stack of `scenario` in build `number`, innermost first, as file addresses.
  static std::vector<uint64_t> frames(int number, const std::string& scenario) {
    const NativeBuild& build = builds_[number - 1];
    const int total_line = lineOf(kShopSource, "// CRASH: total");
    const int pay_line = lineOf(kShopSource, "// CRASH: pay");
    const std::string run = "Java_com_shop_NativeBridge_run";
    if (scenario == "feed") {
      return {build.crashSite("shop::cart::priceCart(", total_line),
              build.callSite("shop::screens::refresh(", "shop::cart::priceCart("),
              build.callSite("shop::screens::feed(", "shop::screens::refresh("),
              build.callSite(run, "shop::screens::feed(")};
    }
    if (scenario == "search") {
      return {build.crashSite("shop::cart::priceCart(", total_line),
              build.callSite("shop::screens::refresh(", "shop::cart::priceCart("),
              build.callSite("shop::screens::searchResults(", "shop::screens::refresh("),
              build.callSite("shop::screens::search(", "shop::screens::searchResults("),
              build.callSite(run, "shop::screens::search(")};
    }
    return {build.crashSite("shop::checkout::pay(", pay_line),
            build.callSite("shop::screens::checkout(", "shop::checkout::pay("),
            build.callSite(run, "shop::screens::checkout(")};
  }

  // With `tombstone_header`, the event states no exception: the stack text starts with the
  // tombstone's signal and cause lines, as a crash reporter forwarding the tombstone sends it.
  static NativeCrash crash(int number, const std::string& scenario, bool tombstone_header = false) {
    NativeCrash out;
    if (pipeline_ == nullptr || builds_[number - 1].build_id.empty()) {
      ADD_FAILURE() << "the builds were not made";
      return out;
    }
    const NativeBuild& build = builds_[number - 1];
    const std::string app_path = "/data/app/~~Xq3nRk==/com.shop-9aZ1==/lib/arm64/libshop.so";
    std::vector<std::string> lines;
    for (uint64_t pc : frames(number, scenario)) {
      lines.push_back(tombstoneLine(lines.size(), pc, app_path, "(BuildId: " + build.build_id + ")"));
    }
    // The runtime below the JNI entry; the device's system symbols were never uploaded.
    lines.push_back(
        tombstoneLine(lines.size(), 0x351e30, "/apex/com.android.art/lib64/libart.so",
                      "(art_quick_generic_jni_trampoline+144) (BuildId: 4b2c0a5ffa8e5b7e1e0a4f7d8c9b0a11)"));
    lines.push_back(tombstoneLine(lines.size(), 0xe5b2c, "/apex/com.android.runtime/lib64/bionic/libc.so",
                                  "(__pthread_start(void*)+40) (BuildId: 9d3c1e2f0a4b5c6d7e8f90a1b2c3d4e5)"));
    if (tombstone_header) {
      out.stack =
          "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0000000000000000\n"
          "Cause: null pointer dereference\n";
    }
    for (const std::string& line : lines) out.stack += line + "\n";
    const std::string build_id = "1." + std::to_string(number);
    const std::string exception =
        tombstone_header ? "" : R"("exception":{"type":"SIGSEGV","message":"SEGV_MAPERR fault addr 0x0"},)";
    const std::string event = R"({"event_id":"native-)" + build_id + "-" + scenario +
                              R"(","kind":"crash","platform":"android","app":"shop","build_id":")" + build_id +
                              R"(","timestamp_ms":1700000000000,)" + exception +
                              R"("threads":[{"name":"main","crashed":true,"stack":)" + jsonString(out.stack) + "}]}";
    out.outcome = pipeline_->process("shop:" + build_id, event);
    return out;
  }

  static TempDir* dir_;
  static Pipeline* pipeline_;
  static NativeBuild builds_[2];
};

TempDir* NativeEndToEnd::dir_ = nullptr;
Pipeline* NativeEndToEnd::pipeline_ = nullptr;
NativeBuild NativeEndToEnd::builds_[2];

std::string describe(const NativeEndToEnd::NativeCrash& crash) {
  return "stack:\n" + crash.stack + crash.outcome.describe();
}

void expectRestoredAppFrames(const NativeEndToEnd::NativeCrash& crash) {
  EXPECT_EQ(crash.outcome.source, "in_app") << describe(crash);
  // The missing system frames lie below the app frames used: they cannot change the result.
  EXPECT_EQ(crash.outcome.quality, "complete") << describe(crash);
  EXPECT_EQ(crash.outcome.event_fingerprint, crash.outcome.fingerprint) << describe(crash);
  ASSERT_FALSE(crash.outcome.frames.empty()) << describe(crash);
  for (const std::string& frame : crash.outcome.frames) {
    // The app's C++ code or its JNI entry: restored names, never addresses.
    EXPECT_TRUE(frame.starts_with("shop::") || frame.starts_with("Java_com_shop_")) << frame << "\n" << describe(crash);
  }
}

TEST_F(NativeEndToEnd, SameCrashSameFingerprintAtDifferentAddresses) {
  ASSERT_NE(builds_[0].build_id, builds_[1].build_id);
  for (const char* scenario : {"feed", "search", "checkout"}) {
    SCOPED_TRACE(scenario);
    NativeCrash one = crash(1, scenario);
    NativeCrash two = crash(2, scenario);
    ASSERT_NE(frames(1, scenario), frames(2, scenario));  // every pc moved
    expectRestoredAppFrames(one);
    expectRestoredAppFrames(two);
    EXPECT_EQ(one.outcome.fingerprint, two.outcome.fingerprint) << describe(one) << "\n" << describe(two);
    EXPECT_EQ(one.outcome.frames, two.outcome.frames);
  }
}

TEST_F(NativeEndToEnd, TheInlinedLambdaIsTheCulprit) {
  NativeCrash feed = crash(1, "feed");
  // The faulting load is the lambda's, inlined through forEach and Cache::total into priceCart.
  // Its key is its line distance from Cache::total's frame (the forEach call), not a number.
  EXPECT_EQ(feed.outcome.culprit, "shop::cart::Cache<T>::total::'lambda'::operator()@+1") << describe(feed);
}

TEST_F(NativeEndToEnd, DifferentCrashSitesDiffer) {
  for (int number : {1, 2}) {
    SCOPED_TRACE(number);
    NativeCrash feed = crash(number, "feed");
    NativeCrash checkout = crash(number, "checkout");
    EXPECT_NE(feed.outcome.fingerprint, checkout.outcome.fingerprint) << describe(feed) << describe(checkout);
  }
}

TEST_F(NativeEndToEnd, DifferentCallPathsAboveTheAppFramesGroupTogether) {
  for (int number : {1, 2}) {
    SCOPED_TRACE(number);
    NativeCrash feed = crash(number, "feed");
    NativeCrash search = crash(number, "search");
    EXPECT_EQ(feed.outcome.fingerprint, search.outcome.fingerprint) << describe(feed) << describe(search);
  }
}

// The tombstone's reason lines name the signal when the event states none: same fingerprint,
// the signal as exception type, the cause in the title.
TEST_F(NativeEndToEnd, SignalReadFromTombstoneLines) {
  for (int number : {1, 2}) {
    SCOPED_TRACE(number);
    NativeCrash field = crash(number, "feed");
    NativeCrash text = crash(number, "feed", true);
    EXPECT_EQ(text.outcome.exception_type, "SIGSEGV") << describe(text);
    EXPECT_EQ(text.outcome.fingerprint, field.outcome.fingerprint) << describe(text) << describe(field);
    EXPECT_NE(text.outcome.record.find(R"("title":"SIGSEGV: null pointer dereference")"), std::string::npos)
        << describe(text);
  }
}

}  // namespace
}  // namespace restack::grouping_e2e

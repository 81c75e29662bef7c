// Cross-build grouping on real native builds: the same C++ program built by GCC (-O2) and by
// Clang 19 (-O1, with an extra lambda and different code above the crash site), crashed for
// real (SIGSEGV), its stack captured by a signal handler and restored by llvm-symbolizer-19
// --inlines (the reference symbolizer). Different compilers, link addresses, inlining, clone
// suffixes and lambda numbering; the fingerprint must not see any of it.
#include <gtest/gtest.h>

#include <sstream>

#include "grouping/fingerprint.h"
#include "grouping/kinds/java_rules.h"
#include "grouping/kinds/js_rules.h"
#include "grouping/kinds/native_rules.h"
#include "tests/grouping/tool_support.h"

namespace restack::grouping {
namespace {

using testing::run;
using testing::TempDir;
using testing::writeFile;

// @EXTRA@ is filled in build 2 only.
const char* kProgram = R"(#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace shop {
struct CrashHandler {
  static void onSignal(int) {
    void* frames[64];
    int count = backtrace(frames, 64);
    for (int i = 0; i < count; ++i) {
      Dl_info info;
      if (dladdr(frames[i], &info) != 0 && info.dli_fname != nullptr) {
        std::printf("%s 0x%lx\n", info.dli_fname,
                    (unsigned long)((char*)frames[i] - (char*)info.dli_fbase));
      }
    }
    std::fflush(stdout);
    _exit(0);
  }
};

namespace cart {
struct Item { std::string name; int* price; };

template <typename T>
class Cache {
 public:
  @EXTRA@
  int total(const std::vector<T>& items, const std::string& coupon) const {
    int sum = 0;
    std::for_each(items.begin(), items.end(), [&](const T& item) {
      sum += *item.price - static_cast<int>(coupon.size());  // crashes on a null price
    });
    return sum;
  }
};

int __attribute__((noinline)) priceCart(const std::vector<Item>& items, const std::string& coupon) {
  Cache<Item> cache;
  return cache.total(items, coupon);
}
}  // namespace cart

namespace screens {
int __attribute__((noinline)) refresh(const std::string& coupon) {
  std::vector<cart::Item> items = {{"shoe", nullptr}};
  return cart::priceCart(items, coupon) + 1;
}
int __attribute__((noinline)) feed(const std::string& c) { return refresh(c) * 2; }
int __attribute__((noinline)) searchResults(const std::string& c) { return refresh(c) * 3; }
int __attribute__((noinline)) search(const std::string& c) { return searchResults(c) + 4; }
int __attribute__((noinline)) pay(const std::string& c) {
  volatile int* order = nullptr;
  return *order + static_cast<int>(c.size());
}
}  // namespace screens
}  // namespace shop

int main(int argc, char** argv) {
  signal(SIGSEGV, &shop::CrashHandler::onSignal);
  std::map<std::string, std::function<int(const std::string&)>> scenarios = {
      {"feed", shop::screens::feed}, {"search", shop::screens::search}, {"pay", shop::screens::pay}};
  return scenarios.at(argv[1])("coupon");
}
)";

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

class NativeCrossBuild : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    for (const char* tool : {"g++", "clang++-19", "llvm-symbolizer-19"}) {
      ASSERT_TRUE(testing::haveCommand(tool)) << tool << " is missing: run scripts/setup.sh (g++, clang-19, llvm-19)";
    }
    dir_ = new TempDir("restack-grouping-native-");
    writeFile(dir_->path() / "build1/shop.cc", replaceAll(kProgram, "@EXTRA@", ""));
    writeFile(dir_->path() / "build2/shop.cc",
              replaceAll(kProgram, "@EXTRA@",
                         "int count(const std::vector<T>& items) const { int n = 0; "
                         "std::for_each(items.begin(), items.end(), [&](const T&) { ++n; }); return n; }"));
    auto one = run(dir_->path() / "build1", "g++ -std=c++17 -O2 -g -fPIE -pie -rdynamic shop.cc -o shop -ldl");
    ASSERT_EQ(one.exit_code, 0) << one.output;
    auto two = run(dir_->path() / "build2",
                   "clang++-19 -std=c++17 -O1 -g -fPIE -pie -rdynamic -Wl,-z,separate-code shop.cc -o shop -ldl");
    ASSERT_EQ(two.exit_code, 0) << two.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  struct Crash {
    std::string raw;
    std::string restored;
    Fingerprint fingerprint;
  };

  // Runs a scenario, then restores every frame with llvm-symbolizer (return addresses - 1).
  static Crash crash(int build, const std::string& scenario) {
    const auto root = dir_->path() / ("build" + std::to_string(build));
    Crash out;
    auto ran = run(root, "./shop " + scenario);
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    out.raw = ran.output;
    GroupingInput input;
    input.app = "shop";
    input.platform = "android";
    input.kind = "crash";
    input.exception_type = "SIGSEGV";
    input.threads.push_back({"main", true, true, {}});
    std::istringstream lines(ran.output);
    std::string module, offset;
    bool after_trampoline = false;  // the frame after the signal trampoline is the faulting one
    while (lines >> module >> offset) {
      unsigned long address = std::stoul(offset, nullptr, 16);
      // Return addresses are looked up at addr - 1 (docs/design.md §1); the faulting pc is exact.
      if (address > 0 && !after_trampoline) --address;
      after_trampoline = module.find("libc.so") != std::string::npos && input.threads[0].frames.size() <= 2;
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%lx", address);
      auto symbolized =
          run(root, "llvm-symbolizer-19 --inlines --demangle --functions=linkage --obj='" + module + "' " + hex);
      out.restored += symbolized.output;
      // Output: pairs of lines (function, file:line:col) per inlined frame, innermost first.
      std::istringstream pairs(symbolized.output);
      std::string function, location;
      while (std::getline(pairs, function) && std::getline(pairs, location)) {
        if (function.empty()) break;
        GroupingFrame frame;
        frame.kind = &nativeRules();
        frame.module = module;
        frame.function = function == "??" ? "" : function;
        frame.file = location.substr(0, location.find(':'));
        frame.state = frame.function.empty() ? FrameState::kNotFound : FrameState::kRestored;
        input.threads[0].frames.push_back(std::move(frame));
      }
    }
    out.fingerprint = computeFingerprint(input, GroupingConfig{});
    return out;
  }

  static TempDir* dir_;
};

TempDir* NativeCrossBuild::dir_ = nullptr;

std::string describe(const NativeCrossBuild::Crash& crash) {
  std::string text = "raw:\n" + crash.raw + "restored:\n" + crash.restored + "frames used:";
  for (const auto& frame : crash.fingerprint.frames_used) text += " | " + frame;
  return text;
}

TEST_F(NativeCrossBuild, SameCrashSameFingerprintAcrossCompilers) {
  Crash gcc = crash(1, "feed");
  Crash clang = crash(2, "feed");
  ASSERT_NE(gcc.raw, clang.raw);
  ASSERT_NE(gcc.restored, clang.restored);
  EXPECT_EQ(gcc.fingerprint.hash, clang.fingerprint.hash) << describe(gcc) << "\n" << describe(clang);
  EXPECT_EQ(gcc.fingerprint.source, FingerprintSource::kInAppFrames) << describe(gcc);
  ASSERT_FALSE(gcc.fingerprint.frames_used.empty());
  // The null dereference is in the lambda inside Cache::total (see kProgram).
  EXPECT_EQ(gcc.fingerprint.frames_used.front(), "shop::cart::Cache<T>::total::'lambda'::operator()") << describe(gcc);
  // The crash handler on top of the stack is noise, not the culprit.
  EXPECT_EQ(gcc.fingerprint.culprit.find("CrashHandler"), std::string::npos) << describe(gcc);
}

TEST_F(NativeCrossBuild, CallPathsAboveGroupAndOtherSitesDiffer) {
  for (int build : {1, 2}) {
    Crash feed = crash(build, "feed");
    Crash search = crash(build, "search");
    Crash pay = crash(build, "pay");
    EXPECT_EQ(feed.fingerprint.hash, search.fingerprint.hash) << describe(feed) << "\n" << describe(search);
    EXPECT_NE(feed.fingerprint.hash, pay.fingerprint.hash) << describe(feed) << "\n" << describe(pay);
  }
}

}  // namespace
}  // namespace restack::grouping

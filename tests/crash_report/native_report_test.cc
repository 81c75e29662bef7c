// `restack symbolicate` on native crash reports of real builds, compared frame by frame with
// llvm-symbolizer on the same binaries. arm64 code cannot run here, so the reports are written
// the way debuggerd and Apple's ReportCrash lay them out, from every call instruction of the
// build (llvm-objdump): Apple prints the address after it (a return address), debuggerd the
// call instruction itself (libunwindstack takes 4 off every caller frame's return address on
// arm64).
//   - Android: an aarch64 .so (clang -O2, inlining) and a tombstone of its frames by BuildId; the
//     same for a 32-bit ARM (Thumb-2) .so.
//   - Apple: an arm64 iOS executable and its dSYM (dsymutil), and a .crash report whose frames
//     are placed through its Binary Images section (load address and UUID).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "formats/common/temp_dir.h"
#include "tests/support/run_command.h"

namespace restack {
namespace {

using test_support::runCommand;
using test_support::shellQuote;
using test_support::writeTextFile;

std::vector<std::string> lines(const std::string& text) {
  return test_support::outputLines(text);
}

std::string basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

const char* kSource = R"(typedef unsigned u32;
struct item { u32 price; u32 count; };
struct cart { struct item *items; u32 size; };

static inline u32 line_total(const struct item *item) { return item->price * item->count; }

__attribute__((noinline)) u32 cart_total(const struct cart *cart) {
  u32 sum = 0;
  for (u32 i = 0; i < cart->size; ++i) sum += line_total(&cart->items[i]);
  return sum;
}

__attribute__((noinline)) u32 apply_discount(const struct cart *cart, u32 percent) {
  u32 total = cart_total(cart);
  return total - total * percent / 100;
}

static inline u32 checkout_inner(const struct cart *cart) { return apply_discount(cart, 10) + 1; }

__attribute__((noinline)) u32 checkout(const struct cart *cart) {
  u32 result = checkout_inner(cart);
  return result + cart_total(cart);
}

__attribute__((visibility("default"))) u32 entry(const struct cart *cart) { return checkout(cart) * 2; }
)";

// Return addresses of every "bl" (and Thumb-2 "blx" to an address) in the text of `binary`: the
// address after each call, as an unwinder reports caller frames.
std::vector<uint64_t> returnAddresses(const std::string& binary) {
  auto objdump = runCommand("llvm-objdump-19 -d --no-show-raw-insn " + shellQuote(binary));
  EXPECT_EQ(objdump.exit_code, 0) << objdump.output;
  std::vector<uint64_t> out;
  for (const std::string& line : lines(objdump.output)) {
    // "   10d78:      	bl	0x10d00 <cart_total>"
    size_t colon = line.find(':');
    // Thumb-2 calls through the PLT are "blx 0x…" (4 bytes too); a "blx r3" is 2 bytes, left out.
    const bool call = line.find("\tbl\t") != std::string::npos || line.find("\tblx\t0x") != std::string::npos;
    if (colon == std::string::npos || !call) continue;
    try {
      out.push_back(std::stoull(line.substr(0, colon), nullptr, 16) + 4);
    } catch (...) {
    }
  }
  return out;
}

// llvm-symbolizer --inlines at each address, as "function basename:line" lines, innermost
// first, one block per address. `lookups` are the addresses to ask for: a return address less
// one, a pc as it is.
std::vector<std::vector<std::string>> reference(const std::string& object, const std::vector<uint64_t>& lookups) {
  std::string query;
  for (uint64_t address : lookups) query += "0x" + hex(address) + "\n";
  const std::string folder = std::filesystem::path(object).parent_path().string();
  writeTextFile(folder + "/addresses.txt", query);
  auto ran = runCommand("llvm-symbolizer-19 --inlines --functions=linkage --obj=" + shellQuote(object), "",
                        folder + "/addresses.txt", false);
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  std::vector<std::vector<std::string>> blocks(1);
  std::vector<std::string> output = lines(ran.output);
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i].empty()) {
      if (!blocks.back().empty()) blocks.emplace_back();
      continue;
    }
    if (i + 1 >= output.size()) break;
    std::string location = output[++i];  // file:line:column
    size_t last = location.rfind(':');
    size_t line_colon = last == std::string::npos ? std::string::npos : location.rfind(':', last - 1);
    std::string file_line =
        line_colon == std::string::npos
            ? location
            : basename(location.substr(0, line_colon)) + ":" + location.substr(line_colon + 1, last - line_colon - 1);
    std::string name = output[i - 1];
    if (name.starts_with("_")) name.erase(0, 1);  // Mach-O symbols carry a leading underscore
    blocks.back().push_back(name + " " + file_line);
  }
  if (blocks.back().empty()) blocks.pop_back();
  return blocks;
}

// Restored native lines "#03 fn (in lib) (file.c:12)" or "fn (in App) (file.c:12)" as
// "fn file.c:12", in order; lines that are not restored are kept as they are.
std::vector<std::string> restoredFrames(const std::string& output, const std::string& thread = "Thread 0") {
  std::vector<std::string> out;
  bool in = false;
  for (const std::string& line : lines(output)) {
    if (!in) {
      in = line.starts_with(thread + " ");
      continue;
    }
    if (line.empty()) break;
    std::string text = line;
    if (text.starts_with("#")) text = text.substr(text.find(' ') + 1);
    size_t in_at = text.find(" (in ");
    size_t file_at = text.rfind(" (");
    if (in_at == std::string::npos || file_at == in_at) {
      out.push_back(text);
      continue;
    }
    out.push_back(text.substr(0, in_at) + " " + text.substr(file_at + 2, text.size() - file_at - 3));
  }
  return out;
}

std::vector<std::string> flatten(const std::vector<std::vector<std::string>>& blocks) {
  std::vector<std::string> out;
  for (const auto& block : blocks) out.insert(out.end(), block.begin(), block.end());
  return out;
}

bool haveTools() {
  for (const char* tool :
       {"clang-19", "llvm-objdump-19", "llvm-symbolizer-19", "llvm-readelf-19", "dsymutil-19", "llvm-dwarfdump-19"}) {
    if (runCommand(std::string("command -v ") + tool).exit_code != 0) {
      ADD_FAILURE() << tool << " is missing: run scripts/setup.sh";
      return false;
    }
  }
  return true;
}

// An Android library built from kSource and a tombstone of its every call, as debuggerd prints
// them: Android's unwinder (libunwindstack) prints caller frames as the return address less the
// size of the call instruction, so each pc is the call itself (4 bytes: arm64's `bl`, Thumb-2's
// `bl`/`blx`), and ndk-stack hands that pc to llvm-symbolizer as it is.
struct AndroidBuild {
  const char* compile;     // clang-19's target flags
  const char* abi;         // the tombstone's "ABI:" line
  const char* lib_folder;  // where Android installs the ABI's libraries ("lib/arm64")
  int pc_digits;           // 16 for a 64-bit process, 8 for a 32-bit one
  const char* fault_addr;
};

// Builds `build`, pastes the tombstone into `restack symbolicate` and compares every frame with
// llvm-symbolizer; returns what `restack symbolicate` printed.
std::string restoreTombstone(const AndroidBuild& build) {
  std::string printed;
  [&] {
    ASSERT_TRUE(haveTools());
    auto dir = TempDir::create("restack-tombstone-");
    ASSERT_TRUE(dir) << dir.error().message();
    const std::string root = dir->path();
    writeTextFile(root + "/cart.c", kSource);
    auto built = runCommand(std::string("clang-19 ") + build.compile +
                                " -g -O2 -fPIC -ffreestanding -nostdlib -shared -fuse-ld=lld "
                                "-Wl,--build-id -Wl,-soname,libcart.so cart.c -o libcart.so",
                            root);
    ASSERT_EQ(built.exit_code, 0) << built.output;
    auto notes = runCommand("llvm-readelf-19 -n libcart.so | awk '/Build ID:/ { print $3 }'", root, "", false);
    std::string build_id = lines(notes.output).empty() ? "" : lines(notes.output).front();
    ASSERT_EQ(build_id.size(), 40u) << notes.output;
    std::vector<uint64_t> addresses = returnAddresses(root + "/libcart.so");
    ASSERT_GE(addresses.size(), 3u);
    for (uint64_t& address : addresses) address -= 4;

    std::string tombstone = std::string("*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***\n") +
                            "ABI: '" + build.abi + "'\npid: 100, tid: 101, name: worker  >>> com.example.cart <<<\n" +
                            "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr " + build.fault_addr +
                            "\n\nbacktrace:\n";
    for (size_t i = 0; i < addresses.size(); ++i) {
      // Every frame is a caller (#01…): no #00 pc.
      char line[64];
      std::snprintf(line, sizeof line, "      #%02zu pc %0*llx", i + 1, build.pc_digits,
                    static_cast<unsigned long long>(addresses[i]));
      tombstone += std::string(line) + "  /data/app/~~x==/com.example.cart-y==/" + build.lib_folder +
                   "/libcart.so (BuildId: " + build_id + ")\n";
    }
    writeTextFile(root + "/tombstone.txt", tombstone);
    auto restored = runCommand(shellQuote(RESTACK_BINARY) + " symbolicate --symbols libcart.so", root,
                               root + "/tombstone.txt", false);
    ASSERT_EQ(restored.exit_code, 0) << restored.output;
    EXPECT_EQ(restoredFrames(restored.output), flatten(reference(root + "/libcart.so", addresses))) << restored.output;
    printed = restored.output;
  }();
  return printed;
}

TEST(NativeReport, ATombstoneOfARealAarch64BuildReadsAsLlvmSymbolizerSays) {
  const std::string printed = restoreTombstone({"--target=aarch64-linux-android24", "arm64", "lib/arm64", 16, "0x8"});
  if (HasFatalFailure()) return;
  EXPECT_NE(printed.find("SIGSEGV: SEGV_MAPERR, fault addr 0x8"), std::string::npos) << printed;
}

// armeabi-v7a: Thumb-2 code (every function symbol has the Thumb bit set) and a tombstone of a
// 32-bit process, whose pcs have 8 digits.
TEST(NativeReport, ATombstoneOfARealArmv7ThumbBuildReadsAsLlvmSymbolizerSays) {
  restoreTombstone({"--target=armv7a-linux-androideabi24 -mthumb", "arm", "lib/arm", 8, "0x4"});
}

// An arm64 iOS executable built from kSource, its dSYM (dsymutil) and what a report of it needs.
struct AppleBuild {
  std::string root;                 // the folder: Cart, Cart.dSYM, the report
  std::string dwarf;                // the dSYM's DWARF file, llvm-symbolizer's object
  std::string uuid_plain;           // the image's UUID, lowercase hex without dashes
  uint64_t text_vmaddr = 0;         // __TEXT's vmaddr: file addresses are vmaddr + offset
  std::vector<uint64_t> addresses;  // return addresses of every call, file addresses
};

// Builds it in `root`; fails the test and returns false when it cannot.
bool buildApple(const std::string& root, AppleBuild& build) {
  build.root = root;
  writeTextFile(root + "/cart.c", kSource);
  auto built = runCommand(
      "clang-19 --target=arm64-apple-ios14 -g -O2 -c cart.c -o cart.o && "
      "clang-19 --target=arm64-apple-ios14 -fuse-ld=lld -nostdlib -Wl,-undefined,dynamic_lookup -Wl,-e,_entry "
      "cart.o -o Cart && dsymutil-19 Cart -o Cart.dSYM",
      root);
  EXPECT_EQ(built.exit_code, 0) << built.output;
  if (built.exit_code != 0) return false;
  build.dwarf = root + "/Cart.dSYM/Contents/Resources/DWARF/Cart";
  auto uuid_run = runCommand("llvm-dwarfdump-19 --uuid " + shellQuote(build.dwarf) + " | awk 'NR == 1 { print $2 }'",
                             "", "", false);
  std::string uuid = lines(uuid_run.output).empty() ? "" : lines(uuid_run.output).front();
  EXPECT_EQ(uuid.size(), 36u) << uuid_run.output;
  if (uuid.size() != 36) return false;
  for (char c : uuid) {
    if (c != '-') build.uuid_plain += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  auto vmaddr_run = runCommand(
      "llvm-objdump-19 --macho --private-headers Cart | awk '$1 == \"segname\" && $2 == \"__TEXT\" { getline; print "
      "$2; exit }'",
      root, "", false);
  if (lines(vmaddr_run.output).empty()) {
    ADD_FAILURE() << "no __TEXT segment: " << vmaddr_run.output;
    return false;
  }
  build.text_vmaddr = std::stoull(lines(vmaddr_run.output).front(), nullptr, 16);
  build.addresses = returnAddresses(root + "/Cart");
  EXPECT_GE(build.addresses.size(), 3u);
  return build.addresses.size() >= 3;
}

// llvm-symbolizer's frames for a thread of every call in `build`: the first frame is the pc, the
// others return addresses, looked up one byte back.
std::vector<std::string> referenceThread(const AppleBuild& build) {
  std::vector<uint64_t> lookups = build.addresses;
  for (size_t i = 1; i < lookups.size(); ++i) lookups[i] -= 1;
  return flatten(reference(build.dwarf, lookups));
}

// `restack symbolicate --symbols Cart.dSYM` on `report`.
std::string symbolicateApple(const AppleBuild& build, const std::string& report) {
  writeTextFile(build.root + "/Cart.crash", report);
  auto restored = runCommand(shellQuote(RESTACK_BINARY) + " symbolicate --symbols Cart.dSYM", build.root,
                             build.root + "/Cart.crash", false);
  EXPECT_EQ(restored.exit_code, 0) << restored.output;
  return restored.output;
}

const char* kAppleHeader =
    "Incident Identifier: 1E2D3C4B-5A69-4788-9A0B-1C2D3E4F5A6B\nIdentifier:          com.example.cart\n"
    "Version:             1.0 (1)\n\nException Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
    "Exception Subtype: KERN_INVALID_ADDRESS at 0x0000000000000008\n\n";

TEST(NativeReport, AnAppleCrashReportOfARealArm64BuildReadsAsLlvmSymbolizerSays) {
  ASSERT_TRUE(haveTools());
  auto dir = TempDir::create("restack-apple-report-");
  ASSERT_TRUE(dir) << dir.error().message();
  AppleBuild build;
  ASSERT_TRUE(buildApple(dir->path(), build));
  const std::vector<uint64_t>& addresses = build.addresses;
  const uint64_t text_vmaddr = build.text_vmaddr;

  const uint64_t load = 0x104a14000;
  std::string report = kAppleHeader;
  // The same frames as a Last Exception Backtrace the device did not symbolicate: one line of
  // runtime addresses, placed by Binary Images' ranges.
  report += "Last Exception Backtrace:\n(";
  for (size_t i = 0; i < addresses.size(); ++i) report += (i ? " 0x" : "0x") + hex(load + addresses[i] - text_vmaddr);
  report += ")\n\nThread 0 Crashed:\n";
  for (size_t i = 0; i < addresses.size(); ++i) {
    const uint64_t offset = addresses[i] - text_vmaddr;
    char line[160];
    if (i % 3 == 0) {  // as ReportCrash writes unsymbolicated frames
      std::snprintf(line, sizeof line, "%-4zu%-30s0x%s 0x%llx + %llu\n", i, "Cart", hex(load + offset).c_str(),
                    static_cast<unsigned long long>(load), static_cast<unsigned long long>(offset));
    } else if (i % 3 == 2) {  // the image named again before the offset (Last Exception Backtraces, Organizer)
      std::snprintf(line, sizeof line, "%-4zu%-30s0x%s Cart + %llu\n", i, "Cart", hex(load + offset).c_str(),
                    static_cast<unsigned long long>(offset));
    } else {  // as a device that already symbolicated writes them
      std::snprintf(line, sizeof line, "%-4zu%-30s0x%s somewhere + 12\n", i, "Cart", hex(load + offset).c_str());
    }
    report += line;
  }
  report += "\nBinary Images:\n       0x" + hex(load).substr(7) + " -        0x" + hex(load + 0xffff).substr(7) +
            " +Cart arm64  <" + build.uuid_plain + "> /private/var/containers/Bundle/Application/X/Cart.app/Cart\n";
  const std::string restored = symbolicateApple(build, report);
  const std::vector<std::string> expected = referenceThread(build);
  EXPECT_EQ(restoredFrames(restored, "Thread 0"), expected) << restored << report;  // the backtrace
  EXPECT_EQ(restoredFrames(restored, "Thread 1"), expected) << restored << report;
}

// A report whose Binary Images leave the app out (cut short, or a reporter that sends the threads
// only) and whose crashed thread the device symbolicated: no line of that thread says where the
// app was loaded, but another thread's unsymbolicated frame of it does, and places them all.
TEST(NativeReport, AnAppleReportsSymbolicatedThreadIsPlacedByAnotherThreadsLoadAddress) {
  ASSERT_TRUE(haveTools());
  auto dir = TempDir::create("restack-apple-threads-");
  ASSERT_TRUE(dir) << dir.error().message();
  AppleBuild build;
  ASSERT_TRUE(buildApple(dir->path(), build));
  const uint64_t load = 0x102b3c000;
  std::string report = std::string(kAppleHeader) + "Thread 0 Crashed:\n";
  for (size_t i = 0; i < build.addresses.size(); ++i) {
    char line[160];
    std::snprintf(line, sizeof line, "%-4zu%-30s0x%s somewhere + 12\n", i, "Cart",
                  hex(load + build.addresses[i] - build.text_vmaddr).c_str());
    report += line;
  }
  const uint64_t waiting = build.addresses.back() - build.text_vmaddr;  // where thread 1 waits in the app
  char line[160];
  std::snprintf(line, sizeof line,
                "\nThread 1:\n0   libsystem_kernel.dylib        0x00000001e1a2b1b0 __ulock_wait + 8\n"
                "1   %-30s0x%s 0x%llx + %llu\n",
                "Cart", hex(load + waiting).c_str(), static_cast<unsigned long long>(load),
                static_cast<unsigned long long>(waiting));
  report += line;
  report +=
      "\nBinary Images:\n       0x1e1a25000 -        0x1e1a5ffff libsystem_kernel.dylib arm64e  "
      "<11111111222233334444555555555555> /usr/lib/system/libsystem_kernel.dylib\n";
  const std::string restored = symbolicateApple(build, report);
  EXPECT_EQ(restoredFrames(restored, "Thread 0"), referenceThread(build)) << restored << report;
}

}  // namespace
}  // namespace restack

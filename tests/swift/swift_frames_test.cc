// Swift names in restored native frames: symbols stored mangled are demangled when read, from
// DWARF and from a symbol table alike. The binary is a real aarch64 .so whose functions carry
// Swift manglings as their symbol names (clang asm labels), restored by the restack binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "formats/common/temp_dir.h"
#include "formats/swift/swift_demangle.h"
#include "tests/support/run_command.h"

namespace restack {
namespace {

using test_support::runCommand;
using test_support::shellQuote;

const char* kSource = R"(__attribute__((noinline)) int hello(int x) __asm__("$s4main5helloyS2iF");
__attribute__((noinline)) int hello(int x) { return x * 3 + 1; }
__attribute__((noinline)) int closure(void) __asm__("$s4main3runyyFyycfU_");
__attribute__((noinline)) int closure(void) { return hello(4) + 2; }
__attribute__((noinline)) int broken(void) __asm__("$sSD5IndexVy__GD");
__attribute__((noinline)) int broken(void) { return closure() * 5; }
)";

TEST(SwiftFrames, MangledSymbolsAreRestoredDemangledFromDwarfAndFromTheSymbolTable) {
  ASSERT_EQ(runCommand("command -v clang-19 && command -v llvm-nm-19 && command -v llvm-strip-19").exit_code, 0)
      << "clang-19 and LLVM tools are needed: run scripts/setup.sh";
  auto dir = TempDir::create("restack-swift-frames-");
  ASSERT_TRUE(dir) << dir.error().message();
  const std::string root = dir->path();
  ASSERT_TRUE(test_support::writeTextFile(root + "/s.c", kSource));
  std::filesystem::create_directories(root + "/stripped");
  auto built = runCommand(
      "clang-19 --target=aarch64-linux-android24 -g -O2 -fPIC -ffreestanding -nostdlib -shared -fuse-ld=lld "
      "-Wl,--build-id s.c -o libswifty.so && llvm-strip-19 --strip-debug libswifty.so -o stripped/libswifty.so",
      root);
  ASSERT_EQ(built.exit_code, 0) << built.output;
  auto id = runCommand("llvm-readelf-19 -n libswifty.so | awk '/Build ID:/ { print $3 }'", root, "", false);
  auto start = runCommand("llvm-nm-19 libswifty.so | awk '/runyyFyycfU_/ { print $1 }'", root, "", false);
  auto broken = runCommand("llvm-nm-19 libswifty.so | awk '/IndexVy__GD/ { print $1 }'", root, "", false);
  ASSERT_FALSE(id.output.empty());
  ASSERT_FALSE(start.output.empty());
  ASSERT_FALSE(broken.output.empty());
  const std::string build_id = id.output.substr(0, id.output.find('\n'));
  char line[400];
  std::snprintf(line, sizeof line,
                "#00 pc 0x%016llx libswifty.so [arm64-v8a::%s]\n#01 pc 0x%016llx libswifty.so [arm64-v8a::%s]\n",
                std::stoull(start.output, nullptr, 16) + 4, build_id.c_str(),
                std::stoull(broken.output, nullptr, 16) + 8, build_id.c_str());
  ASSERT_TRUE(test_support::writeTextFile(root + "/crash.txt", line));
  // A symbol that looks Swift-mangled but is no valid mangling: the demangler refuses it.
  ASSERT_FALSE(swift::demangleSwift("$sSD5IndexVy__GD")) << "the test needs a mangling the demangler refuses";

  const std::string expected = swift::demangleSwift("$s4main3runyyFyycfU_").value_or("<not demangled>");
  ASSERT_EQ(expected, "closure #1 () -> () in main.run() -> ()");
  for (const char* symbols : {"libswifty.so", "stripped/libswifty.so"}) {
    SCOPED_TRACE(symbols);
    auto restored = runCommand(shellQuote(RESTACK_BINARY) + " symbolicate --output json --symbols " + symbols, root,
                               root + "/crash.txt", false);
    ASSERT_EQ(restored.exit_code, 0) << restored.output;
    EXPECT_NE(restored.output.find("\"function\":\"" + expected + "\""), std::string::npos) << restored.output;
    EXPECT_EQ(restored.output.find("\"function\":\"$s4main"), std::string::npos) << restored.output;
    // The refused name stays mangled and its frame says why; the restored one carries no reason
    // from DWARF, and no_line_info from the symbol table alone.
    EXPECT_NE(restored.output.find("\"reason\":\"demangle_failed\""), std::string::npos) << restored.output;
    EXPECT_NE(restored.output.find("\"function\":\"$sSD5IndexVy__GD\""), std::string::npos) << restored.output;
    EXPECT_NE(restored.output.find("left mangled"), std::string::npos) << restored.output;
    const bool stripped = std::string_view(symbols).starts_with("stripped/");
    EXPECT_EQ(restored.output.find("\"reason\":\"no_line_info\"") != std::string::npos, stripped) << restored.output;
    // The text mode lists frames restored with something missing under their reason.
    auto text =
        runCommand(shellQuote(RESTACK_BINARY) + " symbolicate --symbols " + symbols, root, root + "/crash.txt", false);
    ASSERT_EQ(text.exit_code, 0) << text.output;
    EXPECT_NE(text.output.find("\npartly restored:\n"), std::string::npos) << text.output;
    EXPECT_NE(text.output.find("\n      demangle_failed (swift name left mangled"), std::string::npos) << text.output;
    EXPECT_EQ(text.output.find("\n      no_line_info\n") != std::string::npos, stripped) << text.output;
  }
}

}  // namespace
}  // namespace restack

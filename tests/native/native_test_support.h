// Helpers for the native tests: temporary folders, running the compilers and reference tools
// (clang-19, ld.lld/ld64.lld, dsymutil-19, llvm-lipo-19, llvm-symbolizer-19), and reading
// llvm-symbolizer's JSON answers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symbolstore/ingest.h"
#include "symbolstore/native/native_resolver.h"
#include "symbolstore/store.h"

namespace restack::native_test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};
CommandResult runCommand(const std::string& command);
// Runs `command`, failing the current test (with its output) when it exits non-zero.
bool runOrFail(const std::string& command);
// True when `tool` is on PATH; otherwise fails the test naming scripts/setup.sh.
bool requireTool(const std::string& tool);
void writeFile(const std::string& path, const std::string& content);
std::string readBinary(const std::string& path);

// One frame as llvm-symbolizer prints it.
struct OracleFrame {
  std::string function;  // "" when llvm-symbolizer printed "??"
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
};
// `llvm-symbolizer-19 --inlines --output-style=JSON --obj=<object> <extra>` on every address.
std::vector<std::vector<OracleFrame>> symbolizeWithLlvm(const std::string& object,
                                                        const std::vector<uint64_t>& addresses,
                                                        const std::string& extra_arguments = "");

// Address range [begin, end) of the code section (.text / __text) of an object (for fat files:
// of the slice for `arch`).
struct CodeRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};
CodeRange codeRange(const std::string& object, const std::string& arch = "");

// A fresh store in a temporary folder.
struct TestStore {
  TempDir dir;
  std::unique_ptr<SymbolStore> store;
  TestStore();
};

// The file or folder at `path` uploaded as a worker receives it (symbolstore/ingest.h,
// ingestUpload: unpacked, its kind told from its content) for app "demo", build "1.0".
Expected<IngestReport> uploadPath(SymbolStore& store, const std::string& path);

}  // namespace restack::native_test

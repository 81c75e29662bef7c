#include "tests/native/native_test_support.h"

#include <gtest/gtest.h>
#include <llvm/Object/Binary.h>
#include <llvm/Object/MachOUniversal.h>
#include <llvm/Object/ObjectFile.h>
#include <simdjson.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace restack::native_test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "restack-native-XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  if (!made) throw std::runtime_error("mkdtemp failed");
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

CommandResult runCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool runOrFail(const std::string& command) {
  CommandResult result = runCommand(command);
  EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.output;
  return result.exit_code == 0;
}

bool requireTool(const std::string& tool) {
  bool found = runCommand("command -v " + tool).exit_code == 0;
  EXPECT_TRUE(found) << tool << " is not installed; run scripts/setup.sh (it installs clang-19, "
                     << "lld-19 and llvm-19 and links .deps/native/bin/lipo)";
  return found;
}

void writeFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

std::string readBinary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::vector<OracleFrame>> symbolizeWithLlvm(const std::string& object,
                                                        const std::vector<uint64_t>& addresses,
                                                        const std::string& extra_arguments) {
  TempDir dir;
  std::string input;
  char line[32];
  for (uint64_t address : addresses) {
    snprintf(line, sizeof(line), "0x%llx\n", static_cast<unsigned long long>(address));
    input += line;
  }
  writeFile(dir.file("addresses"), input);
  std::string command = "llvm-symbolizer-19 --inlines --output-style=JSON " + extra_arguments + " --obj='" + object +
                        "' < " + dir.file("addresses") + " > " + dir.file("out.json");
  runOrFail(command);
  std::string output = readBinary(dir.file("out.json"));
  std::vector<std::vector<OracleFrame>> answers;
  simdjson::dom::parser parser;
  std::istringstream lines(output);
  std::string json;
  while (std::getline(lines, json)) {
    if (json.empty()) continue;
    std::vector<OracleFrame> frames;
    simdjson::dom::element document;
    if (parser.parse(json).get(document) != simdjson::SUCCESS) {
      ADD_FAILURE() << "llvm-symbolizer printed non-JSON: " << json;
      answers.push_back(frames);
      continue;
    }
    simdjson::dom::array symbols;
    if (document["Symbol"].get_array().get(symbols) == simdjson::SUCCESS) {
      for (simdjson::dom::element symbol : symbols) {
        OracleFrame frame;
        std::string_view text;
        if (symbol["FunctionName"].get_string().get(text) == simdjson::SUCCESS) {
          frame.function = std::string(text);
        }
        if (symbol["FileName"].get_string().get(text) == simdjson::SUCCESS) {
          frame.file = std::string(text);
        }
        uint64_t number = 0;
        if (symbol["Line"].get_uint64().get(number) == simdjson::SUCCESS) {
          frame.line = static_cast<uint32_t>(number);
        }
        if (symbol["Column"].get_uint64().get(number) == simdjson::SUCCESS) {
          frame.column = static_cast<uint32_t>(number);
        }
        frames.push_back(frame);
      }
    }
    answers.push_back(frames);
  }
  EXPECT_EQ(answers.size(), addresses.size()) << "llvm-symbolizer answered fewer addresses";
  return answers;
}

CodeRange codeRange(const std::string& object, const std::string& arch) {
  CodeRange range;
  auto owning = llvm::object::createBinary(object);
  if (!owning) {
    ADD_FAILURE() << object << ": " << llvm::toString(owning.takeError());
    return range;
  }
  llvm::object::Binary* binary = owning->getBinary();
  std::unique_ptr<llvm::object::ObjectFile> slice;
  const llvm::object::ObjectFile* file = llvm::dyn_cast<llvm::object::ObjectFile>(binary);
  if (auto* universal = llvm::dyn_cast<llvm::object::MachOUniversalBinary>(binary)) {
    auto member = universal->getMachOObjectForArch(arch);
    if (!member) {
      ADD_FAILURE() << object << ": " << llvm::toString(member.takeError());
      return range;
    }
    slice = std::move(*member);
    file = slice.get();
  }
  for (const auto& section : file->sections()) {
    auto name = section.getName();
    if (name && (*name == ".text" || *name == "__text")) {
      range.begin = section.getAddress();
      range.end = range.begin + section.getSize();
    } else if (!name) {
      llvm::consumeError(name.takeError());
    }
  }
  return range;
}

Expected<IngestReport> uploadPath(SymbolStore& store, const std::string& path) {
  UploadMeta meta;
  meta.app = "demo";
  meta.build_id = "1.0";
  UploadContent content;
  content.path = path;
  content.display_name = std::filesystem::path(path).filename().string();
  return ingestUpload(store, meta, content, IngestOptions{});
}

TestStore::TestStore() {
  StoreOptions options;
  options.path = dir.file("store");
  options.block_cache_bytes = 16u << 20;
  auto opened = SymbolStore::open(options);
  if (!opened) throw std::runtime_error(opened.error().describe());
  store = std::move(*opened);
}

}  // namespace restack::native_test

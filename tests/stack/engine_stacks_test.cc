// The stack lines real engines print, read by the stack-line parsers and the pasted-report reader.
// tests/stack/fixtures/constructs_es5.js and constructs.js throw through each way a function is
// declared and called (accessors, classes, private and computed methods, callbacks of built-ins,
// bound functions, generators, eval, new Function, proxies) and print every error's stack; they
// run in node (V8), jsc (JavaScriptCore), hermes (Hermes) and SpiderMonkey (through PyPI's
// pythonmonkey, tests/stack/fixtures/run_spidermonkey.py), installed by scripts/setup.sh.
// Every line of those stacks but the error's own must read as a JavaScript frame, and a paste of
// the whole output must keep every frame.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "formats/common/temp_dir.h"
#include "formats/crash_report/crash_report.h"
#include "formats/stack/js_line.h"
#include "formats/stack/stack_line.h"
#include "tests/support/run_command.h"

namespace restack::stack {
namespace {

namespace fs = std::filesystem;
using test_support::outputLines;
using test_support::runCommand;
using test_support::shellQuote;

const fs::path kFixtures = fs::path(RESTACK_SOURCE_DIR) / "tests" / "stack" / "fixtures";

struct Engine {
  std::string name;
  fs::path binary;
  std::string runner;  // a script the binary runs the program through ("" = the program itself)
  bool classes;        // runs constructs.js too
  // hermes-engine-cli 0.11.0 ends with SIGSEGV here once the script is done, even after
  // `print(1)`; what it printed before is whole, which the count of stacks below checks.
  bool exits_cleanly;
};

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<Engine> engines() {
  const fs::path deps = RESTACK_DEPS_DIR;
  return {{"node", "/usr/bin/node", "", true, true},
          {"jsc", "/usr/bin/jsc", "", true, true},
          {"hermes", deps / "node" / "node_modules" / "hermes-engine-cli" / "linux64-bin" / "hermes", "", false, false},
          {"spidermonkey", deps / "spidermonkey" / "bin" / "python", (kFixtures / "run_spidermonkey.py").string(), true,
           true}};
}

// The frames the pasted-report reader keeps when `output` is pasted as one console text; 0 (and a
// test failure) when it reads no report.
size_t framesKeptInAPaste(const std::string& output) {
  auto report = crash_report::parseCrashReport(output);
  EXPECT_TRUE(report) << report.error().message();
  if (!report) return 0;
  size_t kept = 0;
  for (const auto& thread : report->threads) {
    for (const StackLine& line : parseStack(thread.stack)) kept += line.isFrame() ? 1 : 0;
  }
  return kept;
}

// Runs `program` in `engine` (through its runner, if it has one) from `work`; stderr apart.
test_support::CommandOutput runOnEngine(const Engine& engine, const fs::path& program, const fs::path& work) {
  std::string command = shellQuote(engine.binary.string());
  if (!engine.runner.empty()) command += " " + shellQuote(engine.runner);
  return runCommand(command + " " + shellQuote(program.string()), work.string(), "", /*merge_stderr=*/false);
}

// "<work>/Program Files (x86)/My App", made: a folder named as Windows names program folders.
fs::path spacedFolderIn(const fs::path& work) {
  const fs::path folder = work / "Program Files (x86)" / "My App";
  fs::create_directories(folder);
  return folder;
}

TEST(EngineStacks, EveryFrameLineOfNodeJscHermesAndSpiderMonkeyIsRead) {
  auto made = TempDir::create("restack-engine-stacks-");
  ASSERT_TRUE(made) << made.error().message();
  const fs::path work = made->path();
  const std::regex message_line(R"(^[A-Za-z]*Error(: .*)?$)");
  for (const Engine& engine : engines()) {
    SCOPED_TRACE(engine.name);
    ASSERT_TRUE(fs::exists(engine.binary)) << engine.binary << " is missing: run scripts/setup.sh";
    // One script: the constructs, then the stacks printed with the engine's own print.
    const fs::path program = work / (engine.name + ".js");
    std::string text = readFile(kFixtures / "constructs_es5.js");
    if (engine.classes) text += readFile(kFixtures / "constructs.js");
    text += "(typeof print === \"function\" ? print : console.log)(stacks.join(\"\\n\\n\"));\n";
    ASSERT_TRUE(test_support::writeTextFile(program.string(), text));
    const auto run = runOnEngine(engine, program, work);
    if (engine.exits_cleanly) ASSERT_EQ(run.exit_code, 0) << run.output;

    // Stacks are separated by blank lines (two where the engine ends a stack with a newline).
    size_t frames = 0, stacks = 0;
    bool after_blank = true;
    for (const std::string& line : outputLines(run.output)) {
      if (line.empty()) {
        after_blank = true;
        continue;
      }
      stacks += after_blank ? 1 : 0;
      after_blank = false;
      if (std::regex_match(line, message_line)) continue;
      EXPECT_EQ(parseStackLine(line).kindName(), "js_frame") << line;
      ++frames;
    }
    // Every construct threw and printed its stack, each of several frames.
    EXPECT_EQ(stacks, engine.classes ? 28u : 19u) << run.output;
    EXPECT_GE(frames, 3 * stacks) << run.output;

    // Pasted as one console text: every frame line stays in the report's stack.
    EXPECT_EQ(framesKeptInAPaste(run.output), frames) << run.output;
  }
}

// node prints a script's file path as it is: on Windows under "C:\Program Files (x86)\…", here
// under a folder named the same way. Every frame of the script reads with that whole path as its
// URL, in a line by itself and in a paste of the whole output.
TEST(EngineStacks, NodeFramesOfAScriptUnderAPathWithSpacesAndParenthesesAreRead) {
  auto made = TempDir::create("restack-engine-stacks-");
  ASSERT_TRUE(made) << made.error().message();
  const fs::path work = made->path();
  const fs::path program = spacedFolderIn(work) / "main.js";
  const std::string text = readFile(kFixtures / "constructs_es5.js") + readFile(kFixtures / "constructs.js") +
                           "console.log(stacks.join(\"\\n\\n\"));\n";
  ASSERT_TRUE(test_support::writeTextFile(program.string(), text));
  const auto run = runCommand("/usr/bin/node " + shellQuote(program.string()), work.string(), "", false);
  ASSERT_EQ(run.exit_code, 0) << run.output;

  size_t in_script = 0, frames = 0;
  for (const std::string& line : outputLines(run.output)) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 3, "at ") != 0) continue;  // an error's message
    ++frames;
    StackLine parsed = parseStackLine(line);
    ASSERT_EQ(parsed.kindName(), "js_frame") << line;
    if (line.find(program.string()) == std::string::npos) continue;
    ++in_script;
    EXPECT_EQ(asJsFrame(parsed)->url, program.string()) << line;
    EXPECT_GT(asJsFrame(parsed)->line, 0u) << line;
    EXPECT_GT(asJsFrame(parsed)->column, 0u) << line;
  }
  // Most frames are the script's own (the rest are node's and the engine's).
  EXPECT_GE(in_script, 60u) << run.output;

  EXPECT_EQ(framesKeptInAPaste(run.output), frames) << run.output;
}

// jsc and SpiderMonkey's shells print a script's file path as it is too, after the '@'
// ("inner@/opt/My App (x86)/main.js:1:35"); a frame of code made by eval names it with its
// " line <n> > eval" chain. Every frame reads, those of the script with the whole path as their URL.
TEST(EngineStacks, JscAndSpiderMonkeyFramesOfAScriptUnderAPathWithSpacesAndParenthesesAreRead) {
  auto made = TempDir::create("restack-engine-stacks-");
  ASSERT_TRUE(made) << made.error().message();
  const fs::path work = made->path();
  const fs::path folder = spacedFolderIn(work);
  const std::regex message_line(R"(^[A-Za-z]*Error(: .*)?$)");
  for (const Engine& engine : engines()) {
    if (engine.name != "jsc" && engine.name != "spidermonkey") continue;
    SCOPED_TRACE(engine.name);
    ASSERT_TRUE(fs::exists(engine.binary)) << engine.binary << " is missing: run scripts/setup.sh";
    const fs::path program = folder / (engine.name + ".js");
    const std::string text = readFile(kFixtures / "constructs_es5.js") + readFile(kFixtures / "constructs.js") +
                             "(typeof print === \"function\" ? print : console.log)(stacks.join(\"\\n\\n\"));\n";
    ASSERT_TRUE(test_support::writeTextFile(program.string(), text));
    const auto run = runOnEngine(engine, program, work);
    ASSERT_EQ(run.exit_code, 0) << run.output;

    size_t in_script = 0, frames = 0;
    for (const std::string& line : outputLines(run.output)) {
      if (line.empty() || std::regex_match(line, message_line)) continue;
      ++frames;
      StackLine parsed = parseStackLine(line);
      ASSERT_EQ(parsed.kindName(), "js_frame") << line;
      const JsFrameLine* js = asJsFrame(parsed);
      if (line.find(program.string()) == std::string::npos || js->is_eval) continue;
      ++in_script;
      EXPECT_EQ(js->url, program.string()) << line;
      EXPECT_GT(js->line, 0u) << line;
      EXPECT_GT(js->column, 0u) << line;
    }
    EXPECT_GE(in_script, 60u) << run.output;
    EXPECT_EQ(framesKeptInAPaste(run.output), frames) << run.output;
  }
}

}  // namespace
}  // namespace restack::stack

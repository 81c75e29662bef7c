// `restack symbolicate` on pasted crash text, checked against the truth: the same program run
// without obfuscation or bundling. Nothing here writes an expected stack by hand; the original
// run prints it.
//   - Java: classes compiled by javac and obfuscated by ProGuard 7; both jars throw for real and
//     the JVM prints the uncaught exception; the obfuscated trace, restored with the mapping,
//     must read as the original trace.
//   - JavaScript: ES modules run by node, and the same modules bundled and minified by esbuild;
//     the bundle's V8 stack, restored with its source map, must give the original run's files,
//     lines and columns.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
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

const std::string kDepsDir = RESTACK_DEPS_DIR;

std::string trimmed(std::string line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.erase(0, 1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

// The restored stack of thread 0 in `restack symbolicate`'s text output: the lines between the
// "Thread 0…" header and the blank line after it.
std::vector<std::string> restoredThread(const std::string& output) {
  std::vector<std::string> out;
  bool in = false;
  for (const std::string& line : lines(output)) {
    if (!in) {
      in = line.starts_with("Thread 0");
      continue;
    }
    if (line.empty()) break;
    out.push_back(trimmed(line));
  }
  return out;
}

// Runs `restack symbolicate ARGUMENTS` in `dir` with `stdin_file` pasted on its input.
std::string restack(const std::string& dir, const std::string& arguments, const std::string& stdin_file) {
  auto ran = runCommand(shellQuote(RESTACK_BINARY) + " symbolicate " + arguments, dir, stdin_file, false);
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  return ran.output;
}

const char* kCartJava = R"(package com.shop.cart;

public class Cart {
  private final int[] prices;
  public Cart(int[] prices) { this.prices = prices; }
  public int total(String code) {
    int sum = 0;
    for (int price : prices) sum += price;
    return sum - Discounts.forCode(code).apply(sum);
  }
}
)";
const char* kDiscountsJava = R"(package com.shop.cart;

public class Discounts {
  interface Rule { int apply(int sum); }
  static Rule forCode(String code) {
    if (code.startsWith("PCT")) {
      int percent = Integer.parseInt(code.substring(3));
      return sum -> sum * percent / 100;
    }
    throw new IllegalArgumentException("unknown discount code " + code);
  }
}
)";
const char* kMainJava = R"(package com.shop;

import com.shop.cart.Cart;

public class Main {
  public static void main(String[] args) {
    Cart cart = new Cart(new int[] {1250, 399});
    try {
      System.out.println(cart.total(args[0]));
    } catch (RuntimeException e) {
      throw new IllegalStateException("checkout failed", e);
    }
  }
}
)";

TEST(SymbolicateText, AnObfuscatedJavaCrashReadsAsTheOriginalRun) {
  const std::string proguard = kDepsDir + "/proguard/lib";
  ASSERT_TRUE(std::filesystem::exists(proguard)) << proguard << " is missing: run scripts/setup.sh";
  ASSERT_EQ(runCommand("command -v javac && command -v java && command -v jar").exit_code, 0)
      << "javac, java and jar are needed: run scripts/setup.sh";
  auto dir = TempDir::create("restack-symbolicate-java-");
  ASSERT_TRUE(dir) << dir.error().message();
  const std::string root = dir->path();
  writeTextFile(root + "/src/com/shop/cart/Cart.java", kCartJava);
  writeTextFile(root + "/src/com/shop/cart/Discounts.java", kDiscountsJava);
  writeTextFile(root + "/src/com/shop/Main.java", kMainJava);
  writeTextFile(root + "/proguard.pro",
                "-injars in.jar\n-outjars out.jar\n"
                "-libraryjars <java.home>/jmods/java.base.jmod(!**.jar;!module-info.class)\n"
                "-keep class com.shop.Main { public static void main(java.lang.String[]); }\n"
                "-dontoptimize\n-keepattributes SourceFile,LineNumberTable\n"
                "-renamesourcefileattribute SourceFile\n-printmapping mapping.txt\n");
  auto built = runCommand(
      "javac --release 17 -g -d classes $(find src -name '*.java') && jar cf in.jar -C classes . && java -cp " +
          shellQuote(proguard + "/*") + " proguard.ProGuard @proguard.pro",
      root);
  ASSERT_EQ(built.exit_code, 0) << built.output;

  // Two crashes: one thrown inside the app's own code, one inside the JDK (parseInt) below it.
  for (const char* code : {"SUMMER", "PCTx"}) {
    SCOPED_TRACE(code);
    auto original = runCommand(std::string("java -cp in.jar com.shop.Main ") + code, root);
    auto obfuscated = runCommand(std::string("java -cp out.jar com.shop.Main ") + code, root);
    ASSERT_NE(original.exit_code, 0) << original.output;
    ASSERT_NE(obfuscated.exit_code, 0) << obfuscated.output;
    ASSERT_NE(original.output, obfuscated.output) << "ProGuard left the names as they were";
    writeTextFile(root + "/pasted.txt", obfuscated.output);
    const std::string output = restack(root, "--symbols mapping.txt", root + "/pasted.txt");

    std::vector<std::string> expected;
    for (const std::string& line : lines(original.output)) expected.push_back(trimmed(line));
    std::vector<std::string> restored = restoredThread(output);
    // The JVM prints the source file of every frame; the obfuscated build keeps "SourceFile"
    // and the mapping restores the class, so the file of app frames is derived from the class.
    EXPECT_EQ(restored, expected) << "restack printed:\n" << output << "\noriginal run:\n" << original.output;
  }
}

const char* kMoneyJs = R"(export function formatMoney(line) {
  const cents = line.price.amount * line.quantity;
  return (cents / 100).toFixed(2);
}
)";
const char* kCartJs = R"(import { formatMoney } from "./money.mjs";

export class CartView {
  constructor(lines) {
    this.lines = lines;
  }
  render() {
    return this.lines.map((line) => formatMoney(line)).join("\n");
  }
}
)";
const char* kMainJs = R"(import { CartView } from "./cart.mjs";

function checkout(lines) {
  const view = new CartView(lines);
  return view.render();
}

try {
  checkout([{ price: { amount: 1250 }, quantity: 1 }, { quantity: 2 }]);
} catch (error) {
  console.log(error.stack);
}
)";

// "    at fn (file:///x/src/money.mjs:2:27)" -> "money.mjs:2:27"; frames without a position are skipped.
std::vector<std::string> positions(const std::vector<std::string>& stack) {
  std::vector<std::string> out;
  for (const std::string& line : stack) {
    if (!line.starts_with("at ")) continue;
    // A frame not restored (here node's own modules, built into node) is printed as it was,
    // with why after it.
    std::string location = line.substr(0, line.find("  (not restored: "));
    if (location.ends_with(")")) {
      location = location.substr(location.rfind('(') + 1);
      location.pop_back();
    } else {
      location = location.substr(location.rfind(' ') + 1);
    }
    size_t slash = location.rfind('/');
    if (slash != std::string::npos) location = location.substr(slash + 1);
    if (location.find(':') == std::string::npos) continue;  // "<anonymous>"
    out.push_back(location);
  }
  return out;
}

// What node printed running the ES modules and their esbuild bundle, and what restack printed
// for the bundle's output pasted with the bundle's map.
struct BundleRun {
  std::string original;
  std::string restored;
};

// Writes `sources` (file name under src/, text) into a fresh folder, bundles src/main.mjs with
// esbuild (minified, with a source map), runs both with node and restores the bundle's output.
// `inline_map`: the map is inlined in the bundle (esbuild --sourcemap=inline), which is the one
// file uploaded.
void runBundleAndRestore(const std::vector<std::pair<std::string, const char*>>& sources, BundleRun& run,
                         bool inline_map = false) {
  const std::string esbuild = kDepsDir + "/node/node_modules/.bin/esbuild";
  ASSERT_TRUE(std::filesystem::exists(esbuild)) << esbuild << " is missing: run scripts/setup.sh";
  ASSERT_EQ(runCommand("command -v node").exit_code, 0) << "node is needed: run scripts/setup.sh";
  auto dir = TempDir::create("restack-symbolicate-js-");
  ASSERT_TRUE(dir) << dir.error().message();
  const std::string root = dir->path();
  for (const auto& [name, text] : sources) writeTextFile(root + "/src/" + name, text);
  auto built =
      runCommand(shellQuote(esbuild) + " src/main.mjs --bundle --minify --format=esm " +
                     (inline_map ? "--sourcemap=inline" : "--sourcemap") + " --outfile=dist/app.mjs --log-level=error",
                 root);
  ASSERT_EQ(built.exit_code, 0) << built.output;
  auto original = runCommand("node src/main.mjs", root);
  auto bundled = runCommand("node dist/app.mjs", root);
  ASSERT_EQ(original.exit_code, 0) << original.output;
  ASSERT_EQ(bundled.exit_code, 0) << bundled.output;
  writeTextFile(root + "/pasted.txt", bundled.output);
  run.original = original.output;
  if (inline_map) {
    ASSERT_FALSE(std::filesystem::exists(root + "/dist/app.mjs.map"));
    run.restored = restack(root, "--symbols dist/app.mjs", root + "/pasted.txt");
  } else {
    run.restored = restack(root, "--symbols dist/app.mjs.map --name app.mjs", root + "/pasted.txt");
  }
}

TEST(SymbolicateText, AMinifiedBundleStackReadsAsTheOriginalRun) {
  BundleRun run;
  runBundleAndRestore({{"money.mjs", kMoneyJs}, {"cart.mjs", kCartJs}, {"main.mjs", kMainJs}}, run);
  if (HasFatalFailure()) return;
  const std::string& output = run.restored;
  ASSERT_NE(run.original.find("TypeError"), std::string::npos) << run.original;

  std::vector<std::string> expected_stack;
  for (const std::string& line : lines(run.original)) expected_stack.push_back(trimmed(line));
  const std::vector<std::string> restored = restoredThread(output);
  const std::vector<std::string> expected = positions(expected_stack);
  ASSERT_GE(expected.size(), 4u) << run.original;
  EXPECT_EQ(positions(restored), expected) << "restack printed:\n" << output << "\noriginal run:\n" << run.original;
  // The message line is the engine's, untouched.
  EXPECT_NE(output.find(expected_stack.front()), std::string::npos) << output;
  // Node's own frames are built into node: the text and the listing below it give the same reason.
  const std::string reason = "not restored: runtime_code";
  EXPECT_NE(output.find(")  (" + reason + ")\n"), std::string::npos) << output;
  EXPECT_NE(output.find("\nnot restored:\n"), std::string::npos) << output;
  EXPECT_NE(output.find("\n      " + reason + " (node built-in module)\n"), std::string::npos) << output;
}

// A bundle that carries its source map inline (a data: URL in its last sourceMappingURL comment,
// as webpack's inline-source-map, esbuild --sourcemap=inline and terser url=inline write it) is
// uploaded alone and restores as the original run; before, it waited for a map never uploaded.
TEST(SymbolicateText, ABundleWithItsSourceMapInlineRestoresAsTheOriginalRun) {
  BundleRun run;
  runBundleAndRestore({{"money.mjs", kMoneyJs}, {"cart.mjs", kCartJs}, {"main.mjs", kMainJs}}, run,
                      /*inline_map=*/true);
  if (HasFatalFailure()) return;
  std::vector<std::string> expected_stack;
  for (const std::string& line : lines(run.original)) expected_stack.push_back(trimmed(line));
  const std::vector<std::string> expected = positions(expected_stack);
  ASSERT_GE(expected.size(), 4u) << run.original;
  EXPECT_EQ(positions(restoredThread(run.restored)), expected) << "restack printed:\n"
                                                               << run.restored << "\noriginal run:\n"
                                                               << run.original;
  EXPECT_EQ(run.restored.find("missing_symbols"), std::string::npos) << run.restored;
}

const char* kJobsJs = R"(export async function loadAll(ids) {
  const jobs = await Promise.all(ids.map((id) => loadOne(id)));
  return jobs;
}

async function loadOne(id) {
  await null;
  if (id < 0) throw new RangeError("no job " + id);
  return { id };
}
)";
const char* kJobsMainJs = R"(import { loadAll } from "./jobs.mjs";

class Queue {
  constructor(ids) { this.ids = ids; }
  async drain() {
    const done = await loadAll(this.ids);
    return done.length;
  }
}

try {
  await new Queue([3, -4]).drain();
} catch (error) {
  console.log(error.stack);
}
)";

// An async stack as V8 prints it: frames of async functions after an await ("at async fn"), and
// the Promise combinator waiting on the element that failed ("at async Promise.all (index 1)"),
// which has no position. Every frame of the original run is printed, in its order, and every
// frame with a position gets the original's file, line and column.
TEST(SymbolicateText, AnAsyncBundleStackKeepsEveryFrameOfTheOriginalRun) {
  BundleRun run;
  runBundleAndRestore({{"jobs.mjs", kJobsJs}, {"main.mjs", kJobsMainJs}}, run);
  if (HasFatalFailure()) return;
  const std::string& output = run.restored;

  std::vector<std::string> expected_frames;
  for (const std::string& line : lines(run.original)) {
    if (trimmed(line).starts_with("at ")) expected_frames.push_back(trimmed(line));
  }
  std::vector<std::string> restored_frames;
  for (const std::string& line : restoredThread(output)) {
    if (line.starts_with("at ")) restored_frames.push_back(line);
  }
  // The run printed what this test is about.
  const std::string combinator = "at async Promise.all (index 1)";
  ASSERT_NE(std::find(expected_frames.begin(), expected_frames.end(), combinator), expected_frames.end())
      << run.original;
  ASSERT_GE(positions(expected_frames).size(), 3u) << run.original;
  EXPECT_EQ(restored_frames.size(), expected_frames.size()) << "restack printed:\n"
                                                            << output << "\noriginal run:\n"
                                                            << run.original;
  EXPECT_EQ(positions(restored_frames), positions(expected_frames)) << "restack printed:\n"
                                                                    << output << "\noriginal run:\n"
                                                                    << run.original;
  EXPECT_NE(std::find(restored_frames.begin(), restored_frames.end(), combinator), restored_frames.end()) << output;
  // Engine code counts as restored: nothing is listed as not restored.
  EXPECT_EQ(output.find("not restored:"), std::string::npos) << output;
}

// A program that throws through the shapes of frame V8 prints: methods, getters and setters,
// private methods, constructors, eval and new Function, engine code (Array.map, JSON.parse,
// Reflect.apply, a Proxy trap), generators, bound and computed names, async functions after an
// await, the Promise combinators' elements, for-await and timers.
const char* kFrameShapesJs = R"js(const stacks = [];
const grab = (f) => { try { f(); } catch (e) { stacks.push(e.stack); } };
const grabAsync = async (f) => { try { await f(); } catch (e) { stacks.push(e.stack); } };
function boom() { throw new Error("boom"); }
class Shape {
  constructor(fail) { if (fail) boom(); }
  get area() { return boom(); }
  set area(v) { boom(); }
  static make() { boom(); }
  #secret() { boom(); }
  reveal() { this.#secret(); }
}
grab(() => new Shape().area);
grab(() => { new Shape().area = 1; });
grab(() => Shape.make());
grab(() => new Shape().reveal());
grab(() => new Shape(true));
grab(() => eval("boom()"));
grab(() => new Function("boom", "boom()")(boom));
grab(() => [1].map(boom));
grab(() => JSON.parse("{\"a\":1}", () => boom()));
grab(() => new Proxy({}, { get: boom }).x);
grab(() => { function* steps() { boom(); } steps().next(); });
grab(() => Reflect.apply(boom, null, []));
grab(() => boom.bind(null)());
grab(() => ({ ["comp" + "uted"]() { boom(); } }).computed());
grab(() => [...{ [Symbol.iterator]() { boom(); } }]);
await grabAsync(async () => { await null; boom(); });
await grabAsync(async () => { await Promise.all([1, (async () => { await null; boom(); })()]); });
await grabAsync(() => Promise.any([(async () => { await null; boom(); })()]).catch((e) => { throw e.errors[0]; }));
await grabAsync(async () => { for await (const x of (async function* feed() { await null; boom(); })()) {} });
await grabAsync(() => new Promise((resolve, reject) => setTimeout(() => { try { boom(); } catch (e) { reject(e); } }, 1)));
for (const stack of stacks) console.log(stack);
)js";

// Every frame line node prints for those shapes is read as a frame: none comes back unparsed,
// so none is lost to grouping or shown as something Restack could not read.
TEST(SymbolicateText, EveryFrameShapeV8PrintsIsReadAsAFrame) {
  ASSERT_EQ(runCommand("command -v node").exit_code, 0) << "node is needed: run scripts/setup.sh";
  auto dir = TempDir::create("restack-symbolicate-shapes-");
  ASSERT_TRUE(dir) << dir.error().message();
  const std::string root = dir->path();
  writeTextFile(root + "/shapes.mjs", kFrameShapesJs);
  auto ran = runCommand("node shapes.mjs", root);
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  size_t frames = 0;
  for (const std::string& line : lines(ran.output)) frames += trimmed(line).starts_with("at ") ? 1 : 0;
  ASSERT_GE(frames, 60u) << ran.output;
  ASSERT_NE(ran.output.find("at async Promise.all (index 1)"), std::string::npos) << ran.output;
  writeTextFile(root + "/pasted.txt", ran.output);
  const std::string output = restack(root, "", root + "/pasted.txt");
  size_t printed = 0;
  for (const std::string& line : restoredThread(output)) printed += line.starts_with("at ") ? 1 : 0;
  EXPECT_EQ(printed, frames) << output;
  EXPECT_EQ(output.find("unparsed"), std::string::npos) << output;
}

}  // namespace
}  // namespace restack

// A generated corpus of real JavaScript errors with known true groups, through Restack's pipeline.
//
// The test writes an app of `kSites` crash sites (each a chain of three functions in one of
// `kFeatures` modules, ending in one of seven kinds of error: a TypeError on null, an app
// RangeError, a custom Error subclass, a SyntaxError thrown by the builtin JSON.parse, a
// ReferenceError inside an arrow run by Array.forEach, an error thrown inside a real npm library
// bundled with the app: acorn's parser or @jridgewell/trace-mapping), reached through `kPaths`
// route modules. The seventh kind has no chain: two arrows per module, run later by a timer,
// setImmediate or a microtask (one per path), each calling into a library that throws, so the
// two arrows of a module share every app frame and differ only in the library code below them.
// It bundles the app with four bundlers: esbuild --minify, esbuild --minify --target=es2017 with
// other output names, an unminified esbuild bundle minified by terser (the map chained through
// terser, sources included), webpack 5 in production mode (terser inside) and rollup 4 with its
// terser plugin; each of esbuild, webpack and rollup also without sourcesContent, and behind a
// separately built prelude in one file described by an index map. Every build runs every
// (site, path) in one node process; each error's V8 stack becomes a raw web event restored
// against that build's map.
//
// The true group is the site the program printed with the error; nothing writes an expected
// fingerprint. The table it prints is the one in docs/grouping.md.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tests/grouping_e2e/e2e_support.h"

namespace restack::grouping_e2e {
namespace {

constexpr int kFeatures = 20;
constexpr int kKinds = 7;
constexpr int kSites = kFeatures * kKinds * 2;
constexpr int kPaths = 3;
constexpr int kLibraryKind = 5;   // the site's chain calls a library that throws inside it
constexpr int kCallbackKind = 6;  // an arrow run later calls a library that throws inside it
// A map without sourcesContent restores no function names by itself (its frames would be keyed
// by original position, docs/grouping.md "JavaScript keys", and split from the builds with
// sources); the minified file uploaded beside it names them (sourcemap_minified.h), so those
// builds are counted in the targets like the others.
constexpr bool kCountBuildsWithoutSourcesContent = true;
const char* kKindNames[kKinds] = {"null property",    "app RangeError", "custom error",           "JSON.parse",
                                  "arrow in forEach", "npm library",    "npm library in callback"};

int kindOf(int site) {
  return (site / kFeatures) % kKinds;
}

// Every body holds the site's number: a minifier keeps one copy of identical functions (webpack's
// did for 40 sites of one kind each), and their crashes then really share one location.
// A call into real library code that throws there, one of five by `variant`: acorn's parse,
// parseExpressionAt and tokenizer (SyntaxErrors raised from different parser paths), and
// @jridgewell/trace-mapping's originalPositionFor (an Error it throws itself) and TraceMap (the
// builtin JSON.parse throwing under its constructor). `x` is the site's argument; `n` its number.
std::string libraryCall(int variant, const std::string& x, const std::string& n) {
  switch (variant % 5) {
    case 0:
      return "parse(\"let let = \" + " + x + " + \";" + n + "\", { ecmaVersion: 2022 }).body.length";
    case 1:
      return "parseExpressionAt(\"(\" + " + x + " + \" + " + n + " +\", 0, { ecmaVersion: 2022 }).end";
    case 2:
      return "[...tokenizer(\"a = '\" + " + x + " + \"" + n + "\", { ecmaVersion: 2022 })].length";
    case 3:
      return "originalPositionFor(new TraceMap(kMap), { line: " + x + " - " + x + ", column: " + n + " }).line";
    default:
      return "new TraceMap(\"{bad\" + " + x + " + \"" + n + "\").version";
  }
}

// The two arrows of module `k` run later (kCallbackKind): the same app frames, two library
// throwers. Even modules: trace-mapping's originalPositionFor and generatedPositionFor (the same
// Error type and message, thrown by different functions); odd modules: acorn's parse and
// TraceMap's JSON.parse (both SyntaxErrors).
std::string callbackCall(int k, int arrow, const std::string& n) {
  if (k % 2 == 0 && arrow == 1) {
    return "generatedPositionFor(new TraceMap(kMap), { source: \"a.js\", line: x - x, column: " + n + " }).line";
  }
  return libraryCall(k % 2 == 0 ? 3 : (arrow == 0 ? 0 : 4), "x", n);
}

std::string crashBody(int site) {
  const std::string n = std::to_string(site);
  switch (kindOf(site)) {
    case 0:
      return "const holder = x > -1 ? null : {};\n  return holder.value + " + n + ";";
    case 1:
      return "throw new RangeError(\"range \" + x + \" at " + n + "\");";
    case 2:
      return "throw new AppError(\"site \" + x + \" at " + n + "\");";
    case 3:
      return "return JSON.parse(\"{bad\" + x + \"" + n + "\");";
    case kLibraryKind:
      return "return " + libraryCall(site % kFeatures + site / (kFeatures * kKinds), "x", n) + " + " + n + ";";
    default:
      return "[x].forEach((v) => {\n    missingFunction" + n + "(v);\n  });\n  return 0;";
  }
}

std::map<std::string, std::string> appSources() {
  std::map<std::string, std::string> files;
  files["src/prelude.js"] =
      "globalThis.appStartedAt = Date.now();\nglobalThis.describeApp = function describeApp() {\n"
      "  return \"shop \" + globalThis.appStartedAt;\n};\n";
  files["src/errors.js"] =
      "export class AppError extends Error {\n  constructor(message) {\n    super(message);\n"
      "    this.name = \"AppError\";\n  }\n}\n";
  for (int k = 0; k < kFeatures; ++k) {
    std::ostringstream js;
    js << "import { AppError } from \"../errors.js\";\n"
       << "import { parse, parseExpressionAt, tokenizer } from \"acorn\";\n"
       << "import { TraceMap, originalPositionFor, generatedPositionFor } from \"@jridgewell/trace-mapping\";\n"
       << "const kMap = { version: 3, sources: [\"a.js\"], names: [], mappings: \"AAAA\" };\n";
    std::vector<std::string> tasks;
    for (int site = k; site < kSites; site += kFeatures) {
      if (kindOf(site) == kCallbackKind) {
        tasks.push_back("(x) => " + callbackCall(k, int(tasks.size()), std::to_string(site)));
        continue;
      }
      js << "function site" << site << "(x) {\n  " << crashBody(site) << "\n}\n"
         << "function step" << site << "(x) {\n  return site" << site << "(x - 1) + 1;\n}\n"
         << "export function entry" << site << "(x) {\n  return step" << site << "(x + 1) * 2;\n}\n";
    }
    // Array elements: V8 and the maps give them no name.
    js << "export const tasks = [\n";
    for (const std::string& task : tasks) js << "  " << task << ",\n";
    js << "];\n";
    files["src/features/feature" + std::to_string(k) + ".js"] = js.str();
  }
  std::ostringstream router;
  for (int k = 0; k < kFeatures; ++k) router << "import * as f" << k << " from \"./features/feature" << k << ".js\";\n";
  router << "export function go(site, x) {\n  switch (site) {\n";
  for (int site = 0; site < kSites; ++site) {
    if (kindOf(site) == kCallbackKind) continue;
    router << "    case " << site << ": return f" << site % kFeatures << ".entry" << site << "(x);\n";
  }
  router << "    default: return 0;\n  }\n}\n";
  // The arrow a site runs later (null: the site is reached through go()).
  router << "export function task(site) {\n  switch (site) {\n";
  for (int site = 0; site < kSites; ++site) {
    if (kindOf(site) != kCallbackKind) continue;
    router << "    case " << site << ": return f" << site % kFeatures << ".tasks[" << site / (kFeatures * kKinds)
           << "];\n";
  }
  router << "    default: return null;\n  }\n}\n";
  files["src/router.js"] = router.str();
  for (int p = 0; p < kPaths; ++p) {
    std::ostringstream route;
    route << "import { go } from \"../router.js\";\n"
          << "function prepare" << p << "(site) {\n  return go(site, " << p << ") + 1;\n}\n"
          << "export function open" << p << "(site) {\n  return "
          << (p % 2 ? "prepare" + std::to_string(p) + "(site)" : "go(site, " + std::to_string(p) + ")") << " + 2;\n}\n";
    files["src/routes/route" + std::to_string(p) + ".js"] = route.str();
  }
  std::ostringstream main;
  for (int p = 0; p < kPaths; ++p) main << "import { open" << p << " } from \"./routes/route" << p << ".js\";\n";
  main << "import { task } from \"./router.js\";\n";
  // V8 keeps 10 frames by default: acorn's parser alone is deeper than that, and such an event
  // would hold no app frame at all (SDKs for node raise the limit the same way).
  main << "Error.stackTraceLimit = 50;\n";
  main << "const routes = [";
  for (int p = 0; p < kPaths; ++p) main << (p ? ", " : "") << "open" << p;
  // The deferred arrows run one at a time, each path through its own scheduler: a timer,
  // setImmediate, a microtask. Their stacks hold only the arrow, the library below it and the
  // callback here.
  main
      << "];\nfunction report(site, path, error) {\n"
      << "  console.log(JSON.stringify(error ? { site, path, name: error.name, message: error.message, stack: "
         "error.stack }\n    : { site, path, name: \"\", message: \"no error\", stack: \"\" }));\n}\n"
      << "const schedulers = [(run) => setTimeout(run, 0), (run) => setImmediate(run), (run) => queueMicrotask(run)];\n"
      << "const deferred = [];\n"
      << "for (let site = 0; site < " << kSites << "; ++site) {\n"
      << "  const later = task(site);\n"
      << "  for (let path = 0; path < routes.length; ++path) {\n"
      << "    if (later) {\n      deferred.push([site, path, later]);\n      continue;\n    }\n"
      << "    try {\n      routes[path](site);\n      report(site, path, null);\n"
      << "    } catch (error) {\n      report(site, path, error);\n    }\n  }\n}\n"
      << "let chain = Promise.resolve();\n"
      << "for (const [site, path, later] of deferred) {\n"
      << "  chain = chain.then(() => new Promise((done) => schedulers[path](() => {\n"
      << "    try {\n      later(site);\n      report(site, path, null);\n"
      << "    } catch (error) {\n      report(site, path, error);\n    }\n    done();\n  })));\n}\n";
  files["src/main.js"] = main.str();
  return files;
}

// The text of a bundle without its sourceMappingURL comment, and its line count.
std::string withoutMapComment(const std::string& text, size_t& lines) {
  std::string out = text.substr(0, text.rfind("//# sourceMappingURL="));
  if (!out.empty() && out.back() != '\n') out += '\n';
  lines = size_t(std::count(out.begin(), out.end(), '\n'));
  return out;
}

// cat/<name> = prelude/prelude.js + the bundle `app` (relative to `folder`), with an index map
// of two sections.
void indexMapBuild(const std::string& folder, const std::string& app_path, const std::string& name) {
  size_t prelude_lines = 0, app_lines = 0;
  const std::string prelude = withoutMapComment(readFile(folder + "/prelude/prelude.js"), prelude_lines);
  const std::string app = withoutMapComment(readFile(folder + "/" + app_path), app_lines);
  writeFile(folder + "/cat/" + name, prelude + app + "//# sourceMappingURL=" + name + ".map\n");
  writeFile(folder + "/cat/" + name + ".map",
            R"({"version":3,"file":")" + name + R"(","sections":[{"offset":{"line":0,"column":0},"map":)" +
                readFile(folder + "/prelude/prelude.js.map") + R"(},{"offset":{"line":)" +
                std::to_string(prelude_lines) + R"(,"column":0},"map":)" + readFile(folder + "/" + app_path + ".map") +
                "}]}");
}

// webpack 5 through its Node API (no webpack-cli): production mode minifies with its bundled
// terser plugin; `devtool` "source-map" keeps sourcesContent, "nosources-source-map" drops it.
const char* kWebpackScript = R"(const path = require("path");
const webpack = require(process.argv[2]);
webpack({
  mode: "production",
  target: "node",
  context: path.resolve(".."),
  entry: "./src/main.js",
  devtool: process.argv[3],
  output: { path: path.resolve("dist"), filename: process.argv[4] },
}, (error, stats) => {
  if (error || stats.hasErrors()) {
    console.error(error || stats.toString("errors-only"));
    process.exit(1);
  }
});
)";

// The npm packages the app imports, copied from .deps/node into the app's own node_modules (where
// esbuild and webpack find them), with the ES module file each one's "import" export names.
const std::pair<const char*, const char*> kLibraries[] = {
    {"acorn", "dist/acorn.mjs"},
    {"@jridgewell/trace-mapping", "dist/trace-mapping.mjs"},
    {"@jridgewell/sourcemap-codec", "dist/sourcemap-codec.mjs"},
    {"@jridgewell/resolve-uri", "dist/resolve-uri.mjs"},
};

// rollup 4 with @rollup/plugin-terser; ROLLUP_NO_SOURCES drops sourcesContent. A resolver of five
// lines stands in for @rollup/plugin-node-resolve: the packages are ES modules.
std::string rollupConfig(const std::string& modules) {
  std::string entries;
  for (const auto& [name, file] : kLibraries) {
    entries += std::string(entries.empty() ? "" : ", ") + "\"" + name + "\": \"" + name + "/" + file + "\"";
  }
  return "import terser from \"" + modules +
         "@rollup/plugin-terser/dist/es/index.js\";\n"
         "import { fileURLToPath } from \"node:url\";\n"
         "const packages = { " +
         entries +
         " };\n"
         "const npm = { name: \"npm\", resolveId(id) {\n"
         "  return packages[id] ? fileURLToPath(new URL(\"./node_modules/\" + packages[id], import.meta.url)) : null;\n"
         "} };\n"
         "export default {\n  input: \"../src/main.js\",\n"
         "  output: { file: process.env.ROLLUP_OUT, format: \"es\", sourcemap: true,\n"
         "            sourcemapExcludeSources: process.env.ROLLUP_NO_SOURCES === \"1\" },\n"
         "  plugins: [npm, terser()],\n};\n";
}

std::string hashedFrames(const Outcome& outcome) {
  std::string out = outcome.source + " " + outcome.quality + " " + outcome.exception_type;
  for (const std::string& frame : outcome.frames) out += " | " + frame;
  return out;
}

TEST(JsCorpus, RealBundlesGroupByCrashSite) {
  if (!requireTool("node")) return;
  const std::string bin = kDepsDir + "/node/node_modules/.bin/";
  ASSERT_TRUE(std::filesystem::exists(bin + "esbuild")) << bin << ": run scripts/setup.sh";
  ASSERT_TRUE(std::filesystem::exists(bin + "terser")) << bin << ": run scripts/setup.sh";
  auto dir = TempDir::create("restack-grouping-js-corpus-");
  ASSERT_TRUE(dir) << dir.error().message();
  const std::string root = dir->path();
  for (const auto& [path, text] : appSources()) writeFile(root + "/" + path, text);
  for (const auto& [name, file] : kLibraries) {
    const std::string from = kDepsDir + "/node/node_modules/" + name;
    ASSERT_TRUE(std::filesystem::exists(from + "/" + file)) << from << ": run scripts/setup.sh";
    std::filesystem::create_directories(std::filesystem::path(root + "/node_modules/" + name).parent_path());
    std::error_code error;
    std::filesystem::copy(from, root + "/node_modules/" + name, std::filesystem::copy_options::recursive, error);
    ASSERT_FALSE(error) << from << ": " << error.message();
  }

  const std::string bundlers = kDepsDir + "/bundlers/node_modules/";
  ASSERT_TRUE(std::filesystem::exists(bundlers + "webpack")) << bundlers << ": run scripts/setup.sh";
  ASSERT_TRUE(std::filesystem::exists(bundlers + ".bin/rollup")) << bundlers << ": run scripts/setup.sh";
  writeFile(root + "/webpack.js", kWebpackScript);
  writeFile(root + "/rollup.config.mjs", rollupConfig(bundlers));

  struct Build {
    std::string name;
    std::string bundle;  // the file node runs, relative to the build folder
    std::string command;
    bool with_sources = true;  // false: the map has no sourcesContent (kCountBuildsWithoutSourcesContent)
    std::string index_map_of;  // set: `bundle` is the prelude + this bundle under an index map
  };
  const std::string esbuild = "'" + bin + "esbuild' ../src/main.js --bundle --format=esm --log-level=error ";
  // The prelude of the index-map builds: built apart, concatenated in front of the app.
  const std::string prelude =
      "'" + bin + "esbuild' ../src/prelude.js --minify --sourcemap --log-level=error --outfile=prelude/prelude.js && ";
  const std::string webpack = "node ../webpack.js '" + bundlers + "webpack' ";
  const std::string rollup = "ROLLUP_OUT=out/app.mjs '" + bundlers + ".bin/rollup' --silent -c ../rollup.config.mjs";
  const std::vector<Build> builds = {
      {"esbuild", "out/app.mjs", esbuild + "--minify --sourcemap --outfile=out/app.mjs", true, ""},
      {"esbuild-es2017", "dist/bundle-es2017.mjs",
       esbuild + "--minify --target=es2017 --sourcemap --outfile=dist/bundle-es2017.mjs", true, ""},
      {"terser", "min/main.min.mjs",
       esbuild + "--sourcemap --outfile=plain/main.mjs && mkdir -p min && '" + bin +
           "terser' plain/main.mjs --module --compress --mangle --source-map "
           "\"content='plain/main.mjs.map',includeSources,url='main.min.mjs.map'\" -o min/main.min.mjs",
       true, ""},
      // An index map: a separately built prelude and the minified app concatenated into one
      // file, the map a "sections" map with one section per part (indexMapBuild above).
      {"esbuild-index-map", "cat/app.mjs", prelude + esbuild + "--minify --sourcemap --outfile=out/app.mjs", true,
       "out/app.mjs"},
      // A map without sourcesContent: function names come from the minified file uploaded beside it.
      {"esbuild-no-sources", "out/app.mjs",
       esbuild + "--minify --sourcemap --sources-content=false --outfile=out/app.mjs", false, ""},
      // webpack: sources under "webpack://<namespace>/./src/…", a CommonJS-style runtime.
      {"webpack", "dist/main.js", webpack + "source-map main.js", true, ""},
      {"webpack-no-sources", "dist/main.js", webpack + "nosources-source-map main.js", false, ""},
      {"webpack-index-map", "cat/bundle.js", prelude + webpack + "source-map main.js", true, "dist/main.js"},
      // rollup: scope hoisting into one ES module, minified by its terser plugin.
      {"rollup", "out/app.mjs", rollup, true, ""},
      {"rollup-no-sources", "out/app.mjs", "ROLLUP_NO_SOURCES=1 " + rollup, false, ""},
      {"rollup-index-map", "cat/app.mjs", prelude + rollup, true, "out/app.mjs"},
  };

  auto pipeline = Pipeline::create();
  ASSERT_NE(pipeline, nullptr);
  // RESTACK_CORPUS_DUMP=<file>: every event of a library kind, raw and restored, to study a split.
  const char* dump_path = std::getenv("RESTACK_CORPUS_DUMP");
  FILE* dump = dump_path ? std::fopen(dump_path, "w") : nullptr;
  CorpusTally tally;
  size_t library_events = 0, thrown_in_library = 0, callback_events = 0, by_thrower = 0;
  for (const Build& build : builds) {
    SCOPED_TRACE(build.name);
    const std::string folder = root + "/" + build.name;
    std::filesystem::create_directories(folder);
    ASSERT_TRUE(runOrFail(folder, build.command));
    if (!build.index_map_of.empty()) {
      indexMapBuild(folder, build.index_map_of, std::filesystem::path(build.bundle).filename().string());
    }
    const bool counted = build.with_sources || kCountBuildsWithoutSourcesContent;
    UploadMeta meta;
    meta.app = "shop";
    meta.build_id = build.name;
    meta.name = std::filesystem::path(build.bundle).filename().string();
    ASSERT_TRUE(pipeline->ingest(meta, folder + "/" + build.bundle + ".map"));
    if (!build.with_sources) {
      // The minified file beside its map: the resolver names the map's functions from it.
      UploadMeta minified = meta;
      minified.kind = SymbolKind::kSourcemap;
      ASSERT_TRUE(pipeline->ingest(minified, folder + "/" + build.bundle));
    }
    CommandResult ran = run(folder, "node " + build.bundle);
    ASSERT_EQ(ran.exit_code, 0) << ran.output.substr(0, 4000);
    std::istringstream lines(ran.output);
    std::string line;
    size_t errors = 0;
    while (std::getline(lines, line)) {
      simdjson::dom::parser parser;
      simdjson::dom::element error;
      ASSERT_EQ(parser.parse(line).get(error), simdjson::SUCCESS) << line;
      const int site = int(int64_t(error["site"]));
      const std::string name = std::string(std::string_view(error["name"]));
      const std::string message = std::string(std::string_view(error["message"]));
      const std::string stack = std::string(std::string_view(error["stack"]));
      ASSERT_FALSE(stack.empty()) << "site " << site << " did not throw";
      ++errors;
      // Browser SDKs send the frame lines; type and message travel in "exception".
      const size_t first_frame = stack.find("\n    at ");
      const std::string frames = first_frame == std::string::npos ? "" : stack.substr(first_frame + 1);
      const std::string event = R"({"event_id":"e","kind":"error","platform":"web","app":"shop","build_id":)" +
                                jsonString(build.name) + R"(,"exception":{"type":)" + jsonString(name) +
                                R"(,"message":)" + jsonString(message) +
                                R"(},"threads":[{"name":"main","crashed":true,"stack":)" + jsonString(frames) + "}]}";
      Outcome outcome = pipeline->process("shop:" + build.name, event);
      // Rows per build and per error kind; "all" holds what the targets count, the last row
      // every build.
      std::vector<std::string> labels = {"all builds, also without sourcesContent",
                                         "build " + build.name + (counted ? "" : " (not counted)")};
      if (counted) {
        labels.push_back(kKindNames[kindOf(site)]);
        labels.push_back("all");
      }
      for (const std::string& label : labels) {
        tally.add(label, site, outcome.fingerprint);
      }
      tally.show(outcome.fingerprint, build.name + " " + hashedFrames(outcome));
      if (kindOf(site) >= kLibraryKind) {
        // Thrown inside the bundled package: its original node_modules file is on the stack.
        ++library_events;
        thrown_in_library += outcome.restored_event.find("node_modules/acorn/") != std::string::npos ||
                             outcome.restored_event.find("node_modules/@jridgewell/") != std::string::npos;
      }
      if (kindOf(site) == kCallbackKind) {
        ++callback_events;
        by_thrower += outcome.source == "thrower";
      }
      if (dump && kindOf(site) >= kLibraryKind) {
        std::fprintf(dump, "== %s site %d: %s\n%s\n", build.name.c_str(), site, hashedFrames(outcome).c_str(),
                     outcome.describe().c_str());
      }
      if (counted) tally.countSource(outcome.source + " " + outcome.quality);
    }
    EXPECT_EQ(errors, size_t(kSites * kPaths));
  }

  if (dump) std::fclose(dump);
  const auto [split, merged] =
      tally.report("error kind", "all", [](int site) { return std::string(kKindNames[kindOf(site)]); });
  EXPECT_EQ(merged, 0u);
  EXPECT_LT(double(split), 0.01 * kSites);
  EXPECT_EQ(thrown_in_library, library_events);
  EXPECT_EQ(library_events, builds.size() * kPaths * (kSites / kKinds) * 2);
  // The two arrows of a module share their app frames: only the library frames below them
  // (the thrower source) tell them apart.
  EXPECT_EQ(by_thrower, callback_events);
}

}  // namespace
}  // namespace restack::grouping_e2e

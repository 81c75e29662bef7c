// Source-map benchmarks on a real map (made by run.sh):
//   SOURCEMAP_BENCH_MAP=app.min.js.map SOURCEMAP_BENCH_FRAMES=frames.txt sourcemap_bench
// frames.txt: one "line column" (1-based, as a browser prints them) per line.
//   BM_Ingest          parse + write every record; counters: MB/s of map, stored bytes per map MB
//   BM_FirstFrame      a fresh store handle and resolver (map never seen by this process) -> the
//                      first restored frame
//   BM_WarmLookup      frames per second per core once the chunks are cached, one lookup() per frame
//   BM_WarmLookupStack the same frames, looked up by stacks of 10 or 32 (lookupStack, as the worker does)
// With SOURCEMAP_BENCH_ANSWERS=<file>, the warm answer of every frame is written there first, one
// "source line column" per frame (1-based, as trace-mapping's originalPositionFor gives them but
// with 1-based columns), for run.sh to compare with reference.js's answers on the same frames.
// For `valgrind --tool=callgrind --toggle-collect=*timedLookup*`, the timed calls are timedLookup and
// timedLookupStack.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>

#include "formats/common/mapped_file.h"
#include "symbolstore/ingest.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"

namespace restack {
namespace {

namespace fs = std::filesystem;

struct Setup {
  std::string map_path;
  std::string map_bytes;
  std::vector<stack::JsFrameLine> frames;
  fs::path store_dir;
};

// Removes the bench's store folder when the process exits: each run used to leave ~6 MB of store
// in the temp folder.
struct RemovedAtExit {
  fs::path path;
  ~RemovedAtExit() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

Setup& setup() {
  static Setup instance = [] {
    Setup s;
    const char* map = std::getenv("SOURCEMAP_BENCH_MAP");
    const char* frames = std::getenv("SOURCEMAP_BENCH_FRAMES");
    if (!map || !frames) {
      std::fprintf(stderr, "set SOURCEMAP_BENCH_MAP and SOURCEMAP_BENCH_FRAMES (see loadtest/sourcemap/run.sh)\n");
      std::exit(2);
    }
    s.map_path = map;
    s.map_bytes = readFile(map).value();
    std::ifstream in(frames);
    uint32_t line = 0, column = 0;
    while (in >> line >> column) {
      stack::JsFrameLine frame;
      frame.url = "https://cdn.example.com/static/js/bench.min.js";
      frame.line = line;
      frame.column = column;
      s.frames.push_back(frame);
    }
    s.store_dir = fs::temp_directory_path() / ("restack-sm-bench-" + std::to_string(::getpid()));
    return s;
  }();
  static const RemovedAtExit store_removal{instance.store_dir};
  return instance;
}

UploadMeta benchMeta() {
  UploadMeta meta;
  meta.kind = SymbolKind::kSourcemap;
  meta.app = "bench";
  meta.build_id = "1";
  meta.name = "bench.min.js";
  return meta;
}

std::unique_ptr<SymbolStore> openStore(const fs::path& dir) {
  StoreOptions options;
  options.path = dir.string();
  return std::move(SymbolStore::open(options).value());
}

void BM_Ingest(benchmark::State& state) {
  Setup& s = setup();
  uint64_t stored = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(s.store_dir);
    auto store = openStore(s.store_dir);
    state.ResumeTiming();
    UploadContent content;
    content.bytes = s.map_bytes;
    auto report = ingestSourcemap(*store, benchMeta(), content, IngestOptions());
    if (!report) state.SkipWithError(report.error().message().c_str());
    stored = report->stored_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * s.map_bytes.size()));
  state.counters["stored_bytes_per_map_MB"] = static_cast<double>(stored) / (s.map_bytes.size() / 1e6);
  state.counters["map_MB"] = s.map_bytes.size() / 1e6;
}

void ensureIngested() {
  Setup& s = setup();
  static bool done = false;
  if (done) return;
  fs::remove_all(s.store_dir);
  auto store = openStore(s.store_dir);
  UploadContent content;
  content.bytes = s.map_bytes;
  (void)ingestSourcemap(*store, benchMeta(), content, IngestOptions()).value();
  done = true;
}

EventScope benchScope() {
  return EventScope{"bench", "1", "web", {}};
}

void BM_FirstFrame(benchmark::State& state) {
  Setup& s = setup();
  ensureIngested();
  size_t next = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto store = openStore(s.store_dir);  // the store is open in the worker already
    state.ResumeTiming();
    SourcemapResolver resolver(*store, {});
    auto result = resolver.lookup(benchScope(), s.frames[next++ % s.frames.size()]);
    benchmark::DoNotOptimize(result);
    state.PauseTiming();
    if (!result || result->status != FrameStatus::kSymbolicated) {
      std::fprintf(stderr, "frame %u:%u not restored: %s\n", s.frames[(next - 1) % s.frames.size()].line,
                   s.frames[(next - 1) % s.frames.size()].column,
                   result ? (result->note + result->missing_id).c_str() : result.error().message().c_str());
      std::exit(1);
    }
    store.reset();
    state.ResumeTiming();
  }
}

// Writes the answer of every frame (see the top of the file); false when one was not restored.
bool writeAnswers(SourcemapResolver& resolver, const EventScope& scope, const char* path) {
  std::ofstream out(path);
  for (const auto& frame : setup().frames) {
    auto result = resolver.lookup(scope, frame);
    if (!result || result->status != FrameStatus::kSymbolicated || result->frames.empty()) {
      std::fprintf(stderr, "frame %u:%u not restored\n", frame.line, frame.column);
      return false;
    }
    const SymbolizedFrame& answer = result->frames.front();
    out << answer.file << ' ' << answer.line << ' ' << answer.column << '\n';
  }
  return static_cast<bool>(out.flush());
}

// The timed call, kept out of line so that callgrind can count it alone.
[[gnu::noinline]] Expected<FrameLookup> timedLookup(SourcemapResolver& resolver, const EventScope& scope,
                                                    const stack::JsFrameLine& frame) {
  return resolver.lookup(scope, frame);
}

void BM_WarmLookup(benchmark::State& state) {
  Setup& s = setup();
  ensureIngested();
  auto store = openStore(s.store_dir);
  SourcemapResolver resolver(*store, {});
  const EventScope scope = benchScope();
  for (const auto& frame : s.frames) (void)resolver.lookup(scope, frame);  // warm the cache
  if (const char* answers = std::getenv("SOURCEMAP_BENCH_ANSWERS")) {
    if (!writeAnswers(resolver, scope, answers)) state.SkipWithError("a frame was not restored");
  }
  size_t next = 0;
  for (auto _ : state) {
    auto result = timedLookup(resolver, scope, s.frames[next]);
    benchmark::DoNotOptimize(result);
    if (++next == s.frames.size()) next = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

// Whether two answers restore a frame the same way (lookupStack's against lookup()'s).
bool sameAnswer(const FrameLookup* a, const Expected<FrameLookup>& b) {
  if (!b) return false;
  if (a->status != b->status || a->reason != b->reason || a->tier != b->tier || a->note != b->note ||
      a->missing_id != b->missing_id || a->frames.size() != b->frames.size()) {
    return false;
  }
  for (size_t i = 0; i < a->frames.size(); ++i) {
    const SymbolizedFrame& x = a->frames[i];
    const SymbolizedFrame& y = b->frames[i];
    if (x.file != y.file || x.function != y.function || x.line != y.line || x.column != y.column ||
        x.module != y.module || x.in_app != y.in_app || x.name_inferred != y.name_inferred ||
        x.context_first_line != y.context_first_line || x.context_lines.size() != y.context_lines.size()) {
      return false;
    }
    for (size_t line = 0; line < x.context_lines.size(); ++line) {
      if (x.context_lines[line] != y.context_lines[line]) return false;
    }
  }
  return true;
}

// The call the worker makes (worker/pipeline/kinds/js_kind.cc): one stack's frames together. The
// answers of the previous call are destroyed in it.
[[gnu::noinline]] Status timedLookupStack(SourcemapResolver& resolver, const EventScope& scope,
                                          std::span<const JsFrameQuery> frames, std::vector<FrameLookup>& answers) {
  return resolver.lookupStack(scope, frames, answers);
}

// BM_WarmLookup's frames in stacks of state.range(0) consecutive ones (V8 prints 10 frames by
// default, Error.stackTraceLimit): frames per second counts frames, not stacks.
void BM_WarmLookupStack(benchmark::State& state) {
  Setup& s = setup();
  ensureIngested();
  auto store = openStore(s.store_dir);
  SourcemapResolver resolver(*store, {});
  const EventScope scope = benchScope();
  const size_t depth = static_cast<size_t>(state.range(0));
  std::vector<JsFrameQuery> queries;
  for (const auto& frame : s.frames) queries.push_back({&frame, JsColumns::kCallStart});
  std::vector<FrameLookup> answers;
  for (size_t at = 0; at + depth <= queries.size(); at += depth) {  // warm the cache
    (void)resolver.lookupStack(scope, std::span(queries).subspan(at, depth), answers);
  }
  for (size_t at = 0; at + depth <= queries.size(); at += depth) {
    if (!resolver.lookupStack(scope, std::span(queries).subspan(at, depth), answers).isOk()) {
      state.SkipWithError("lookupStack failed");
      return;
    }
    for (size_t i = 0; i < depth; ++i) {
      if (!sameAnswer(&answers[i], resolver.lookup(scope, *queries[at + i].frame))) {
        state.SkipWithError("lookupStack and lookup answer a frame differently");
        return;
      }
    }
  }
  size_t next = 0;
  for (auto _ : state) {
    auto status = timedLookupStack(resolver, scope, std::span(queries).subspan(next, depth), answers);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(answers.data());
    next += depth;
    if (next + depth > queries.size()) next = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * depth));
}

BENCHMARK(BM_Ingest)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_FirstFrame)->Unit(benchmark::kMicrosecond)->Iterations(50)->UseRealTime();
BENCHMARK(BM_WarmLookup)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_WarmLookupStack)->Unit(benchmark::kNanosecond)->Arg(10)->Arg(32);

}  // namespace
}  // namespace restack

BENCHMARK_MAIN();

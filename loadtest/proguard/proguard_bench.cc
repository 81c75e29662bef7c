// ProGuard / R8 retrace benchmarks (docs/benchmarks.md, ProGuard section):
//   BM_IngestMapping      mapping MB/s through ingestProguard, stored bytes per mapping MB
//   BM_RetraceWarm        frames/s once the classes of the trace are cached (1 and 2 threads)
//   BM_RetraceWarmOneLongRun  the same, the whole trace passed as one run
//   BM_FirstFrameCold     time to the first restored frame for a build this process has not
//                         touched (new resolver, build never looked up before)
// Inputs are generated (mapping_generator.h); RESTACK_PG_BENCH_CLASSES sets the class count.
//   proguard_bench --generate DIR [--classes N] [--frames N]   writes DIR/mapping.txt,
//   DIR/trace.txt and DIR/trace_one.txt for the side-by-side run with ProGuard's ReTrace.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "formats/stack/java_line.h"
#include "loadtest/proguard/mapping_generator.h"
#include "symbolstore/ingest.h"
#include "symbolstore/proguard/proguard_resolver.h"
#include "symbolstore/store.h"

namespace restack::proguard::bench {
namespace {

namespace fs = std::filesystem;

GeneratorOptions generatorOptions() {
  GeneratorOptions options;
  if (const char* classes = std::getenv("RESTACK_PG_BENCH_CLASSES")) options.classes = std::stoul(classes);
  return options;
}

// One store with the generated mapping ingested under builds "b0" … "b<cold_builds-1>".
struct Fixture {
  static constexpr int kColdBuilds = 8;
  fs::path dir;
  std::string mapping;
  std::string trace;
  std::unique_ptr<SymbolStore> store;
  int next_cold_build = 1;

  Fixture() {
    dir = fs::temp_directory_path() / ("restack-pg-bench-" + std::to_string(std::random_device()()));
    fs::create_directories(dir);
    mapping = generateMapping(generatorOptions());
    trace = generateTrace(generatorOptions(), 20000);
    StoreOptions options;
    options.path = (dir / "store").string();
    auto opened = SymbolStore::open(options);
    if (!opened) std::abort();
    store = std::move(*opened);
    for (int b = 0; b < kColdBuilds; ++b) {
      if (!ingest("b" + std::to_string(b))) std::abort();
    }
  }
  ~Fixture() {
    store.reset();
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  Expected<IngestReport> ingest(const std::string& build) {
    UploadMeta meta;
    meta.kind = SymbolKind::kProguard;
    meta.app = "bench";
    meta.build_id = build;
    UploadContent content;
    content.bytes = mapping;
    return ingestProguard(*store, meta, content, IngestOptions{});
  }
  static Fixture& get() {
    static Fixture fixture;
    return fixture;
  }
};

void BM_IngestMapping(benchmark::State& state) {
  Fixture& fixture = Fixture::get();
  uint64_t stored = 0;
  for (auto _ : state) {
    auto report = fixture.ingest("ingest");
    if (!report)
      state.SkipWithError(report.error().message().c_str());
    else
      stored = report->stored_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * fixture.mapping.size()));
  state.counters["mapping_MB"] = static_cast<double>(fixture.mapping.size()) / 1e6;
  state.counters["stored_bytes_per_mapping_MB"] = static_cast<double>(stored) / (fixture.mapping.size() / 1e6);
}
BENCHMARK(BM_IngestMapping)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_RetraceWarm(benchmark::State& state) {
  Fixture& fixture = Fixture::get();
  static std::unique_ptr<ProguardResolver> resolver;
  static std::vector<stack::StackLine> lines;
  static size_t frames = 0;
  if (state.thread_index() == 0 && !resolver) {
    ProguardResolverOptions options;
    if (const char* cache = std::getenv("RESTACK_PG_BENCH_CACHE_MB")) options.cache_bytes = std::stoull(cache) << 20;
    resolver = std::make_unique<ProguardResolver>(*fixture.store, options);
    lines = stack::parseStack(fixture.trace);
    for (const auto& line : lines) frames += stack::asJavaFrame(line) != nullptr;
    (void)resolver->retrace({"bench", "b0", "android", {}}, lines);  // warm the cache
  }
  // Every thread retraces the whole trace as runs of 25 lines (one exception each).
  for (auto _ : state) {
    for (size_t start = 0; start < lines.size(); start += 26) {
      size_t count = std::min<size_t>(26, lines.size() - start);
      auto results = resolver->retrace({"bench", "b0", "android", {}}, std::span(lines).subspan(start, count));
      benchmark::DoNotOptimize(results);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * frames));
}
BENCHMARK(BM_RetraceWarm)->Unit(benchmark::kMillisecond)->Threads(1)->Threads(2)->UseRealTime();

// The same trace as one run of 20,000 lines (a thread dump or a StackOverflowError trace is one
// long run): the resolver looks frames up ahead in windows, not the whole run at once.
void BM_RetraceWarmOneLongRun(benchmark::State& state) {
  Fixture& fixture = Fixture::get();
  ProguardResolver resolver(*fixture.store, ProguardResolverOptions{});
  auto lines = stack::parseStack(fixture.trace);
  size_t frames = 0;
  for (const auto& line : lines) frames += stack::asJavaFrame(line) != nullptr;
  (void)resolver.retrace({"bench", "b0", "android", {}}, lines);  // warm the cache
  for (auto _ : state) {
    auto results = resolver.retrace({"bench", "b0", "android", {}}, lines);
    benchmark::DoNotOptimize(results);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * frames));
}
BENCHMARK(BM_RetraceWarmOneLongRun)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FirstFrameCold(benchmark::State& state) {
  Fixture& fixture = Fixture::get();
  auto lines = stack::parseStack("\tat p5.f.b(SourceFile:12)");
  for (auto _ : state) {
    state.PauseTiming();
    auto resolver = std::make_unique<ProguardResolver>(*fixture.store, ProguardResolverOptions{});
    std::string build = "b" + std::to_string(fixture.next_cold_build++ % Fixture::kColdBuilds);
    state.ResumeTiming();
    auto results = resolver->retrace({"bench", build, "android", {}}, lines);
    if (!results || (*results)[0].lookup.frames.empty()) state.SkipWithError("no frame restored");
    benchmark::DoNotOptimize(results);
  }
}
BENCHMARK(BM_FirstFrameCold)->Unit(benchmark::kMicrosecond)->Iterations(7)->UseRealTime();

int generate(int argc, char** argv) {
  fs::path dir;
  GeneratorOptions options = generatorOptions();
  uint32_t frames = 200000;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--generate")
      dir = argv[++i];
    else if (arg == "--classes")
      options.classes = std::stoul(argv[++i]);
    else if (arg == "--frames")
      frames = std::stoul(argv[++i]);
  }
  fs::create_directories(dir);
  std::ofstream(dir / "mapping.txt") << generateMapping(options);
  std::ofstream(dir / "trace.txt") << generateTrace(options, frames);
  std::ofstream(dir / "trace_one.txt") << generateTrace(options, 1);
  return 0;
}

}  // namespace
}  // namespace restack::proguard::bench

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--generate") return restack::proguard::bench::generate(argc, argv);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// Native symbolication benchmarks (run by loadtest/native/run.sh, side by side with
// llvm-symbolizer-19 and llvm-gsymutil-19 on the same file and addresses).
//
// Environment:
//   RESTACK_NATIVE_BENCH_FILE       the ELF (or Mach-O / .dSYM) to ingest
//   RESTACK_NATIVE_BENCH_ADDRESSES  text file, one hex address per line (as fed to llvm-symbolizer)
//   RESTACK_NATIVE_BENCH_STORE      store folder (default /tmp/restack-native-bench-store)
//
// Benchmarks, in order (later ones read the store the first one wrote):
//   BM_Ingest       parse the file into a fresh store: MB/s, CPU seconds (all threads), stored
//                   bytes per DWARF MB, peak RSS
//   BM_FirstFrame   a resolver that has never seen the build: time to the first restored frame
//   BM_WarmLookup   every address again with a warm cache: frames restored per second per thread
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "symbolstore/ingest.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/native/native_resolver.h"
#include "symbolstore/store.h"

namespace {

using namespace restack;

std::string env(const char* name, const char* fallback = "") {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

std::string storePath() {
  return env("RESTACK_NATIVE_BENCH_STORE", "/tmp/restack-native-bench-store");
}

std::unique_ptr<SymbolStore> openStore() {
  StoreOptions options;
  options.path = storePath();
  auto store = SymbolStore::open(options);
  if (!store) {
    fprintf(stderr, "%s\n", store.error().describe().c_str());
    std::exit(1);
  }
  return std::move(*store);
}

struct Corpus {
  std::string debug_id;
  std::vector<uint64_t> addresses;
};
Corpus& corpus() {
  static Corpus value;
  return value;
}

double peakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

// CPU seconds (user + system) of the whole process, every thread included: the walking threads
// and RocksDB's flush thread, comparable with /usr/bin/time's %U + %S of llvm-gsymutil-19.
double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void BM_Ingest(benchmark::State& state) {
  std::string file = env("RESTACK_NATIVE_BENCH_FILE");
  if (file.empty()) {
    state.SkipWithError("set RESTACK_NATIVE_BENCH_FILE (see loadtest/native/run.sh)");
    return;
  }
  IngestReport report;
  double cpu_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(storePath());
    auto store = openStore();
    state.ResumeTiming();
    double cpu_before = processCpuSeconds();
    UploadMeta meta;
    meta.kind = std::filesystem::is_directory(file) ? SymbolKind::kDsym : SymbolKind::kElf;
    meta.app = "bench";
    meta.build_id = "1";
    UploadContent content;
    content.path = file;
    content.display_name = std::filesystem::path(file).filename().string();
    auto result = ingestNative(*store, meta, content, IngestOptions{});
    if (!result) {
      state.SkipWithError(result.error().describe().c_str());
      return;
    }
    report = *result;
    // Flush the memtables so the stored size is what stays on disk.
    store->db().Flush(rocksdb::FlushOptions(), store->family(native_store::kNativeFamily)).PermitUncheckedError();
    cpu_seconds += processCpuSeconds() - cpu_before;
  }
  corpus().debug_id = report.ids.empty() ? "" : report.ids[0];
  uint64_t on_disk = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(storePath())) {
    if (entry.is_regular_file() && entry.path().extension() == ".sst") on_disk += entry.file_size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(report.input_bytes) * state.iterations());
  state.counters["input_MB"] = report.input_bytes / 1e6;
  state.counters["records"] = static_cast<double>(report.records);
  state.counters["written_MB"] = report.stored_bytes / 1e6;
  state.counters["sst_MB"] = on_disk / 1e6;
  state.counters["peak_rss_MB"] = peakRssMb();
  state.counters["cpu_s"] = cpu_seconds / std::max<int64_t>(1, state.iterations());
}
BENCHMARK(BM_Ingest)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void loadAddresses() {
  if (!corpus().addresses.empty()) return;
  std::ifstream in(env("RESTACK_NATIVE_BENCH_ADDRESSES"));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) corpus().addresses.push_back(std::stoull(line, nullptr, 16));
  }
}

void BM_FirstFrame(benchmark::State& state) {
  loadAddresses();
  if (corpus().debug_id.empty() || corpus().addresses.empty()) {
    state.SkipWithError("run BM_Ingest first and set RESTACK_NATIVE_BENCH_ADDRESSES");
    return;
  }
  stack::NativeFrameLine frame;
  frame.debug_id = corpus().debug_id;
  size_t next = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto store = openStore();  // a fresh RocksDB: nothing of this build in any cache
    NativeResolver resolver(*store, {});
    uint64_t address = corpus().addresses[next++ % corpus().addresses.size()];
    state.ResumeTiming();
    auto lookup = resolver.lookup({"bench", "1", "android", {}}, frame, address);
    benchmark::DoNotOptimize(lookup);
    state.PauseTiming();
    store.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_FirstFrame)->Unit(benchmark::kMicrosecond)->Iterations(50);

void BM_WarmLookup(benchmark::State& state) {
  loadAddresses();
  static std::unique_ptr<SymbolStore> store;
  static std::unique_ptr<NativeResolver> resolver;
  if (state.thread_index() == 0 && !resolver) {
    store = openStore();
    resolver = std::make_unique<NativeResolver>(*store, NativeResolverOptions{});
  }
  stack::NativeFrameLine frame;
  frame.debug_id = corpus().debug_id;
  const auto& addresses = corpus().addresses;
  if (addresses.empty() || frame.debug_id.empty()) {
    state.SkipWithError("run BM_Ingest first and set RESTACK_NATIVE_BENCH_ADDRESSES");
    return;
  }
  EventScope scope{"bench", "1", "android", {}};
  // Warm: every address once before timing.
  if (state.thread_index() == 0) {
    for (uint64_t address : addresses) benchmark::DoNotOptimize(resolver->lookup(scope, frame, address));
  }
  size_t i = static_cast<size_t>(state.thread_index()) * 7919;
  int64_t frames = 0, restored = 0;
  for (auto _ : state) {
    auto lookup = resolver->lookup(scope, frame, addresses[i++ % addresses.size()]);
    if (lookup && lookup->status == FrameStatus::kSymbolicated) {
      ++restored;
      frames += static_cast<int64_t>(lookup->frames.size());
    }
    benchmark::DoNotOptimize(lookup);
  }
  state.SetItemsProcessed(state.iterations());
  // Per-thread values, averaged over the threads (Google Benchmark sums counters by default).
  using benchmark::Counter;
  state.counters["restored_pct"] =
      Counter(100.0 * restored / std::max<int64_t>(1, state.iterations()), Counter::kAvgThreads);
  state.counters["frames_per_address"] =
      Counter(static_cast<double>(frames) / std::max<int64_t>(1, restored), Counter::kAvgThreads);
  state.counters["cache_MB"] = Counter(resolver->cachedBytes() / 1e6, Counter::kAvgThreads);
  state.counters["cpu_lookups_per_s"] =
      Counter(static_cast<double>(state.iterations()), Counter::kIsRate | Counter::kAvgThreads);
}
BENCHMARK(BM_WarmLookup)->Threads(1)->Threads(2)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();

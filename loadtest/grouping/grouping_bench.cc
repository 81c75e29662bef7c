// Fingerprint cost per event kind, on events from the generated corpus.
//   build/loadtest/grouping/grouping_bench
#include <benchmark/benchmark.h>

#include "grouping/fingerprint.h"
#include "grouping/record_json.h"
#include "grouping/rules.h"
#include "loadtest/grouping/corpus_generator.h"

namespace {

using namespace restack::grouping;

const std::vector<corpus::CorpusEvent>& events() {
  static const auto corpus = [] {
    corpus::CorpusOptions options;
    options.problems = 400;
    options.min_events = 3000;
    return corpus::generateCorpus(options);
  }();
  return corpus;
}

// Every event whose label starts with `prefix`, cycled through.
void fingerprintEvents(benchmark::State& state, const std::string& label) {
  std::vector<const GroupingInput*> inputs;
  for (const auto& event : events()) {
    if (event.label == label) inputs.push_back(&event.input);
  }
  if (inputs.empty()) {
    state.SkipWithError(("no events labelled " + label).c_str());
    return;
  }
  GroupingConfig config;
  size_t i = 0;
  for (auto _ : state) {
    Fingerprint fp = computeFingerprint(*inputs[i++ % inputs.size()], config);
    benchmark::DoNotOptimize(fp.hash);
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}

BENCHMARK_CAPTURE(fingerprintEvents, android_java_crash, std::string("android-java crash"));
BENCHMARK_CAPTURE(fingerprintEvents, android_native_crash, std::string("android-native crash"));
BENCHMARK_CAPTURE(fingerprintEvents, ios_crash, std::string("ios crash"));
BENCHMARK_CAPTURE(fingerprintEvents, web_error, std::string("web error"));
BENCHMARK_CAPTURE(fingerprintEvents, react_native_crash, std::string("react-native crash"));
BENCHMARK_CAPTURE(fingerprintEvents, android_java_anr, std::string("android-java anr"));
BENCHMARK_CAPTURE(fingerprintEvents, android_java_lag, std::string("android-java lag"));

void recordJson(benchmark::State& state) {
  GroupingConfig config;
  const GroupingInput& input = events().front().input;
  Fingerprint fp = computeFingerprint(input, config);
  for (auto _ : state) benchmark::DoNotOptimize(fingerprintRecordJson(input, fp));
}
BENCHMARK(recordJson);

void parseRules(benchmark::State& state) {
  const std::string text =
      "version: 1\napp_packages: [com.shop.]\nin_app:\n  - {package: com.shop.vendor., in_app: false}\n"
      "ignore:\n  - {function: \"com.shop.log.*\"}\nfingerprint:\n"
      "  - {exception_type: java.lang.OutOfMemoryError, fingerprint: oom}\n";
  for (auto _ : state) benchmark::DoNotOptimize(parseAppRules(text, "bench.yaml"));
}
BENCHMARK(parseRules);

}  // namespace

BENCHMARK_MAIN();

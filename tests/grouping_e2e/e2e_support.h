// Support for the end-to-end grouping tests (tests/grouping_e2e): running the real toolchains
// that make two builds of the same code, and pushing each build's symbols and raw events through
// Restack's own pipeline — ingestUpload into a private SymbolStore, then EventProcessor::process,
// exactly what the worker does for one Kafka record — to read back the fingerprint it published.
//
// Worked example (what a test does with it):
//
//   auto pipeline = Pipeline::create();                      // a fresh store in a temp folder
//   pipeline->ingest({.app = "shop", .build_id = "1"}, "build1/mapping.txt");
//   Outcome crash = pipeline->process("shop:1", R"({"app":"shop","build_id":"1",…})");
//   crash.fingerprint   -> "5c0e…"  (the restack.fingerprints record's "fingerprint")
//   crash.frames        -> {"com.shop.cart.Cart.lambda$total", …}  (the record's "frames")
//   crash.describe()    -> raw stack, restored text and record, for assertion messages
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "worker/pipeline/event_processor.h"

namespace restack::grouping_e2e {

// Tools installed by scripts/setup.sh (ProGuard jars, node_modules).
inline const std::string kDepsDir = RESTACK_DEPS_DIR;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
// Runs `command` through /bin/sh in `dir`.
CommandResult run(const std::string& dir, const std::string& command);
// Runs `command` in `dir`; on a non-zero exit, fails the current test with the command's output.
bool runOrFail(const std::string& dir, const std::string& command);
// True when `tool` is on PATH; otherwise fails the current test naming scripts/setup.sh.
bool requireTool(const std::string& tool);
// The GNU build id of the ELF file `file` in `dir` (lowercase hex, as llvm-readelf prints it), or
// "" when it has none.
std::string gnuBuildId(const std::string& dir, const std::string& file);
// The rustc that scripts/setup.sh installs (on PATH or in ~/.cargo/bin), or "" when there is none.
std::string rustCompiler();

void writeFile(const std::string& path, const std::string& text);
std::string readFile(const std::string& path);
std::string replaceAll(std::string text, std::string_view from, std::string_view to);
// `text` as a JSON string literal, quotes included.
std::string jsonString(std::string_view text);

// What the pipeline published for one raw event.
struct Outcome {
  bool processed = false;         // false: the pipeline failed or dead-lettered the event
  std::string fingerprint;        // restack.fingerprints record: "fingerprint"
  std::string event_fingerprint;  // the restored event's own "fingerprint"."fingerprint"
  std::string key;                // output key, "<app>:<fingerprint>"
  std::string quality;            // complete | partial | provisional
  std::string source;             // in_app | all | message | type | forced
  std::string culprit;
  std::string exception_type;       // as the record states it (restored)
  std::vector<std::string> frames;  // normalized names the hash used, innermost first
  std::string symbolication;        // the restored event's symbolication.status
  std::string raw_event;
  std::string restored_event;  // JSON
  std::string record;          // JSON
  // Everything above in one message for failed assertions.
  std::string describe() const;
};

// Restack's pipeline over a private store in a temporary folder.
class Pipeline {
 public:
  // Opens the store; fails the current test and returns nullptr when it cannot.
  static std::unique_ptr<Pipeline> create();

  // ingestUpload of one symbol file; fails the current test on an error. The kind is detected
  // from the content, as `restack ingest` does.
  bool ingest(const UploadMeta& meta, const std::string& path);

  // EventProcessor::process of one raw event (docs/design.md §3) under the Kafka key `input_key`.
  Outcome process(const std::string& input_key, const std::string& event);

 private:
  Pipeline() = default;
  std::optional<TempDir> dir_;
  std::unique_ptr<SymbolStore> store_;
  std::unique_ptr<Symbolizer> symbolizer_;
  std::unique_ptr<pipeline::EventProcessor> processor_;
};

// How a corpus grouped: fingerprints against the true crash sites, per label (a kind of crash,
// and "all"), printed as the table of docs/grouping.md with a few examples of what split or
// merged.
class CorpusTally {
 public:
  // One event of true `site` that got `fingerprint`, counted under `label`.
  void add(const std::string& label, int site, const std::string& fingerprint);
  // What the first event of `fingerprint` hashed, to show in the examples.
  void show(const std::string& fingerprint, std::string text) { shown_.emplace(fingerprint, std::move(text)); }
  void countSource(const std::string& source_and_quality) { ++sources_[source_and_quality]; }
  // Prints the table (its first column headed `kind_column`), the source counts and up to 5
  // splits and merges of `label`; returns that label's split sites and merged fingerprints.
  std::pair<size_t, size_t> report(const char* kind_column, const std::string& label,
                                   const std::function<std::string(int)>& describe_site);

 private:
  struct Row {
    std::set<int> sites;
    size_t events = 0;
    std::map<std::string, std::set<int>> sites_of;         // fingerprint -> true sites
    std::map<int, std::set<std::string>> fingerprints_of;  // site -> fingerprints
  };
  std::map<std::string, Row> rows_;
  std::map<std::string, std::string> shown_;  // fingerprint -> what the first event of it hashed
  std::map<std::string, size_t> sources_;     // "<source> <quality>" -> events
};

}  // namespace restack::grouping_e2e

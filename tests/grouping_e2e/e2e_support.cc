#include "tests/grouping_e2e/e2e_support.h"

#include <simdjson.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/common/json_text.h"

namespace restack::grouping_e2e {

CommandResult run(const std::string& dir, const std::string& command) {
  const std::string full = "cd '" + dir + "' && (" + command + ") 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool runOrFail(const std::string& dir, const std::string& command) {
  CommandResult result = run(dir, command);
  if (result.exit_code == 0) return true;
  ADD_FAILURE() << "command failed (exit " << result.exit_code << "): " << command << "\n" << result.output;
  return false;
}

bool requireTool(const std::string& tool) {
  if (run("/", "command -v '" + tool + "'").exit_code == 0) return true;
  ADD_FAILURE() << tool << " is missing: run scripts/setup.sh";
  return false;
}

std::string gnuBuildId(const std::string& dir, const std::string& file) {
  const CommandResult notes = run(dir, "llvm-readelf-19 -n '" + file + "'");
  const size_t at = notes.output.find("Build ID: ");
  if (at == std::string::npos) return "";
  std::string build_id;
  std::istringstream(notes.output.substr(at + 10)) >> build_id;
  return build_id;
}

std::string rustCompiler() {
  const std::string found = run("/", "command -v rustc || echo \"$HOME/.cargo/bin/rustc\"").output;
  const std::string compiler = found.substr(0, found.find('\n'));
  return std::filesystem::exists(compiler) ? compiler : "";
}

void writeFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string replaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string jsonString(std::string_view text) {
  std::string out;
  appendJsonString(out, text);
  return out;
}

std::string Outcome::describe() const {
  std::string text =
      "raw event:\n" + raw_event + "\nrestored event:\n" + restored_event + "\nrecord:\n" + record + "\nframes used:";
  for (const std::string& frame : frames) text += " | " + frame;
  return text + "\n";
}

std::unique_ptr<Pipeline> Pipeline::create() {
  std::unique_ptr<Pipeline> pipeline(new Pipeline());
  auto dir = TempDir::create("restack-grouping-e2e-store-");
  if (!dir) {
    ADD_FAILURE() << dir.error().message();
    return nullptr;
  }
  pipeline->dir_.emplace(std::move(*dir));
  StoreOptions options;
  options.path = pipeline->dir_->path();
  options.block_cache_bytes = 8u << 20;
  auto store = SymbolStore::open(options);
  if (!store) {
    ADD_FAILURE() << store.error().message();
    return nullptr;
  }
  pipeline->store_ = std::move(*store);
  pipeline->symbolizer_ = std::make_unique<Symbolizer>(*pipeline->store_, SymbolizerOptions{});
  pipeline->processor_ =
      std::make_unique<pipeline::EventProcessor>(*pipeline->symbolizer_, pipeline::ProcessorOptions{});
  return pipeline;
}

bool Pipeline::ingest(const UploadMeta& meta, const std::string& path) {
  UploadContent content;
  content.path = path;
  content.display_name = std::filesystem::path(path).filename().string();
  auto report = ingestUpload(*store_, meta, content, IngestOptions{});
  if (!report) {
    ADD_FAILURE() << "ingest of " << path << " failed: " << report.error().message();
    return false;
  }
  if (report->records == 0) {
    ADD_FAILURE() << "ingest of " << path << " wrote no records";
    return false;
  }
  return true;
}

namespace {

std::string stringField(simdjson::dom::element object, std::string_view key) {
  std::string_view value;
  if (object[key].get_string().get(value) != simdjson::SUCCESS) return "";
  return std::string(value);
}

}  // namespace

Outcome Pipeline::process(const std::string& input_key, const std::string& event) {
  Outcome outcome;
  outcome.raw_event = event;
  auto result = processor_->process(input_key, event);
  if (!result) {
    ADD_FAILURE() << "the pipeline failed: " << result.error().message();
    return outcome;
  }
  if (result->dead_letter || result->records.size() != 2) {
    ADD_FAILURE() << "the event went to the DLQ: " << result->error << "\n" << event;
    return outcome;
  }
  outcome.restored_event = result->records[0].value;
  outcome.record = result->records[1].value;
  outcome.key = result->records[1].key;

  simdjson::dom::parser parser;
  simdjson::dom::element record;
  if (parser.parse(outcome.record).get(record) != simdjson::SUCCESS) {
    ADD_FAILURE() << "the fingerprint record is not JSON: " << outcome.record;
    return outcome;
  }
  outcome.fingerprint = stringField(record, "fingerprint");
  outcome.quality = stringField(record, "quality");
  outcome.source = stringField(record, "source");
  outcome.culprit = stringField(record, "culprit");
  outcome.exception_type = stringField(record, "exception_type");
  simdjson::dom::array frames;
  if (record["frames"].get_array().get(frames) == simdjson::SUCCESS) {
    for (simdjson::dom::element frame : frames) {
      std::string_view name;
      if (frame.get_string().get(name) == simdjson::SUCCESS) outcome.frames.emplace_back(name);
    }
  }

  simdjson::dom::parser event_parser;
  simdjson::dom::element restored;
  if (event_parser.parse(outcome.restored_event).get(restored) != simdjson::SUCCESS) {
    ADD_FAILURE() << "the restored event is not JSON: " << outcome.restored_event;
    return outcome;
  }
  simdjson::dom::element embedded;
  if (restored["fingerprint"].get(embedded) == simdjson::SUCCESS) {
    outcome.event_fingerprint = stringField(embedded, "fingerprint");
  }
  simdjson::dom::element symbolication;
  if (restored["symbolication"].get(symbolication) == simdjson::SUCCESS) {
    outcome.symbolication = stringField(symbolication, "status");
  }
  outcome.processed = true;
  return outcome;
}

void CorpusTally::add(const std::string& label, int site, const std::string& fingerprint) {
  Row& row = rows_[label];
  row.sites.insert(site);
  ++row.events;
  row.sites_of[fingerprint].insert(site);
  row.fingerprints_of[site].insert(fingerprint);
}

std::pair<size_t, size_t> CorpusTally::report(const char* kind_column, const std::string& label,
                                              const std::function<std::string(int)>& describe_site) {
  std::printf(
      "\n| %s | true sites | events | fingerprints | split sites | merged fingerprints |\n"
      "|---|---:|---:|---:|---:|---:|\n",
      kind_column);
  for (const auto& [name, row] : rows_) {
    size_t split = 0, merged = 0;
    for (const auto& [site, fingerprints] : row.fingerprints_of) split += fingerprints.size() > 1;
    for (const auto& [fingerprint, sites] : row.sites_of) merged += sites.size() > 1;
    std::printf("| %s | %zu | %zu | %zu | %zu (%.2f %%) | %zu |\n", name.c_str(), row.sites.size(), row.events,
                row.sites_of.size(), split, 100.0 * double(split) / double(row.sites.size()), merged);
  }
  for (const auto& [source, count] : sources_)
    std::printf("source and quality %s: %zu events\n", source.c_str(), count);
  const Row& all = rows_[label];
  size_t split = 0, merged = 0;
  for (const auto& [site, fingerprints] : all.fingerprints_of) {
    if (fingerprints.size() < 2) continue;
    if (++split > 5) continue;
    std::printf("split site %d (%s):\n", site, describe_site(site).c_str());
    for (const std::string& fingerprint : fingerprints) std::printf("  %s\n", shown_[fingerprint].c_str());
  }
  for (const auto& [fingerprint, sites] : all.sites_of) {
    if (sites.size() < 2) continue;
    if (++merged > 5) continue;
    std::printf("merged %zu sites (first %d, %s): %s\n", sites.size(), *sites.begin(),
                describe_site(*sites.begin()).c_str(), shown_[fingerprint].c_str());
  }
  return {split, merged};
}

}  // namespace restack::grouping_e2e

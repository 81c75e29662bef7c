// restack symbolicate: the worker's restoration offline, JSON Lines in and out.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "formats/common/temp_dir.h"
#include "grouping/rules.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "worker/cli/commands.h"
#include "worker/cli/progress.h"
#include "worker/pipeline/event_processor.h"
#include "worker/pipeline/raw_event.h"

namespace restack::cli {
namespace {

struct SymbolicateFlags {
  std::string app;
  std::string build;
  std::string store;
  std::vector<std::string> symbols;
  std::string dlq_path;
  std::string name;
  std::string rules_dir;
};

// The app and build the --symbols files belong to: the flags, or else the first event's.
void defaultScopeFromEvent(const std::string& first_line, SymbolicateFlags& flags) {
  if (!flags.app.empty() && !flags.build.empty()) return;
  auto event = pipeline::parseRawEvent(first_line, pipeline::EventLimits{});
  if (!event) return;
  if (flags.app.empty()) flags.app = event->app;
  if (flags.build.empty()) flags.build = event->build_id;
}

int run(SymbolicateFlags& flags) {
  if (flags.store.empty() == flags.symbols.empty()) {
    std::cerr << "restack symbolicate: pass either --store DIR or at least one --symbols FILE\n";
    return 2;
  }
  std::string first_line;
  bool has_first = static_cast<bool>(std::getline(std::cin, first_line));
  std::optional<TempDir> temp_store;
  StoreOptions store_options;
  if (!flags.symbols.empty()) {
    defaultScopeFromEvent(first_line, flags);
    auto dir = TempDir::create("restack-symbolicate-");
    if (!dir) {
      std::cerr << "restack symbolicate: " << dir.error().message() << "\n";
      return 1;
    }
    temp_store.emplace(std::move(*dir));
    store_options.path = temp_store->path();
  } else {
    store_options.path = flags.store;
    if (!std::filesystem::exists(flags.store)) {
      std::cerr << "restack symbolicate: no symbol store at " << flags.store << "\n";
      return 2;
    }
  }
  auto store = SymbolStore::open(store_options);
  if (!store) {
    std::cerr << "restack symbolicate: " << store.error().message() << "\n";
    return 1;
  }
  for (const std::string& file : flags.symbols) {
    UploadMeta meta;
    meta.app = flags.app;
    meta.build_id = flags.build;
    meta.name = flags.name;
    UploadContent content;
    content.path = file;
    content.display_name = std::filesystem::path(file).filename().string();
    IngestOptions options;
    options.progress = stderrProgress(content.display_name);
    auto report = ingestUpload(**store, meta, content, options);
    if (!report) {
      std::cerr << "restack symbolicate: cannot use " << file << ": " << report.error().message() << "\n";
      return 1;
    }
    for (const auto& warning : report->warnings) std::cerr << file << ": warning: " << warning << "\n";
  }

  Symbolizer symbolizer(**store, SymbolizerOptions{});
  pipeline::ProcessorOptions processor_options;
  if (!flags.rules_dir.empty()) {
    auto grouping_config = std::make_shared<grouping::GroupingConfig>();
    Status loaded = grouping::loadRulesDirectory(flags.rules_dir, *grouping_config);
    if (!loaded) {
      std::cerr << "restack symbolicate: " << loaded.error().message() << "\n";
      return 2;
    }
    processor_options.grouping = std::move(grouping_config);
  }
  pipeline::EventProcessor processor(symbolizer, processor_options);
  std::ofstream dlq;
  if (!flags.dlq_path.empty()) {
    dlq.open(flags.dlq_path, std::ios::trunc);
    if (!dlq) {
      std::cerr << "restack symbolicate: cannot write " << flags.dlq_path << "\n";
      return 1;
    }
  }
  size_t line_number = 0, failed = 0;
  std::string line = std::move(first_line);
  bool have = has_first;
  while (have) {
    ++line_number;
    if (!line.empty()) {
      auto result = processor.process("", line);
      if (!result) {
        std::cerr << "line " << line_number << ": " << result.error().message() << "\n";
        return 1;
      }
      if (result->dead_letter) {
        ++failed;
        std::cerr << "line " << line_number << ": not restored: " << result->error << "\n";
        if (dlq.is_open()) dlq << line << "\n";
      } else {
        for (const auto& record : result->records) {
          if (record.kind == pipeline::OutputKind::kSymbolicated) std::cout << record.value << "\n";
        }
      }
    }
    have = static_cast<bool>(std::getline(std::cin, line));
  }
  std::cout.flush();
  if (failed) {
    std::cerr << failed << " of " << line_number << " lines could not be read"
              << (dlq.is_open() ? " (written to " + flags.dlq_path + ")" : std::string()) << "\n";
    return 3;
  }
  return 0;
}

}  // namespace

Command addSymbolicateCommand(CLI::App& app) {
  auto flags = std::make_shared<SymbolicateFlags>();
  CLI::App* command = app.add_subcommand(
      "symbolicate",
      "Restore events offline: JSON Lines raw events (docs/design.md §3) on stdin, restored events (§5) on stdout.\n"
      "Symbols come from a store built by `restack ingest` or from files given with --symbols.");
  command->add_option("--store", flags->store, "Symbol store folder to read (as built by restack ingest)");
  command->add_option("--symbols", flags->symbols,
                      "Symbol file or .dSYM folder (repeatable): dSYM, Mach-O, ELF .so, mapping.txt, .map; "
                      "gzip/zstd/zip accepted; the kind is detected from the content");
  command->add_option("--app", flags->app, "App the --symbols files belong to (default: the first event's app)");
  command->add_option("--build", flags->build, "Build the --symbols files belong to (default: the first event's)");
  command->add_option("--name", flags->name,
                      "Minified file a --symbols source map serves (default: its file name minus .map, or its "
                      "\"file\" field)");
  command->add_option("--grouping-rules", flags->rules_dir, "Folder of per-app grouping rule files <app>.yaml");
  command->add_option("--dlq", flags->dlq_path, "Write input lines that could not be read to this file");
  return [flags] { return run(*flags); };
}

}  // namespace restack::cli

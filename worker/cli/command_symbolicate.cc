// restack symbolicate: the worker's restoration offline. JSON Lines raw events in and restored
// events out, or one pasted crash report (worker/cli/symbolicate_text.h) in and its restored
// text out.
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
#include "worker/cli/symbolicate_text.h"
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
  bool json = false;
  std::string output;  // "", "text" or "json"
};

// JSON Lines of raw events, unless the first line is the header of an Apple .ips report.
bool looksLikeJsonLines(std::string_view first_line) {
  size_t start = first_line.find_first_not_of(" \t\r");
  return start != std::string_view::npos && first_line[start] == '{' &&
         first_line.find("\"bug_type\"") == std::string_view::npos;
}

// The app and build the --symbols files belong to: the flags, or else the first event's.
void defaultScopeFromEvent(const std::string& first_line, SymbolicateFlags& flags) {
  if (!flags.app.empty() && !flags.build.empty()) return;
  auto event = pipeline::parseRawEvent(first_line, pipeline::EventLimits{});
  if (!event) return;
  if (flags.app.empty()) flags.app = event->app;
  if (flags.build.empty()) flags.build = event->build_id;
}

int run(SymbolicateFlags& flags) {
  if (!flags.store.empty() && !flags.symbols.empty()) {
    std::cerr << "restack symbolicate: pass either --store DIR or --symbols FILE…, not both\n";
    return 2;
  }
  if (!flags.output.empty() && flags.output != "text" && flags.output != "json") {
    std::cerr << "restack symbolicate: --output is text or json, not '" << flags.output << "'\n";
    return 2;
  }
  // A missing symbol file is the user's first mistake to hear about, before stdin is read.
  for (const std::string& file : flags.symbols) {
    std::error_code error;
    if (!std::filesystem::exists(file, error)) {
      std::cerr << "restack symbolicate: cannot use " << file << ": no such file or folder\n";
      return 1;
    }
  }
  // C++ streams that do not go through C stdio: std::getline then reads a buffer instead of
  // calling getc and ungetc for every byte (a third of the instructions per event line). Nothing
  // here writes to stdout through stdio, so no output can be reordered.
  std::ios::sync_with_stdio(false);
  // Skip blank lines before the first one that says what the input is.
  std::string first_line;
  bool has_first = false;
  while ((has_first = static_cast<bool>(std::getline(std::cin, first_line)))) {
    if (first_line.find_first_not_of(" \t\r") != std::string::npos) break;
  }
  if (!has_first) {
    std::cerr << "restack symbolicate: nothing on stdin: paste a crash report, or pipe JSON Lines raw events\n";
    return 0;
  }
  const bool json_lines = flags.json || looksLikeJsonLines(first_line);
  if (json_lines && flags.output == "text") {
    std::cerr << "restack symbolicate: --output text is for pasted crash reports; JSON events come back as JSON\n";
    return 2;
  }
  std::optional<crash_report::CrashReport> report;
  if (!json_lines) {
    std::string text = first_line + "\n";
    std::string line;
    while (std::getline(std::cin, line)) {
      text += line;
      text += '\n';
      if (text.size() > crash_report::kMaxReportBytes) break;
    }
    auto parsed = crash_report::parseCrashReport(text);
    if (!parsed) {
      std::cerr << "restack symbolicate: " << parsed.error().message() << "\n";
      return 1;
    }
    report = std::move(*parsed);
    if (flags.app.empty()) flags.app = report->app.empty() ? "local" : report->app;
    if (flags.build.empty()) flags.build = report->build_id.empty() ? "local" : report->build_id;
  }
  std::optional<TempDir> temp_store;
  StoreOptions store_options;
  if (flags.store.empty()) {
    if (flags.symbols.empty()) {
      std::cerr << "restack symbolicate: no --symbols or --store given: frames are printed as they came, "
                   "each with what is missing\n";
    }
    if (json_lines) defaultScopeFromEvent(first_line, flags);
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
  if (report) {
    auto result = processor.process("", rawEventFromReport(*report, flags.app, flags.build));
    if (!result) {
      std::cerr << "restack symbolicate: " << result.error().message() << "\n";
      return 1;
    }
    if (result->dead_letter) {
      std::cerr << "restack symbolicate: the report could not be restored: " << result->error << "\n";
      return 1;
    }
    for (const auto& record : result->records) {
      if (record.kind != pipeline::OutputKind::kSymbolicated) continue;
      if (flags.output == "json") {
        std::cout << record.value << "\n";
        continue;
      }
      auto text = formatRestoredReport(*report, record.value);
      if (!text) {
        std::cerr << "restack symbolicate: " << text.error().message() << "\n";
        return 1;
      }
      std::cout << *text;
    }
    std::cout.flush();
    return 0;
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
      "Restore stacks offline, the way atos, retrace or metro-symbolicate do.\n"
      "Paste a crash on stdin: an Apple .crash or .ips report, an Android tombstone, ANR dump or logcat\n"
      "AndroidRuntime trace, printStackTrace() text, a browser console stack (V8, SpiderMonkey, JavaScriptCore), a "
      "React\n"
      "Native red-box or Hermes stack, or raw frames; the restored stack is printed, and every frame not\n"
      "restored says why. JSON Lines raw events (docs/design.md §3) on stdin give restored events (§5) on\n"
      "stdout instead. Symbols come from --symbols files or a --store built by `restack ingest`; with\n"
      "neither, frames are printed as they came, each with what is missing.\n"
      "Exit status: 0 done, 1 failed, 2 usage error, 3 some JSON lines could not be read.");
  command->add_option("--store", flags->store, "Symbol store folder to read (as built by restack ingest)");
  command->add_option("--symbols", flags->symbols,
                      "Symbol file or .dSYM folder (repeatable): dSYM, Mach-O, ELF .so, mapping.txt, .map; "
                      "gzip/zstd/zip accepted; the kind is detected from the content");
  command->add_option(
      "--app", flags->app,
      "App the --symbols files belong to (default: the first event's app, or the report's, or \"local\")");
  command->add_option(
      "--build", flags->build,
      "Build the --symbols files belong to (default: the first event's, or the report's, or \"local\")");
  command->add_option("--name", flags->name,
                      "Minified file a --symbols source map serves (default: its file name minus .map, or its "
                      "\"file\" field)");
  command->add_option("--grouping-rules", flags->rules_dir, "Folder of per-app grouping rule files <app>.yaml");
  command->add_option("--dlq", flags->dlq_path, "Write input lines that could not be read to this file");
  command->add_flag("--json", flags->json, "Read JSON Lines raw events even if the input looks like crash text");
  command->add_option("--output", flags->output,
                      "For a pasted report: text (default, the restored stack) or json (the restored event)");
  return [flags] { return run(*flags); };
}

}  // namespace restack::cli

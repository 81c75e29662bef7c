// restack ingest: parse symbol files into a local store, or publish them to the symbols topic.
#include <librdkafka/rdkafkacpp.h>

#include <filesystem>
#include <iostream>

#include "config/config.h"
#include "formats/common/mapped_file.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbol_source.h"
#include "worker/cli/commands.h"
#include "worker/cli/progress.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/upload_message.h"

namespace restack::cli {
namespace {
namespace fs = std::filesystem;

struct IngestFlags {
  std::vector<std::string> files;
  std::string store;
  std::string kind;
  std::string app;
  std::string build;
  std::string name;
  bool shared = false;
  bool publish = false;
  std::string brokers;
  std::string config_path;
  std::string location;
};

Expected<UploadMeta> metaFrom(const IngestFlags& flags) {
  UploadMeta meta;
  if (!flags.kind.empty()) {
    auto kind = parseSymbolKind(flags.kind);
    if (!kind) return kind.error();
    meta.kind = *kind;
  }
  meta.app = flags.app;
  meta.build_id = flags.build;
  meta.name = flags.name;
  meta.shared = flags.shared;
  if (!meta.shared && (meta.app.empty() || meta.build_id.empty())) {
    return invalidArgument("pass --app and --build (whose files these are), or --shared for system images");
  }
  return meta;
}

int ingestIntoStore(const IngestFlags& flags, const UploadMeta& meta) {
  StoreOptions options;
  options.path = flags.store;
  auto store = SymbolStore::open(options);
  if (!store) {
    std::cerr << "restack ingest: " << store.error().message() << "\n";
    return 1;
  }
  int failures = 0;
  for (const std::string& file : flags.files) {
    UploadContent content;
    content.path = file;
    content.display_name = fs::path(file).filename().string();
    IngestOptions ingest_options;
    ingest_options.progress = stderrProgress(content.display_name);
    auto start = std::chrono::steady_clock::now();
    auto report = ingestUpload(**store, meta, content, ingest_options);
    if (!report) {
      std::cerr << "restack ingest: " << file << ": " << report.error().message() << "\n";
      ++failures;
      continue;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << file << ": " << symbolKindName(report->kind) << ", " << report->records << " records, "
              << report->stored_bytes << " bytes stored, " << seconds << " s";
    for (const auto& id : report->ids) std::cout << "\n  serves " << id;
    std::cout << "\n";
    for (const auto& warning : report->warnings) std::cerr << file << ": warning: " << warning << "\n";
  }
  return failures ? 1 : 0;
}

int publish(const IngestFlags& flags, const UploadMeta& meta) {
  config::Config config;
  if (!flags.config_path.empty()) {
    auto loaded = config::loadConfig(flags.config_path, config::processEnvironment());
    if (!loaded) {
      std::cerr << "restack ingest: " << loaded.error().message() << "\n";
      return 2;
    }
    config = *loaded;
  }
  if (!flags.brokers.empty()) config.kafka.brokers = flags.brokers;
  if (config.kafka.brokers.empty()) {
    std::cerr << "restack ingest --publish: pass --brokers or --config\n";
    return 2;
  }
  auto producer = worker::makeProducer(config, "restack-ingest", nullptr);
  if (!producer) {
    std::cerr << "restack ingest: " << producer.error().message() << "\n";
    return 1;
  }
  const std::string& topic = meta.shared ? config.kafka.topics.symbols_shared : config.kafka.topics.symbols;
  for (const std::string& file : flags.files) {
    worker::UploadMessage upload{meta, fs::path(file).filename().string(), flags.location};
    std::optional<MappedFile> mapped;
    if (flags.location.empty()) {
      if (fs::is_directory(file)) {
        std::cerr << "restack ingest: " << file
                  << " is a folder; zip it (a zipped .dSYM, or several, is accepted) or pass --location\n";
        return 2;
      }
      auto opened = MappedFile::open(file);
      if (!opened) {
        std::cerr << "restack ingest: " << opened.error().message() << "\n";
        return 1;
      }
      mapped.emplace(std::move(*opened));
    }
    const std::string key = meta.shared ? file : meta.app + ":" + meta.build_id;
    RdKafka::Headers* headers = RdKafka::Headers::create();
    for (const auto& [name, value] : worker::encodeUploadHeaders(upload)) headers->add(name, value);
    std::string_view bytes = mapped ? mapped->bytes() : std::string_view();
    RdKafka::ErrorCode code = (*producer)->produce(topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                                   const_cast<char*>(bytes.data()), bytes.size(), key.data(),
                                                   key.size(), 0, headers, nullptr);
    if (code != RdKafka::ERR_NO_ERROR) {
      delete headers;
      std::cerr << "restack ingest: cannot publish " << file << ": " << worker::errorText(code)
                << (code == RdKafka::ERR_MSG_SIZE_TOO_LARGE
                        ? " (upload the file to shared storage and pass --location file://… or https://…)"
                        : "")
                << "\n";
      return 1;
    }
  }
  if ((*producer)->flush(60000) != RdKafka::ERR_NO_ERROR || (*producer)->outq_len() > 0) {
    std::cerr << "restack ingest: the brokers did not acknowledge the upload within 60 s\n";
    return 1;
  }
  std::cout << "published " << flags.files.size() << " upload(s) to " << topic << "\n";
  return 0;
}

int run(const IngestFlags& flags) {
  auto meta = metaFrom(flags);
  if (!meta) {
    std::cerr << "restack ingest: " << meta.error().message() << "\n";
    return 2;
  }
  if (flags.publish == !flags.store.empty()) {
    std::cerr << "restack ingest: pass either --store DIR (parse locally) or --publish (send to Kafka)\n";
    return 2;
  }
  return flags.publish ? publish(flags, *meta) : ingestIntoStore(flags, *meta);
}

}  // namespace

Command addIngestCommand(CLI::App& app) {
  auto flags = std::make_shared<IngestFlags>();
  CLI::App* command = app.add_subcommand(
      "ingest",
      "Parse symbol files (dSYM folder or zip, also a folder or zip of several: Xcode's dSYMs, App Store Connect's "
      "download; Mach-O, ELF .so, the Android Gradle plugin's native-debug-symbols.zip, Breakpad .sym or a zip of "
      "them, ProGuard/R8 mapping.txt, source map or a bundle with its map inline; gzip/zstd accepted) into a local "
      "symbol store, or publish them to the symbols topic for the workers.");
  command->add_option("files", flags->files, "Symbol files, .dSYM folders or folders of them")->required();
  command->add_option("--store", flags->store, "Parse into this local store folder");
  command->add_flag("--publish", flags->publish, "Publish to restack.symbols (or .shared) instead");
  command->add_option("--kind", flags->kind, symbolKindList(" | ", " | ") + " (default: detected)");
  command->add_option("--app", flags->app, "App the files belong to");
  command->add_option("--build", flags->build, "Build id the files belong to");
  command->add_option("--name", flags->name, "Source maps: the minified file the map serves");
  command->add_flag("--shared", flags->shared, "System/shared images that serve every app");
  command->add_option("--brokers", flags->brokers, "With --publish: Kafka bootstrap servers");
  command->add_option("--config", flags->config_path,
                      "With --publish: take brokers, topics and TLS/SASL from this file");
  command->add_option("--location", flags->location,
                      "With --publish: the file is at this file:// or https:// location (large files); the message "
                      "carries only the reference");
  return [flags] { return run(*flags); };
}

}  // namespace restack::cli

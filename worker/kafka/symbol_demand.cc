#include "worker/kafka/symbol_demand.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "formats/stack/js_line.h"
#include "formats/stack/native_line.h"
#include "formats/stack/stack_line.h"
#include "worker/kafka/clients.h"
#include "worker/pipeline/json_writer.h"

namespace restack::worker {
namespace {

std::string_view stringField(simdjson::dom::element object, std::string_view name) {
  std::string_view value;
  if (object[name].get_string().get(value) != simdjson::SUCCESS) return {};
  return value;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view lastSegment(std::string_view text) {
  const size_t slash = text.find_last_of('/');
  return slash == std::string_view::npos ? text : text.substr(slash + 1);
}

// The image (native) or file (JavaScript) a raw frame printed, for the record's `module`.
std::string moduleOf(std::string_view raw) {
  const stack::StackLine line = stack::parseStackLine(raw);
  if (const auto* native = stack::asNative(line)) return native->module;
  if (const auto* js = stack::asJsFrame(line)) return std::string(lastSegment(js->url));
  return {};
}

using FoundDemand = std::map<std::pair<std::string, std::string>, DemandRecord>;

// Counts one frame with status missing_symbols into `found`, keyed by kind and identifier.
void countMissingFrame(std::string_view kind, std::string_view id, std::string_view module, std::string_view raw,
                       FoundDemand& found) {
  if (id.empty()) return;
  DemandRecord& record = found[{std::string(kind), std::string(id)}];
  if (record.frames == 0) {
    record.kind = std::string(kind);
    record.identifier = std::string(id);
    record.module = std::string(module);
    if (record.module.empty()) record.module = moduleOf(raw);
  }
  ++record.frames;
}

// Adds the missing frames of one stack's "frames" array to `found`.
void collectFrames(simdjson::dom::element stack, FoundDemand& found) {
  simdjson::dom::array frames;
  if (stack["frames"].get_array().get(frames) != simdjson::SUCCESS) return;
  for (simdjson::dom::element frame : frames) {
    // An operating-system image's frame (reason system_image) is not waited for.
    if (stringField(frame, "status") != "missing_symbols" || stringField(frame, "reason") == "system_image") continue;
    countMissingFrame(stringField(frame, "kind"), stringField(frame, "missing_id"), stringField(frame, "module"),
                      stringField(frame, "raw"), found);
  }
}

std::vector<DemandRecord> demandRecords(FoundDemand& found, std::string_view app, std::string_view build_id,
                                        std::string_view platform, int64_t seen_ms) {
  std::vector<DemandRecord> out;
  out.reserve(found.size());
  for (auto& [key, record] : found) {
    record.app = std::string(app);
    record.build_id = std::string(build_id);
    record.platform = std::string(platform);
    record.first_seen_ms = record.last_seen_ms = seen_ms;
    record.events = 1;
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace

std::string DemandRecord::key() const {
  return app + ":" + build_id + ":" + kind + ":" + identifier;
}

std::string encodeDemandRecord(const DemandRecord& record) {
  pipeline::JsonWriter json;
  json.beginObject();
  json.key("version");
  json.unsignedNumber(kDemandRecordVersion);
  json.key("app");
  json.string(record.app);
  json.key("build_id");
  json.string(record.build_id);
  json.key("platform");
  json.string(record.platform);
  json.key("kind");
  json.string(record.kind);
  json.key("identifier");
  json.string(record.identifier);
  json.key("module");
  json.string(record.module);
  json.key("first_seen");
  json.number(record.first_seen_ms);
  json.key("last_seen");
  json.number(record.last_seen_ms);
  json.key("events");
  json.unsignedNumber(record.events);
  json.key("frames");
  json.unsignedNumber(record.frames);
  json.endObject();
  return json.take();
}

Expected<DemandRecord> decodeDemandRecord(std::string_view value) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(value.data(), value.size()).get(root) != simdjson::SUCCESS || !root.is_object()) {
    return malformed("symbol-demand record: not a JSON object");
  }
  uint64_t version = 0;
  if (root["version"].get_uint64().get(version) != simdjson::SUCCESS) {
    return malformed("symbol-demand record: no numeric 'version'");
  }
  if (version != kDemandRecordVersion) {
    return malformed("symbol-demand record: version " + std::to_string(version) + " is not known (this release reads " +
                     std::to_string(kDemandRecordVersion) + ")");
  }
  DemandRecord record;
  record.app = std::string(stringField(root, "app"));
  record.build_id = std::string(stringField(root, "build_id"));
  record.platform = std::string(stringField(root, "platform"));
  record.kind = std::string(stringField(root, "kind"));
  record.identifier = std::string(stringField(root, "identifier"));
  record.module = std::string(stringField(root, "module"));
  if (record.app.empty() || record.kind.empty() || record.identifier.empty()) {
    return malformed("symbol-demand record: 'app', 'kind' and 'identifier' are required");
  }
  if (root["first_seen"].get_int64().get(record.first_seen_ms) != simdjson::SUCCESS ||
      root["last_seen"].get_int64().get(record.last_seen_ms) != simdjson::SUCCESS ||
      root["events"].get_uint64().get(record.events) != simdjson::SUCCESS ||
      root["frames"].get_uint64().get(record.frames) != simdjson::SUCCESS) {
    return malformed("symbol-demand record: 'first_seen', 'last_seen', 'events' and 'frames' must be numbers");
  }
  return record;
}

Expected<std::vector<DemandRecord>> demandOfRestoredEvent(std::string_view restored_event, int64_t seen_ms) {
  // One parser per thread: its buffers are reused from event to event instead of allocated anew.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(restored_event.data(), restored_event.size()).get(root) != simdjson::SUCCESS || !root.is_object()) {
    return malformed("restored event: not a JSON object");
  }
  FoundDemand found;
  simdjson::dom::array threads;
  if (root["threads"].get_array().get(threads) == simdjson::SUCCESS) {
    for (simdjson::dom::element thread : threads) {
      collectFrames(thread, found);
      simdjson::dom::array samples;
      if (thread["samples"].get_array().get(samples) != simdjson::SUCCESS) continue;
      for (simdjson::dom::element sample : samples) collectFrames(sample, found);
    }
  }
  return demandRecords(found, stringField(root, "app"), stringField(root, "build_id"), stringField(root, "platform"),
                       seen_ms);
}

std::vector<DemandRecord> demandOfMissingFrames(const pipeline::ProcessResult& result, int64_t seen_ms) {
  if (result.missing_frames.empty()) return {};
  FoundDemand found;
  for (const pipeline::MissingFrame& frame : result.missing_frames) {
    countMissingFrame(frame.kind, frame.missing_id, frame.module, frame.raw, found);
  }
  return demandRecords(found, result.app, result.build_id, result.platform, seen_ms);
}

bool uploadServes(const UploadMeta& meta, const IngestReport& report, const DemandRecord& record) {
  const bool native = record.kind == "native";
  if (!meta.shared && !native && (meta.app != record.app || meta.build_id != record.build_id)) return false;
  for (const std::string& id : report.ids) {
    if (equalsIgnoringCase(id, record.identifier)) return true;
    if (record.kind == "js" && !id.empty() && lastSegment(record.identifier) == id) return true;
  }
  return false;
}

// --- SymbolDemand ---------------------------------------------------------------------------

void SymbolDemand::begin() {
  in_turn_ = true;
  undo_.clear();
  resolving_.clear();
  last_flush_before_ = last_flush_ms_;
  changed_before_ = changed_;
  untracked_before_ = untracked_;
}

void SymbolDemand::commit() {
  in_turn_ = false;
  undo_.clear();
  resolving_.clear();
}

void SymbolDemand::abort() {
  for (auto& [key, before] : undo_) {
    if (before) {
      entries_[key] = std::move(*before);
    } else {
      entries_.erase(key);
    }
  }
  to_resolve_.insert(resolving_.begin(), resolving_.end());
  last_flush_ms_ = last_flush_before_;
  changed_ = changed_before_;
  untracked_ = untracked_before_;
  commit();
}

void SymbolDemand::remember(const std::string& key) {
  if (!in_turn_ || undo_.count(key)) return;
  auto found = entries_.find(key);
  undo_.emplace(key, found == entries_.end() ? std::nullopt : std::optional<Entry>(found->second));
}

void SymbolDemand::observe(int32_t partition, const std::vector<DemandRecord>& missed) {
  for (const DemandRecord& seen : missed) {
    const std::string key = seen.key();
    auto found = entries_.find(key);
    if (found == entries_.end()) {
      if (entries_.size() >= options_.max_keys) {
        ++untracked_;
        continue;
      }
      remember(key);
      Entry entry;
      entry.record = seen;
      entry.partition = partition;
      entry.dirty = true;
      entries_.emplace(key, std::move(entry));
      changed_ = true;
      continue;
    }
    remember(key);
    Entry& entry = found->second;
    DemandRecord& record = entry.record;
    record.events += seen.events;
    record.frames += seen.frames;
    record.first_seen_ms = std::min(record.first_seen_ms, seen.first_seen_ms);
    record.last_seen_ms = std::max(record.last_seen_ms, seen.last_seen_ms);
    if (record.module.empty()) record.module = seen.module;
    if (record.platform.empty()) record.platform = seen.platform;
    entry.partition = partition;
    entry.dirty = true;
    changed_ = true;
  }
}

size_t SymbolDemand::resolve(const UploadMeta& meta, const IngestReport& report) {
  size_t met = 0;
  for (const auto& [key, entry] : entries_) {
    if (uploadServes(meta, report, entry.record) && to_resolve_.insert(key).second) ++met;
  }
  return met;
}

bool SymbolDemand::flushDue(int64_t now_ms) const {
  if (!to_resolve_.empty()) return true;
  return changed_ && now_ms - last_flush_ms_ >= options_.flush_interval_ms;
}

std::vector<DemandOutput> SymbolDemand::flush(int64_t now_ms) {
  std::vector<DemandOutput> out;
  for (const std::string& key : to_resolve_) {
    auto found = entries_.find(key);
    if (found == entries_.end()) continue;  // its partition moved away meanwhile
    remember(key);
    out.push_back({found->second.partition, key, std::nullopt});
    entries_.erase(found);
    resolving_.insert(key);
  }
  to_resolve_.clear();
  for (auto& [key, entry] : entries_) {
    if (!entry.dirty) continue;
    remember(key);
    out.push_back({entry.partition, key, encodeDemandRecord(entry.record)});
    entry.dirty = false;
  }
  last_flush_ms_ = now_ms;
  changed_ = false;
  return out;
}

Status SymbolDemand::seed(int32_t partition, std::string_view key, std::optional<std::string_view> value) {
  const std::string name(key);
  if (!value) {
    entries_.erase(name);
    return Status::ok();
  }
  auto record = decodeDemandRecord(*value);
  if (!record) return record.error().withContext("key " + name);
  if (record->key() != name) {
    return malformed("key " + name + ": the record names " + record->key());
  }
  if (!entries_.count(name) && entries_.size() >= options_.max_keys) {
    ++untracked_;
    return Status::ok();
  }
  entries_[name] = Entry{std::move(*record), partition, false};
  return Status::ok();
}

void SymbolDemand::dropPartition(int32_t partition) {
  std::erase_if(entries_, [&](const auto& entry) { return entry.second.partition == partition; });
  std::erase_if(to_resolve_, [&](const std::string& key) { return !entries_.count(key); });
}

const DemandRecord* SymbolDemand::find(const std::string& key) const {
  auto found = entries_.find(key);
  return found == entries_.end() ? nullptr : &found->second.record;
}

std::vector<DemandRecord> SymbolDemand::records() const {
  std::vector<DemandRecord> out;
  for (const auto& [key, entry] : entries_) out.push_back(entry.record);
  return out;
}

// --- reading the topic ----------------------------------------------------------------------

Status readDemandPartitions(RdKafka::KafkaConsumer& reader, const std::string& topic,
                            const std::vector<int32_t>& partitions, std::chrono::milliseconds stall,
                            const DemandApply& apply) {
  if (partitions.empty()) return Status::ok();
  std::vector<RdKafka::TopicPartition*> list;
  for (int32_t partition : partitions) {
    list.push_back(RdKafka::TopicPartition::create(topic, partition, RdKafka::Topic::OFFSET_BEGINNING));
  }
  RdKafka::ErrorCode code = reader.assign(list);
  for (auto* p : list) delete p;
  if (code != RdKafka::ERR_NO_ERROR) return ioError("cannot assign " + topic + " partitions: " + errorText(code));
  std::set<int32_t> remaining(partitions.begin(), partitions.end());
  auto last_progress = std::chrono::steady_clock::now();
  Status outcome;
  while (!remaining.empty() && outcome.isOk()) {
    if (std::chrono::steady_clock::now() - last_progress > stall) {
      std::string left;
      for (int32_t partition : remaining) left += (left.empty() ? "" : ",") + std::to_string(partition);
      outcome = ioError(topic + " made no progress for " + std::to_string(stall.count()) + " ms, partition(s) " + left +
                        " not read to their end; are the brokers reachable?");
      break;
    }
    std::unique_ptr<RdKafka::Message> message(reader.consume(200));
    switch (message->err()) {
      case RdKafka::ERR__TIMED_OUT:
        continue;
      case RdKafka::ERR__PARTITION_EOF:
        remaining.erase(message->partition());
        last_progress = std::chrono::steady_clock::now();
        continue;
      case RdKafka::ERR_NO_ERROR:
        last_progress = std::chrono::steady_clock::now();
        break;
      case RdKafka::ERR__UNKNOWN_PARTITION:
      case RdKafka::ERR__UNKNOWN_TOPIC:
      case RdKafka::ERR_UNKNOWN_TOPIC_OR_PART:
        outcome = notFound(topic + " partition " + std::to_string(message->partition()) + ": " + message->errstr());
        continue;
      default:
        continue;  // passing errors (a broker restarting); the stall limit bounds them
    }
    const std::string key = message->key() ? *message->key() : std::string();
    std::optional<std::string_view> value;
    if (message->payload() != nullptr) {
      value = std::string_view(static_cast<const char*>(message->payload()), message->len());
    }
    outcome = apply(message->partition(), key, value);
  }
  reader.unassign();
  return outcome;
}

Expected<int> demandTopicPartitions(RdKafka::Handle& handle, const std::string& topic,
                                    std::chrono::milliseconds timeout) {
  std::string error;
  std::unique_ptr<RdKafka::Topic> named(RdKafka::Topic::create(&handle, topic, nullptr, error));
  if (!named) return invalidArgument("topic " + topic + ": " + error);
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode code = handle.metadata(false, named.get(), &raw, static_cast<int>(timeout.count()));
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (code != RdKafka::ERR_NO_ERROR) {
    return Error(ErrorCode::kUnavailable, "no answer from the brokers about " + topic + " within " +
                                              std::to_string(timeout.count()) + " ms (" + errorText(code) +
                                              "); are kafka.brokers right and reachable?");
  }
  for (const RdKafka::TopicMetadata* found : *metadata->topics()) {
    if (found->topic() != topic) continue;
    if (found->err() == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART) return notFound("topic " + topic + " does not exist");
    if (found->err() != RdKafka::ERR_NO_ERROR) return ioError("topic " + topic + ": " + errorText(found->err()));
    if (found->partitions()->empty()) return notFound("topic " + topic + " does not exist");
    return static_cast<int>(found->partitions()->size());
  }
  return notFound("topic " + topic + " does not exist");
}

}  // namespace restack::worker

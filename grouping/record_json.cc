// JSON writer for the fingerprint record (record_json.h).
#include "grouping/record_json.h"

#include <cstdio>

namespace restack::grouping {
namespace {

constexpr size_t kMaxChainEntries = 16;
constexpr size_t kMaxChainStringBytes = 512;

// At most kMaxChainStringBytes, never inside a UTF-8 sequence.
std::string_view cut(std::string_view text) {
  if (text.size() <= kMaxChainStringBytes) return text;
  size_t end = kMaxChainStringBytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  ~ObjectWriter() { out_ += '}'; }
  void key(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    appendJsonString(out_, name);
    out_ += ':';
  }
  void string(std::string_view name, std::string_view value) {
    key(name);
    appendJsonString(out_, value);
  }
  void optionalString(std::string_view name, std::string_view value) {
    if (!value.empty()) string(name, value);
  }
  void number(std::string_view name, uint64_t value) {
    key(name);
    out_ += std::to_string(value);
  }
  void fraction(std::string_view name, double value) {
    key(name);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    out_ += buffer;
  }
  // [{"type":…,"message":…,"relation":"caused_by"}], relation only when not the thrown one.
  // Bounded here: the worker's record fitting (worker/pipeline/output_record.cc) cuts strings
  // and lists but copies objects inside lists whole.
  void exceptions(std::string_view name, const std::vector<GroupingException>& chain) {
    key(name);
    out_ += '[';
    for (size_t i = 0; i < chain.size() && i < kMaxChainEntries; ++i) {
      if (i > 0) out_ += ',';
      std::string item;
      {
        ObjectWriter object(item);
        object.string("type", cut(chain[i].type));
        object.string("message", cut(chain[i].message));
        object.optionalString("relation", chain[i].relation);
      }
      out_ += item;
    }
    out_ += ']';
  }
  void list(std::string_view name, const std::vector<std::string>& values) {
    key(name);
    out_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out_ += ',';
      appendJsonString(out_, values[i]);
    }
    out_ += ']';
  }

 private:
  std::string& out_;
  bool first_ = true;
};

}  // namespace

std::string fingerprintRecordJson(const GroupingInput& input, const Fingerprint& fingerprint) {
  std::string out;
  out.reserve(512);
  {
    ObjectWriter record(out);
    record.string("app", input.app);
    record.string("fingerprint", fingerprint.hash);
    record.string("algorithm", fingerprint.algorithm);
    record.string("kind", input.kind);
    record.string("platform", input.platform);
    record.optionalString("event_id", input.event_id);
    record.optionalString("build_id", input.build_id);
    if (input.timestamp_ms != 0) record.number("timestamp_ms", input.timestamp_ms);
    record.string("quality", qualityName(fingerprint.quality));
    record.string("source", fingerprintSourceName(fingerprint.source));
    record.optionalString("stack", fingerprint.stack);
    record.optionalString("exception_type", fingerprint.exception_type);
    record.string("title", fingerprint.title);
    record.optionalString("culprit", fingerprint.culprit);
    if (!fingerprint.exceptions.empty()) record.exceptions("exceptions", fingerprint.exceptions);
    record.list("frames", fingerprint.frames_used);
    record.list("rules", fingerprint.rules_applied);
    if (input.kind == "lag") {
      record.fraction("lag_share", fingerprint.lag_share);
      record.number("lag_samples", fingerprint.lag_samples);
    }
    record.optionalString("replaces", fingerprint.replaces);
  }
  return out;
}

}  // namespace restack::grouping

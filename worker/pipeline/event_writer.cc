#include "worker/pipeline/event_writer.h"

#include <algorithm>

#include "worker/pipeline/json_writer.h"
#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {
namespace {

void writeSymbolizedFields(JsonWriter& json, const SymbolizedFrame& frame) {
  if (!frame.function.empty()) {
    json.key("function");
    json.string(frame.function);
  }
  if (!frame.file.empty()) {
    json.key("file");
    json.string(frame.file);
  }
  if (frame.line != 0) {
    json.key("line");
    json.unsignedNumber(frame.line);
  }
  if (frame.column != 0) {
    json.key("column");
    json.unsignedNumber(frame.column);
  }
  if (!frame.module.empty()) {
    json.key("module");
    json.string(frame.module);
  }
  if (frame.symbol_offset != 0) {
    json.key("symbol_offset");
    json.unsignedNumber(frame.symbol_offset);
  }
  if (!frame.clone.empty()) {
    json.key("clone");
    json.string(frame.clone);
  }
  if (!frame.scope.empty()) {
    json.key("scope");
    json.string(frame.scope);
  }
}

// The distinct innermost function of each answer of an ambiguous frame, the chosen one first.
void writeCandidates(JsonWriter& json, const OutputFrame& frame) {
  std::vector<std::string_view> names{frame.frame.function};
  for (const auto& alternative : frame.alternatives) {
    if (!alternative.empty() && std::find(names.begin(), names.end(), alternative.front().function) == names.end()) {
      names.push_back(alternative.front().function);
    }
  }
  json.key("candidates");
  json.beginArray();
  for (std::string_view name : names) json.string(name);
  json.endArray();
}

void writeFrame(JsonWriter& json, const OutputFrame& frame) {
  json.beginObject();
  json.key("raw");
  json.string(frame.raw);
  json.key("status");
  json.name(frameStatusName(frame.status));
  // Only on frames not fully restored (docs/design.md §5): restored frames keep their shape.
  if (frame.reason != FrameReason::kNone) {
    json.key("reason");
    json.name(frameReasonName(frame.reason));
  }
  json.key("kind");
  json.name(kindName(frame.kind));
  writeSymbolizedFields(json, frame.frame);
  if (frame.status == FrameStatus::kSymbolicated) {
    json.key("inlined");
    json.boolean(frame.frame.inlined);
  }
  if (frame.frame.in_app) {
    json.key("in_app");
    json.boolean(*frame.frame.in_app);
  }
  if (!frame.tier.empty()) {
    json.key("tier");
    json.name(frame.tier);  // a name the code spells (FrameLookup::tier): nothing to escape
  }
  if (!frame.missing_id.empty()) {
    json.key("missing_id");
    json.string(frame.missing_id);
  }
  if (frame.missing_id_kind != MissingIdKind::kNone) {
    json.key("missing_id_kind");
    json.name(missingIdKindName(frame.missing_id_kind));
  }
  if (!frame.device_symbol.empty()) {
    json.key("device_symbol");
    json.string(frame.device_symbol);
  }
  if (frame.reason == FrameReason::kAmbiguous && !frame.alternatives.empty()) writeCandidates(json, frame);
  if (!frame.note.empty()) {
    json.key("note");
    json.string(frame.note);
  }
  if (!frame.frame.context_lines.empty()) {
    json.key("context");
    json.beginObject();
    json.key("first_line");
    json.unsignedNumber(frame.frame.context_first_line);
    json.key("lines");
    json.beginArray();
    for (const auto& line : frame.frame.context_lines) json.string(line);
    json.endArray();
    json.endObject();
  }
  if (!frame.alternatives.empty()) {
    json.key("alternatives");
    json.beginArray();
    for (const auto& alternative : frame.alternatives) {
      json.beginArray();
      for (const SymbolizedFrame& candidate : alternative) {
        json.beginObject();
        writeSymbolizedFields(json, candidate);
        json.key("inlined");
        json.boolean(candidate.inlined);
        json.endObject();
      }
      json.endArray();
    }
    json.endArray();
  }
  json.endObject();
}

// Writing state shared by the helpers: the shape asked for, what was dropped, whether the output
// already grew past shape.max_bytes (then the caller discards it).
struct Writer {
  JsonWriter json;
  const OutputShape& shape;
  uint64_t frames_dropped = 0;
  bool over() const { return json.size() > shape.max_bytes; }
};

void writeStack(Writer& w, const std::string& raw_stack, const RestoredStack& stack) {
  JsonWriter& json = w.json;
  json.key("stack");
  json.string(raw_stack);
  json.key("frames");
  json.beginArray();
  const size_t kept = std::min(stack.frames.size(), w.shape.frames_per_stack);
  for (size_t i = 0; i < kept && !w.over(); ++i) writeFrame(json, stack.frames[i]);
  json.endArray();
  if (kept < stack.frames.size()) {
    json.key("frames_dropped");
    json.unsignedNumber(stack.frames.size() - kept);
    w.frames_dropped += stack.frames.size() - kept;
  }
  if (w.shape.restored_text) {
    json.key("restored");
    json.string(stack.restored_text);
  }
}

void writePassthrough(JsonWriter& json, const std::vector<RawField>& fields) {
  for (const RawField& field : fields) {
    json.key(field.key);
    json.raw(field.json);
  }
}

size_t largestStack(const RestoredEvent& restored) {
  size_t largest = 0;
  for (const RestoredThread& thread : restored.threads) {
    largest = std::max(largest, thread.stack.frames.size());
    for (const RestoredStack& sample : thread.samples) largest = std::max(largest, sample.frames.size());
  }
  return largest;
}

// About the size of the whole output (frames' fixed keys and values at ~160 bytes each), so that
// the writer allocates once for most events instead of copying a large one as it grows.
size_t estimatedBytes(const RawEvent& raw, const RestoredEvent& restored, std::string_view fingerprint_json) {
  size_t bytes = 256 + fingerprint_json.size();
  auto fields = [&bytes](const std::vector<RawField>& passthrough) {
    for (const RawField& field : passthrough) bytes += field.key.size() + field.json.size() + 4;
  };
  auto stack = [&bytes](const RestoredStack& restored_stack) {
    bytes += restored_stack.restored_text.size() + 64;
    for (const OutputFrame& frame : restored_stack.frames) {
      bytes += 160 + frame.raw.size() + frame.frame.function.size() + frame.frame.file.size() +
               frame.frame.module.size() + frame.device_symbol.size();
    }
  };
  fields(raw.passthrough);
  for (const RawThread& thread : raw.threads) {
    fields(thread.passthrough);
    bytes += thread.stack.size();
    for (const RawSample& sample : thread.samples) {
      fields(sample.passthrough);
      bytes += sample.stack.size();
    }
  }
  for (const RestoredThread& thread : restored.threads) {
    stack(thread.stack);
    for (const RestoredStack& sample : thread.samples) stack(sample);
  }
  return bytes;
}

}  // namespace

std::string writeRestoredEvent(const RawEvent& raw, const RestoredEvent& restored,
                               const EventFingerprint& fingerprint) {
  return *writeRestoredEvent(raw, restored, fingerprint.record_json, OutputShape{});
}

std::optional<std::string> writeRestoredEvent(const RawEvent& raw, const RestoredEvent& restored,
                                              std::string_view fingerprint_json, const OutputShape& shape) {
  Writer w{JsonWriter{}, shape};
  JsonWriter& json = w.json;
  json.reserve(std::min(estimatedBytes(raw, restored, fingerprint_json), shape.max_bytes));
  json.beginObject();
  writePassthrough(json, raw.passthrough);
  json.key("threads");
  json.beginArray();
  for (size_t t = 0; t < raw.threads.size() && !w.over(); ++t) {
    const RawThread& thread = raw.threads[t];
    const RestoredThread& out = restored.threads[t];
    json.beginObject();
    writePassthrough(json, thread.passthrough);
    if (thread.has_stack) writeStack(w, thread.stack, out.stack);
    if (!thread.samples.empty()) {
      json.key("samples");
      json.beginArray();
      for (size_t s = 0; s < thread.samples.size() && !w.over(); ++s) {
        json.beginObject();
        writePassthrough(json, thread.samples[s].passthrough);
        writeStack(w, thread.samples[s].stack, out.samples[s]);
        json.endObject();
      }
      json.endArray();
    }
    json.endObject();
  }
  json.endArray();
  if (w.over()) return std::nullopt;

  json.key("symbolication");
  json.beginObject();
  json.key("status");
  json.name(symbolicationStateName(restored.state));
  json.key("missing");
  json.beginArray();
  for (const std::string& id : restored.missing_ids) json.string(id);
  json.endArray();
  json.key("frames_total");
  json.unsignedNumber(restored.frames_total);
  json.key("frames_symbolicated");
  json.unsignedNumber(restored.frames_symbolicated);
  if (restored.exception_type != raw.exception_type) {
    json.key("exception_type");
    json.string(restored.exception_type);
  }
  if (restored.exception_message != raw.exception_message) {
    json.key("exception_message");
    json.string(restored.exception_message);
  }
  if (!shape.restored_text || w.frames_dropped > 0) {
    json.key("truncated");
    json.beginObject();
    json.key("max_output_bytes");
    json.unsignedNumber(shape.max_output_bytes);
    json.key("restored_dropped");
    json.boolean(!shape.restored_text);
    if (w.frames_dropped > 0) {
      json.key("frames_dropped");
      json.unsignedNumber(w.frames_dropped);
      json.key("frames_per_stack");
      json.unsignedNumber(shape.frames_per_stack);
    }
    json.endObject();
  }
  json.endObject();

  json.key("fingerprint");
  json.raw(fingerprint_json);
  json.endObject();
  if (w.over()) return std::nullopt;
  return json.take();
}

std::optional<std::string> writeRestoredEventWithin(const RawEvent& raw, const RestoredEvent& restored,
                                                    std::string_view fingerprint_json, size_t max_output_bytes,
                                                    size_t max_frames_per_thread, OutputShape* chosen) {
  OutputShape shape;
  shape.max_bytes = max_output_bytes;
  shape.max_output_bytes = max_output_bytes;
  auto attempt = [&]() {
    auto written = writeRestoredEvent(raw, restored, fingerprint_json, shape);
    if (written && chosen != nullptr) *chosen = shape;
    return written;
  };
  if (auto whole = attempt()) return whole;
  shape.restored_text = false;
  if (auto text_dropped = attempt()) return text_dropped;
  const size_t largest = largestStack(restored);
  size_t cap = std::max<size_t>(1, std::min(largest, max_frames_per_thread));
  if (cap == largest) cap /= 2;  // every frame was tried already
  for (; cap >= 1; cap /= 2) {
    shape.frames_per_stack = cap;
    if (auto capped = attempt()) return capped;
  }
  return std::nullopt;
}

}  // namespace restack::pipeline

#include "worker/pipeline/event_writer.h"

#include "worker/pipeline/json_writer.h"

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
}

void writeFrame(JsonWriter& json, const OutputFrame& frame) {
  json.beginObject();
  json.key("raw");
  json.string(frame.raw);
  json.key("status");
  json.string(frameStatusName(frame.status));
  json.key("kind");
  json.string(frameFamilyName(frame.family));
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
    json.string(frame.tier);
  }
  if (!frame.missing_id.empty()) {
    json.key("missing_id");
    json.string(frame.missing_id);
  }
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

void writeStack(JsonWriter& json, const std::string& raw_stack, const RestoredStack& stack) {
  json.key("stack");
  json.string(raw_stack);
  json.key("frames");
  json.beginArray();
  for (const OutputFrame& frame : stack.frames) writeFrame(json, frame);
  json.endArray();
  json.key("restored");
  json.string(stack.restored_text);
}

void writePassthrough(JsonWriter& json, const std::vector<RawField>& fields) {
  for (const RawField& field : fields) {
    json.key(field.key);
    json.raw(field.json);
  }
}

}  // namespace

std::string writeRestoredEvent(const RawEvent& raw, const RestoredEvent& restored,
                               const EventFingerprint& fingerprint) {
  JsonWriter json;
  json.beginObject();
  writePassthrough(json, raw.passthrough);
  json.key("threads");
  json.beginArray();
  for (size_t t = 0; t < raw.threads.size(); ++t) {
    const RawThread& thread = raw.threads[t];
    const RestoredThread& out = restored.threads[t];
    json.beginObject();
    writePassthrough(json, thread.passthrough);
    if (thread.has_stack) writeStack(json, thread.stack, out.stack);
    if (!thread.samples.empty()) {
      json.key("samples");
      json.beginArray();
      for (size_t s = 0; s < thread.samples.size(); ++s) {
        json.beginObject();
        writePassthrough(json, thread.samples[s].passthrough);
        writeStack(json, thread.samples[s].stack, out.samples[s]);
        json.endObject();
      }
      json.endArray();
    }
    json.endObject();
  }
  json.endArray();

  json.key("symbolication");
  json.beginObject();
  json.key("status");
  json.string(symbolicationStateName(restored.state));
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
  json.endObject();

  json.key("fingerprint");
  json.raw(fingerprint.record_json);
  json.endObject();
  return json.take();
}

}  // namespace restack::pipeline

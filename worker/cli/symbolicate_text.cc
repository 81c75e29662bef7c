#include "worker/cli/symbolicate_text.h"

#include <simdjson.h>

#include "symbolstore/frame_lookup.h"
#include "worker/pipeline/json_writer.h"

namespace restack::cli {

std::string rawEventFromReport(const crash_report::CrashReport& report, std::string_view app, std::string_view build) {
  pipeline::JsonWriter json;
  json.beginObject();
  json.key("event_id");
  json.string("pasted-report");
  json.key("kind");
  json.string(report.kind);
  json.key("platform");
  json.string(report.platform);
  json.key("app");
  json.string(app);
  json.key("build_id");
  json.string(build);
  if (!report.exception_type.empty() || !report.exception_message.empty()) {
    json.key("exception");
    json.beginObject();
    json.key("type");
    json.string(report.exception_type);
    json.key("message");
    json.string(report.exception_message);
    json.endObject();
  }
  json.key("threads");
  json.beginArray();
  for (const crash_report::ReportThread& thread : report.threads) {
    json.beginObject();
    json.key("name");
    json.string(thread.name);
    json.key("crashed");
    json.boolean(thread.crashed);
    json.key("stack");
    json.string(thread.stack);
    json.endObject();
  }
  json.endArray();
  json.endObject();
  return json.take();
}

namespace {

// Why a frame is not (fully) restored: its `reason` worded as in the `restored` text
// (notRestoredText, symbolstore/frame_lookup.h), then its `note`.
std::string reasonText(simdjson::dom::element frame, bool restored) {
  std::string_view reason, id_kind, missing_id, note;
  if (frame["reason"].get(reason)) reason = "";
  if (frame["missing_id_kind"].get(id_kind)) id_kind = "";
  if (frame["missing_id"].get(missing_id)) missing_id = "";
  if (frame["note"].get(note)) note = "";
  std::string text = restored ? std::string(reason) : notRestoredText(reason, id_kind, missing_id);
  if (restored) {
    simdjson::dom::array candidates;
    if (!frame["candidates"].get(candidates)) {
      std::string_view name;
      const char* separator = " ";
      for (simdjson::dom::element candidate : candidates) {
        if (candidate.get(name)) continue;
        text += separator + std::string(name);
        separator = " | ";
      }
    }
  }
  if (!note.empty()) text += " (" + std::string(note) + ")";
  return text;
}

}  // namespace

Expected<std::string> formatRestoredReport(const crash_report::CrashReport& report,
                                           std::string_view restored_event_json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(restored_event_json);
  simdjson::dom::element event;
  if (auto error = parser.parse(padded).get(event)) {
    return malformed(std::string("restored event is not JSON: ") + simdjson::error_message(error));
  }
  std::string out = std::string(crash_report::reportFormatName(report.format)) + " (" + report.platform + ")";
  std::string_view app, build;
  if (!event["app"].get(app)) out += ", app " + std::string(app);
  if (!event["build_id"].get(build)) out += ", build " + std::string(build);
  out += "\n";
  // The exception as restored (a deobfuscated Java class), else as the report printed it.
  std::string type = report.exception_type, message = report.exception_message;
  std::string_view restored_type, restored_message;
  if (!event["symbolication"]["exception_type"].get(restored_type)) type = std::string(restored_type);
  if (!event["symbolication"]["exception_message"].get(restored_message)) message = std::string(restored_message);
  if (!type.empty()) out += type + (message.empty() ? "" : ": " + message) + "\n";
  std::string missing_lines, partial_lines;
  simdjson::dom::array threads;
  if (!event["threads"].get(threads)) {
    size_t index = 0;
    for (simdjson::dom::element thread : threads) {
      std::string_view name, restored;
      bool crashed = false;
      if (thread["name"].get(name)) name = "";
      if (thread["crashed"].get(crashed)) crashed = false;
      if (thread["restored"].get(restored)) restored = "";
      const std::string header = "Thread " + std::to_string(index);
      out += "\n" + header + (crashed ? " Crashed" : "") + (name.empty() || name == header ? "" : ": ") +
             (name == header ? std::string() : std::string(name)) + "\n" + std::string(restored) + "\n";
      simdjson::dom::array frames;
      if (!thread["frames"].get(frames)) {
        std::string_view last_raw;
        for (simdjson::dom::element frame : frames) {
          std::string_view status, raw, reason;
          if (frame["status"].get(status)) continue;
          // Restored frames are listed only when their reason says something is missing.
          if (status == "symbolicated" && (frame["reason"].get(reason) || reason.empty())) continue;
          if (frame["raw"].get(raw)) raw = "";
          if (raw == last_raw) continue;  // inlined entries repeat their raw line
          last_raw = raw;
          (status == "symbolicated" ? partial_lines : missing_lines) +=
              "  thread " + std::to_string(index) + ": " + std::string(raw) + "\n      " +
              reasonText(frame, status == "symbolicated") + "\n";
        }
      }
      ++index;
    }
  }
  simdjson::dom::element summary;
  if (!event["symbolication"].get(summary)) {
    uint64_t total = 0, restored = 0;
    std::string_view status;
    if (summary["frames_total"].get(total)) total = 0;
    if (summary["frames_symbolicated"].get(restored)) restored = 0;
    if (summary["status"].get(status)) status = "";
    out += "\n" + std::to_string(restored) + " of " + std::to_string(total) + " frames restored (" +
           std::string(status) + ")\n";
  }
  if (!missing_lines.empty()) out += "not restored:\n" + missing_lines;
  if (!partial_lines.empty()) out += "partly restored:\n" + partial_lines;
  for (const std::string& note : report.notes) out += "note: " + note + "\n";
  return out;
}

}  // namespace restack::cli

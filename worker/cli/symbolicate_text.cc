#include "worker/cli/symbolicate_text.h"

#include <simdjson.h>

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

// Why a frame was not restored, in words (the frame's `status`, `missing_id` and `note`).
std::string reason(std::string_view status, std::string_view missing_id, std::string_view note) {
  std::string text;
  if (status == "missing_symbols") {
    text = missing_id.empty() ? "no symbols were given for it" : "no symbols for " + std::string(missing_id);
  } else if (status == "not_found") {
    text = "its symbols do not cover this address or name";
  } else if (status == "unparsed") {
    text = "not a frame Restack can read";
  } else {
    text = std::string(status);
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
  std::string missing_lines;
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
          std::string_view status, raw, missing_id, note;
          if (frame["status"].get(status) || status == "symbolicated") continue;
          if (frame["raw"].get(raw)) raw = "";
          if (raw == last_raw) continue;  // inlined entries repeat their raw line
          last_raw = raw;
          if (frame["missing_id"].get(missing_id)) missing_id = "";
          if (frame["note"].get(note)) note = "";
          missing_lines += "  thread " + std::to_string(index) + ": " + std::string(raw) + "\n      " +
                           reason(status, missing_id, note) + "\n";
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
  for (const std::string& note : report.notes) out += "note: " + note + "\n";
  return out;
}

}  // namespace restack::cli

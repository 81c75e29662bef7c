#include "formats/crash_report/crash_report.h"

#include <simdjson.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <optional>

#include "formats/common/text_lines.h"
#include "formats/stack/java_line.h"
#include "formats/stack/js_line.h"
#include "formats/stack/native_line.h"
#include "formats/stack/text_scan.h"
#include "formats/stack/thread_note_line.h"

namespace restack::crash_report {
namespace {

using stack::scan::parseDecimal;
using stack::scan::parseHex;
using stack::scan::parseU32;
using stack::scan::trim;

// Every line, without the blank ones at the end.
std::vector<std::string_view> reportLines(std::string_view text) {
  std::vector<std::string_view> lines = splitLines(text);
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  return lines;
}

std::string hex(uint64_t value, int width) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%0*" PRIx64, width, value);
  return buffer;
}

// "4c4c44be55553144a18fb1819e548735" or any UUID spelling -> "4c4c44be-5555-3144-a18f-b1819e548735".
std::string dashedUuid(std::string_view text) {
  std::string plain = stack::normalizeDebugId(text);
  if (plain.size() != 32) return plain;
  return plain.substr(0, 8) + "-" + plain.substr(8, 4) + "-" + plain.substr(12, 4) + "-" + plain.substr(16, 4) + "-" +
         plain.substr(20);
}

// "Key:   value" -> value when `line` starts with `key`.
std::optional<std::string_view> field(std::string_view line, std::string_view key) {
  line = trim(line);
  if (!line.starts_with(key)) return std::nullopt;
  return trim(line.substr(key.size()));
}

// "1.0.0 (100)" -> "1.0.0(100)", the build id spelling of docs/design.md §3.
std::string buildIdFromVersion(std::string_view version) {
  std::string build(trim(version));
  size_t paren = build.find(" (");
  if (paren != std::string::npos) build.erase(paren, 1);
  return build;
}

// "TypeError: x is undefined" -> type and message, when the text before ": " reads as a type name.
bool splitTypeAndMessage(std::string_view line, std::string& type, std::string& message) {
  line = trim(line);
  if (line.starts_with("Uncaught ")) line.remove_prefix(9);
  size_t colon = line.find(": ");
  std::string_view name = colon == std::string_view::npos ? line : line.substr(0, colon);
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
    if (!ok) return false;
  }
  type = std::string(name);
  message = colon == std::string_view::npos ? std::string() : std::string(trim(line.substr(colon + 2)));
  return true;
}

// ---- logcat prefixes

// Strips "11-23 10:00:00.123  1234  1250 E AndroidRuntime: ", "E/AndroidRuntime( 1234): " or
// "E AndroidRuntime: " and returns the tag; the message is left in `line`.
std::optional<std::string_view> stripLogcatPrefix(std::string_view& line) {
  std::string_view rest = line;
  // threadtime: date time pid tid level tag: message
  if (rest.size() > 20 && rest[2] == '-' && rest[5] == ' ' && rest[8] == ':') {
    size_t at = 0;
    for (int field_index = 0; field_index < 4; ++field_index) {  // date, time, pid, tid
      while (at < rest.size() && rest[at] == ' ') ++at;
      while (at < rest.size() && rest[at] != ' ') ++at;
    }
    rest = trim(rest.substr(at));
  }
  if (rest.size() < 3) return std::nullopt;
  const char level = rest[0];
  if (std::string_view("VDIWEFA").find(level) == std::string_view::npos) return std::nullopt;
  if (rest[1] == '/') {  // brief: "E/Tag( 1234): message"
    size_t paren = rest.find('(');
    size_t close = rest.find("): ");
    if (paren == std::string_view::npos || close == std::string_view::npos || close < paren) return std::nullopt;
    std::string_view tag = trim(rest.substr(2, paren - 2));
    line = rest.substr(close + 3);
    return tag;
  }
  if (rest[1] != ' ') return std::nullopt;
  size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) {
    if (rest.ends_with(":"))
      colon = rest.size() - 1;
    else
      return std::nullopt;
  }
  std::string_view tag = trim(rest.substr(2, colon - 2));
  if (tag.empty() || tag.find(' ') != std::string_view::npos) return std::nullopt;
  line = colon + 2 <= rest.size() ? rest.substr(colon + 2) : std::string_view();
  return tag;
}

// ---- Apple .crash

struct AppleImage {
  uint64_t base = 0;
  uint64_t end = 0;  // the last byte, as Binary Images prints it
  std::string uuid;  // dashed
};

// Binary Images by image name. A name may be listed more than once, at different addresses: two
// processes' reports pasted together, or two images of one name (a framework's copy in the app
// beside the system's); each entry is kept, and a frame is matched to one by its addresses.
using AppleImages = std::multimap<std::string, AppleImage, std::less<>>;

// "0x104a14000 - 0x104a1ffff +DemoApp arm64  <4c4c44be55553144a18fb1819e548735> /path/DemoApp"
std::optional<std::pair<std::string, AppleImage>> parseBinaryImage(std::string_view line) {
  line = trim(line);
  size_t dash = line.find(" - ");
  if (!line.starts_with("0x") || dash == std::string_view::npos) return std::nullopt;
  auto base = parseHex(trim(line.substr(0, dash)));
  std::string_view rest = trim(line.substr(dash + 3));
  size_t space = rest.find(' ');
  if (!base || space == std::string_view::npos) return std::nullopt;
  const uint64_t end = parseHex(rest.substr(0, space)).value_or(*base);
  rest = trim(rest.substr(space));  // past the end address
  size_t open = rest.find('<'), close = rest.find('>');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  std::string_view name_and_arch = trim(rest.substr(0, open));
  size_t arch_space = name_and_arch.rfind(' ');
  std::string_view name =
      arch_space == std::string_view::npos ? name_and_arch : trim(name_and_arch.substr(0, arch_space));
  if (name.starts_with("+")) name.remove_prefix(1);
  name = trim(name);
  if (name.empty()) return std::nullopt;
  AppleImage image{*base, end, dashedUuid(rest.substr(open + 1, close - open - 1))};
  return std::make_pair(std::string(name), image);
}

// An Apple frame in the form formats/stack reads: "<image> <address> <load> + <offset> [uuid]".
std::string imageFrameLine(std::string_view image, uint64_t address, uint64_t load, std::string_view dashed_uuid) {
  std::string out =
      std::string(image) + " " + hex(address, 16) + " " + hex(load, 0) + " + " + std::to_string(address - load);
  if (!dashed_uuid.empty()) out += " [" + std::string(dashed_uuid) + "]";
  return out;
}

// A Last Exception Backtrace the device did not symbolicate, one line of return addresses:
// "(0x18c4e6c30 0x18bc9c7d8 0x1000b8c64)". Each becomes a frame line of the image whose range
// in Binary Images holds it ("???" when none does); nullopt when the line is not that list.
std::optional<std::string> appleAddressList(std::string_view line, const AppleImages& images) {
  line = trim(line);
  if (line.size() < 2 || line.front() != '(' || line.back() != ')') return std::nullopt;
  std::string_view rest = line.substr(1, line.size() - 2);
  std::string out;
  while (!(rest = trim(rest)).empty()) {
    const size_t end = rest.find_first_of(" \t");
    auto address = rest.substr(0, end).starts_with("0x") ? parseHex(rest.substr(0, end)) : std::nullopt;
    if (!address) return std::nullopt;
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    const std::pair<const std::string, AppleImage>* holder = nullptr;
    for (const auto& entry : images) {
      if (*address >= entry.second.base && *address <= entry.second.end) holder = &entry;
    }
    if (!out.empty()) out += '\n';
    if (holder == nullptr) {
      out += "??? " + hex(*address, 16) + " 0x0 + " + std::to_string(*address);
      continue;
    }
    out += imageFrameLine(holder->first, *address, holder->second.base, holder->second.uuid);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// The entry of Binary Images that holds a frame of image `name` at `address`: the only one of
// that name; else, of several, the one loaded at `load` when the line printed it, or the one
// whose range holds `address`. Null when none does or several do; `ambiguous` then says whether
// several entries named so, so that the frame is not placed by one picked among them.
const AppleImage* appleImageOf(const AppleImages& images, std::string_view name, std::optional<uint64_t> load,
                               uint64_t address, bool& ambiguous) {
  auto [first, last] = images.equal_range(name);
  ambiguous = false;
  if (first == last) return nullptr;
  if (std::next(first) == last) return &first->second;
  const AppleImage* match = nullptr;
  for (auto entry = first; entry != last; ++entry) {
    const AppleImage& image = entry->second;
    if (load ? image.base != *load : address < image.base || address > image.end) continue;
    if (match != nullptr) {
      ambiguous = true;
      return nullptr;
    }
    match = &image;
  }
  ambiguous = match == nullptr;
  return match;
}

// An Apple frame line rewritten with its image's UUID; nullopt when it is not a frame line.
std::optional<std::string> appleFrame(std::string_view line, const AppleImages& images,
                                      std::vector<std::string>& notes) {
  line = trim(line);
  size_t space = line.find_first_of(" \t");
  if (space == std::string_view::npos || !parseDecimal(line.substr(0, space))) return std::nullopt;
  std::string_view rest = trim(line.substr(space));
  // The address is the first "0x" after a space or tab (Apple pads the image column with either).
  size_t address_at = std::string_view::npos;
  for (size_t at = rest.find("0x"); at != std::string_view::npos; at = rest.find("0x", at + 2)) {
    if (at > 0 && (rest[at - 1] == ' ' || rest[at - 1] == '\t')) {
      address_at = at;
      break;
    }
  }
  if (address_at == std::string_view::npos) return std::nullopt;
  std::string image(trim(rest.substr(0, address_at)));
  rest = rest.substr(address_at);
  size_t address_end = rest.find_first_of(" \t");
  auto address = parseHex(rest.substr(0, address_end));
  if (!address || image.empty()) return std::nullopt;
  std::string_view after = address_end == std::string_view::npos ? std::string_view() : trim(rest.substr(address_end));
  std::optional<uint64_t> load;
  // "0x104a14000 + 16448": the load address is printed.
  if (after.starts_with("0x")) {
    size_t plus = after.find(" + ");
    if (plus != std::string_view::npos) load = parseHex(trim(after.substr(0, plus)));
  }
  // "0x104a1c3e4 MyApp + 33764": the image named again, then the offset from its start.
  std::optional<uint64_t> image_offset;
  if (after.starts_with(image) && after.substr(image.size()).starts_with(" + ")) {
    image_offset = parseDecimal(trim(after.substr(image.size() + 3)));
  }
  // The image's start, from the line's own offset in it, when it prints one.
  std::optional<uint64_t> start;
  if (image_offset && *image_offset <= *address) start = *address - *image_offset;
  bool ambiguous = false;
  const AppleImage* found = appleImageOf(images, image, load ? load : start, *address, ambiguous);
  if (!load && found != nullptr) load = found->base;
  if (!load) load = start;
  if (!load || *load > *address) {
    // Left as printed: a line that prints no load address reads as the device symbolicated it,
    // which a line of another thread that prints the image's load address may still place
    // (worker/pipeline/kinds/native_kind.cc).
    notes.push_back("frame \"" + std::string(line) + "\": image " + image +
                    (ambiguous ? " is listed more than once in Binary Images, and its address does not tell which"
                     : !load   ? " is not in Binary Images and the line prints no load address: only another line that "
                                 "prints it places the frame"
                               : " is loaded past the frame's address"));
    return std::string(line);
  }
  std::string out = imageFrameLine(image, *address, *load, found != nullptr ? found->uuid : "");
  // A frame the device symbolicated ("__pthread_kill + 8") keeps that symbol after the id: shown
  // for a frame Restack cannot restore (a system library), rather than lost.
  if (!after.empty() && !after.starts_with("0x") && !image_offset) {
    out += ' ';
    out += after;
  }
  return out;
}

void readAppleCrash(const std::vector<std::string_view>& lines, CrashReport& report) {
  report.format = ReportFormat::kAppleCrash;
  report.platform = "ios";
  AppleImages images;
  bool in_images = false;
  for (std::string_view line : lines) {
    if (trim(line).starts_with("Binary Images:")) {
      in_images = true;
      continue;
    }
    if (!in_images) continue;
    auto image = parseBinaryImage(line);
    if (!image) continue;
    // The same image listed again (the same report pasted twice) is one entry.
    auto [first, last] = images.equal_range(image->first);
    const bool again = std::any_of(first, last, [&](const auto& entry) {
      return entry.second.base == image->second.base && entry.second.uuid == image->second.uuid;
    });
    if (!again) images.emplace(std::move(image->first), std::move(image->second));
  }
  std::string signal, subtype;
  std::map<int, std::string> thread_names;
  ReportThread* current = nullptr;
  for (std::string_view raw : lines) {
    std::string_view line = trim(raw);
    if (line.starts_with("Binary Images:")) break;
    if (auto value = field(line, "Identifier:")) {
      if (report.app.empty()) report.app = std::string(*value);
    } else if (auto version = field(line, "Version:")) {
      if (report.build_id.empty()) report.build_id = buildIdFromVersion(*version);
    } else if (auto type = field(line, "Exception Type:")) {
      std::string_view text = *type;
      size_t paren = text.find(" (");
      report.exception_type = std::string(trim(text.substr(0, paren)));
      if (paren != std::string_view::npos && text.ends_with(")")) {
        signal = std::string(text.substr(paren + 2, text.size() - paren - 3));
      }
    } else if (auto sub = field(line, "Exception Subtype:")) {
      subtype = std::string(*sub);
    } else if (auto codes = field(line, "Exception Codes:")) {
      if (subtype.empty()) subtype = std::string(*codes);
    } else if (line.find("Terminating app due to uncaught exception '") != std::string_view::npos) {
      // Application Specific Information of an uncaught NSException: its class and reason.
      size_t open = line.find('\'');
      size_t close = line.find('\'', open + 1);
      if (close != std::string_view::npos) {
        report.exception_type = std::string(line.substr(open + 1, close - open - 1));
        size_t reason = line.find("reason: '", close);
        if (reason != std::string_view::npos) {
          std::string_view text = line.substr(reason + 9);
          if (text.ends_with("'")) text.remove_suffix(1);
          report.exception_message = std::string(text);
        }
        signal.clear();
        subtype.clear();
      }
    } else if (line == "Last Exception Backtrace:") {
      report.threads.push_back({"Last Exception Backtrace", true, ""});
      current = &report.threads.back();
    } else if (line.starts_with("Thread ") && line.ends_with(":")) {
      std::string_view header = line.substr(7, line.size() - 8);
      bool crashed = header.ends_with(" Crashed");
      if (crashed) header.remove_suffix(8);
      if (header.find(" name") != std::string_view::npos) continue;
      auto number = parseDecimal(header);
      if (!number) continue;
      auto name = thread_names.find(static_cast<int>(*number));
      report.threads.push_back(
          {name != thread_names.end() ? name->second : "Thread " + std::to_string(*number), crashed, ""});
      current = &report.threads.back();
    } else if (line.starts_with("Thread ") && line.find(" name:") != std::string_view::npos) {
      size_t name_at = line.find(" name:");
      auto number = parseDecimal(line.substr(7, name_at - 7));
      if (number) thread_names[static_cast<int>(*number)] = std::string(trim(line.substr(name_at + 6)));
    } else if (line.empty()) {
      current = nullptr;
    } else if (current != nullptr) {
      if (auto frames = appleAddressList(line, images)) {
        if (!current->stack.empty()) current->stack += "\n";
        current->stack += *frames;
      } else if (auto frame = appleFrame(line, images, report.notes)) {
        if (!current->stack.empty()) current->stack += "\n";
        current->stack += *frame;
      }
    }
  }
  if (report.exception_message.empty()) {
    report.exception_message = signal.empty() ? subtype : subtype.empty() ? signal : signal + ": " + subtype;
  }
}

// ---- Apple .ips (JSON: a header line, then the report)

std::string ipsFrame(simdjson::dom::element frame, simdjson::dom::array images) {
  uint64_t index = 0, offset = 0;
  if (frame["imageIndex"].get(index) || frame["imageOffset"].get(offset)) return "???";
  simdjson::dom::element image;
  if (images.at(index).get(image)) return "???";
  uint64_t base = 0;
  std::string_view name, uuid;
  if (image["base"].get(base)) base = 0;
  if (image["name"].get(name)) name = "???";
  if (image["uuid"].get(uuid)) uuid = "";
  std::string out = imageFrameLine(name, base + offset, base, uuid.empty() ? std::string() : dashedUuid(uuid));
  // The device's symbol of the frame, when it has one (system libraries are symbolicated on the
  // device): {"symbol":"__pthread_kill","symbolLocation":8}.
  std::string_view symbol;
  if (!frame["symbol"].get(symbol) && !symbol.empty()) {
    uint64_t location = 0;
    out += ' ';
    out += symbol;
    if (!frame["symbolLocation"].get(location)) out += " + " + std::to_string(location);
  }
  return out;
}

Status readAppleIps(std::string_view text, CrashReport& report) {
  report.format = ReportFormat::kAppleIps;
  report.platform = "ios";
  size_t newline = text.find('\n');
  if (newline == std::string_view::npos) return malformed("the .ips report has a header line but no report after it");
  simdjson::dom::parser parser;
  simdjson::padded_string header_text(text.substr(0, newline));
  simdjson::padded_string body_text(text.substr(newline + 1));
  simdjson::dom::element header;
  if (!parser.parse(header_text).get(header)) {
    std::string_view value;
    if (!header["bundleID"].get(value)) report.app = std::string(value);
    std::string_view version, build;
    if (!header["app_version"].get(version) && !header["build_version"].get(build)) {
      report.build_id = std::string(version) + "(" + std::string(build) + ")";
    }
  }
  simdjson::dom::parser body_parser;
  simdjson::dom::element body;
  if (auto error = body_parser.parse(body_text).get(body)) {
    return malformed(std::string("the .ips report body is not JSON: ") + simdjson::error_message(error));
  }
  simdjson::dom::element exception;
  if (!body["exception"].get(exception)) {
    std::string_view type, signal, subtype;
    if (!exception["type"].get(type)) report.exception_type = std::string(type);
    if (exception["signal"].get(signal)) signal = "";
    if (exception["subtype"].get(subtype)) subtype = "";
    report.exception_message = signal.empty()    ? std::string(subtype)
                               : subtype.empty() ? std::string(signal)
                                                 : std::string(signal) + ": " + std::string(subtype);
  }
  simdjson::dom::array images;
  if (body["usedImages"].get(images)) return malformed("the .ips report has no usedImages");
  simdjson::dom::array backtrace;
  if (!body["lastExceptionBacktrace"].get(backtrace)) {
    ReportThread thread{"Last Exception Backtrace", true, ""};
    for (simdjson::dom::element frame : backtrace) {
      if (!thread.stack.empty()) thread.stack += "\n";
      thread.stack += ipsFrame(frame, images);
    }
    report.threads.push_back(std::move(thread));
  }
  simdjson::dom::array threads;
  if (body["threads"].get(threads)) return malformed("the .ips report has no threads");
  size_t number = 0;
  for (simdjson::dom::element thread : threads) {
    ReportThread out;
    std::string_view name;
    bool triggered = false;
    if (!thread["name"].get(name) || !thread["queue"].get(name)) out.name = std::string(name);
    if (out.name.empty()) out.name = "Thread " + std::to_string(number);
    if (!thread["triggered"].get(triggered)) out.crashed = triggered;
    simdjson::dom::array frames;
    if (!thread["frames"].get(frames)) {
      for (simdjson::dom::element frame : frames) {
        if (!out.stack.empty()) out.stack += "\n";
        out.stack += ipsFrame(frame, images);
      }
    }
    report.threads.push_back(std::move(out));
    ++number;
  }
  return Status::ok();
}

// ---- Android tombstone

void readTombstone(const std::vector<std::string_view>& lines, CrashReport& report) {
  report.format = ReportFormat::kAndroidTombstone;
  report.platform = "android";
  ReportThread* current = nullptr;
  std::string pending_name;
  for (std::string_view raw : lines) {
    std::string_view line = raw;
    if (auto tag = stripLogcatPrefix(line); tag && *tag != "DEBUG" && *tag != "crash_dump64" && *tag != "libc") {
      continue;  // another tag's log line
    }
    line = trim(line);
    if (line.starts_with("pid: ") && line.find("name: ") != std::string_view::npos) {
      size_t name_at = line.find("name: ") + 6;
      size_t app_at = line.find(">>> ");
      std::string_view name =
          trim(line.substr(name_at, app_at == std::string_view::npos ? std::string_view::npos : app_at - name_at));
      pending_name = std::string(name);
      if (app_at != std::string_view::npos && report.app.empty()) {
        std::string_view app = line.substr(app_at + 4);
        size_t end = app.find(" <<<");
        report.app = std::string(trim(app.substr(0, end)));
      }
    } else if (line.starts_with("signal ") && report.exception_type.empty()) {
      // "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0"
      size_t open = line.find('('), close = line.find(')');
      if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
        report.exception_type = std::string(line.substr(open + 1, close - open - 1));
        std::string_view rest = line.substr(close + 1);
        if (rest.starts_with(", ")) rest.remove_prefix(2);
        // "code 1 (SEGV_MAPERR), fault addr 0x0" -> "SEGV_MAPERR, fault addr 0x0"
        size_t code_open = rest.find('('), code_close = rest.find(')');
        if (rest.starts_with("code ") && code_open != std::string_view::npos && code_close > code_open) {
          report.exception_message = std::string(rest.substr(code_open + 1, code_close - code_open - 1)) +
                                     std::string(rest.substr(code_close + 1));
        } else {
          report.exception_message = std::string(rest);
        }
      }
    } else if (auto abort = field(line, "Abort message:")) {
      std::string_view text = *abort;
      if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') text = text.substr(1, text.size() - 2);
      report.exception_message = std::string(text);
    } else if (line == "backtrace:") {
      report.threads.push_back({pending_name.empty() ? "thread" : pending_name, report.threads.empty(), ""});
      current = &report.threads.back();
    } else if (line.starts_with("#") && line.find(" pc ") != std::string_view::npos) {
      if (current == nullptr) {
        report.threads.push_back({pending_name.empty() ? "thread" : pending_name, report.threads.empty(), ""});
        current = &report.threads.back();
      }
      if (!current->stack.empty()) current->stack += "\n";
      current->stack += std::string(line);
    } else if (line.empty() || line.starts_with("--- --- ---")) {
      current = nullptr;
    }
  }
}

// ---- Java and JavaScript traces

void readJavaTrace(const std::vector<std::string_view>& lines, CrashReport& report) {
  report.platform = "android";
  ReportThread thread{"main", true, ""};
  bool started = false;
  for (std::string_view line : lines) {
    stack::StackLine parsed = stack::parseStackLine(line);
    if (!started) {
      if (!stack::asJavaException(parsed) && !stack::asJavaFrame(parsed)) continue;
      started = true;
      if (const auto* exception = stack::asJavaException(parsed)) {
        report.exception_type = exception->class_name;
        report.exception_message = exception->message;
        const std::string& prefix = exception->prefix;  // Exception in thread "main"
        size_t quote = prefix.find('"');
        size_t end = quote == std::string::npos ? std::string::npos : prefix.find('"', quote + 1);
        if (end != std::string::npos) thread.name = prefix.substr(quote + 1, end - quote - 1);
      }
    }
    if (!thread.stack.empty()) thread.stack += "\n";
    thread.stack += std::string(line);
  }
  report.threads.push_back(std::move(thread));
}

// An ANR dump as ART writes it (traces.txt, a bug report's "VM TRACES", Play Console's ANR
// stacks): threads under "name" … tid=… headers; the main thread is the one the ANR blocked.
void readAnrDump(const std::vector<std::string_view>& lines, CrashReport& report) {
  report.format = ReportFormat::kAndroidAnr;
  report.platform = "android";
  report.kind = "anr";
  report.exception_type = "ANR";
  ReportThread* current = nullptr;
  for (std::string_view raw : lines) {
    const std::string_view line = trim(raw);
    if (auto command = field(line, "Cmd line:")) {
      // The process's name: the package, then ":name" for an app's other processes.
      if (report.app.empty()) report.app = std::string(trim(command->substr(0, command->find(':'))));
    } else if (auto subject = field(line, "Subject:")) {
      if (report.exception_message.empty()) report.exception_message = std::string(*subject);
    } else if (stack::isThreadDumpHeader(line)) {
      const std::string name(line.substr(1, line.find('"', 1) - 1));
      report.threads.push_back({name, name == "main", std::string(raw)});
      current = &report.threads.back();
    } else if (line.starts_with("----- end")) {
      current = nullptr;
    } else if (current != nullptr && !line.empty()) {
      current->stack += "\n";
      current->stack += std::string(raw);
    }
  }
}

void readLogcat(const std::vector<std::string_view>& lines, CrashReport& report) {
  report.format = ReportFormat::kAndroidLogcat;
  std::vector<std::string_view> trace;
  std::string thread_name;
  for (std::string_view raw : lines) {
    std::string_view line = raw;
    auto tag = stripLogcatPrefix(line);
    if (!tag || *tag != "AndroidRuntime") continue;
    if (auto name = field(line, "FATAL EXCEPTION:")) {
      thread_name = std::string(*name);
    } else if (auto process = field(line, "Process:")) {
      std::string_view app = *process;
      report.app = std::string(trim(app.substr(0, app.find(','))));
    } else {
      trace.push_back(line);
    }
  }
  readJavaTrace(trace, report);
  if (!thread_name.empty()) report.threads.back().name = thread_name;
}

bool isBundleUrl(const stack::JsFrameLine& frame) {
  return frame.hermes_bytecode || frame.hermes_function_offset || frame.url.ends_with(".bundle") ||
         frame.url.ends_with(".jsbundle") || frame.url.find(".bundle?") != std::string::npos;
}

// A line of a console stack that reads as a frame to a person: V8's "at …" or "fn@…".
bool looksLikeJsFrame(std::string_view line) {
  const std::string_view text = trim(line);
  return text.starts_with("at ") || text.find('@') != std::string_view::npos;
}

// Before the first frame read, a line taken for a frame must also end as V8's and
// SpiderMonkey's do: a position ":<line>:<column>", with V8's closing parenthesis.
bool endsLikeAFrame(std::string_view line) {
  std::string_view text = trim(line);
  if (text.ends_with(')')) text.remove_suffix(1);
  for (int part = 0; part < 2; ++part) {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || !parseU32(text.substr(colon + 1))) return false;
    text = text.substr(0, colon);
  }
  return true;
}

void readJavaScript(const std::vector<std::string_view>& lines, CrashReport& report) {
  ReportThread thread{"main", true, ""};
  bool react_native = false;
  std::string_view message_line;
  for (std::string_view line : lines) {
    stack::StackLine parsed = stack::parseStackLine(line);
    if (const auto* frame = stack::asJsFrame(parsed)) {
      react_native = react_native || isBundleUrl(*frame);
      if (!thread.stack.empty()) thread.stack += "\n";
      thread.stack += std::string(line);
    } else if (looksLikeJsFrame(line) && (!thread.stack.empty() || (!message_line.empty() && endsLikeAFrame(line)))) {
      // A frame line no reader knows stays in the stack, printed as it came and marked
      // unparsed, rather than vanishing from the restored report: the first frame too, once the
      // message line is read, when it ends as frames do (a message's further lines stay out).
      if (!thread.stack.empty()) thread.stack += "\n";
      thread.stack += std::string(line);
    } else if (thread.stack.empty() && message_line.empty() && !trim(line).empty()) {
      message_line = line;
    }
  }
  report.format = react_native ? ReportFormat::kReactNative : ReportFormat::kBrowserConsole;
  report.platform = react_native ? "react_native" : "web";
  report.kind = "error";
  if (!message_line.empty() && !splitTypeAndMessage(message_line, report.exception_type, report.exception_message)) {
    report.exception_type = "Error";
    report.exception_message = std::string(trim(message_line));
  }
  report.threads.push_back(std::move(thread));
}

void readRawFrames(const std::vector<std::string_view>& lines, CrashReport& report) {
  report.format = ReportFormat::kRawFrames;
  ReportThread thread{"main", true, ""};
  bool android = false;
  for (std::string_view line : lines) {
    stack::StackLine parsed = stack::parseStackLine(line);
    const auto* native = stack::asNative(parsed);
    if (native == nullptr) continue;
    android = android || !native->abi.empty() || trim(line).starts_with("pc ");
    if (!thread.stack.empty()) thread.stack += "\n";
    thread.stack += std::string(trim(line));
  }
  report.platform = android ? "android" : "ios";
  report.threads.push_back(std::move(thread));
}

size_t countFrames(const CrashReport& report) {
  size_t frames = 0;
  for (const ReportThread& thread : report.threads) {
    for (const stack::StackLine& line : stack::parseStack(thread.stack)) {
      if (line.isFrame()) ++frames;
    }
  }
  return frames;
}

constexpr const char* kFormatsList =
    "Apple .crash or .ips, Android tombstone, ANR dump or logcat AndroidRuntime, printStackTrace() text, browser "
    "console (V8, SpiderMonkey, JavaScriptCore), React Native red-box or Hermes, or raw frames";

}  // namespace

const char* reportFormatName(ReportFormat format) {
  switch (format) {
    case ReportFormat::kAppleCrash:
      return "Apple crash report";
    case ReportFormat::kAppleIps:
      return "Apple .ips report";
    case ReportFormat::kAndroidTombstone:
      return "Android tombstone";
    case ReportFormat::kAndroidLogcat:
      return "logcat AndroidRuntime trace";
    case ReportFormat::kAndroidAnr:
      return "Android ANR dump";
    case ReportFormat::kJavaTrace:
      return "Java stack trace";
    case ReportFormat::kBrowserConsole:
      return "browser console stack";
    case ReportFormat::kReactNative:
      return "React Native stack";
    case ReportFormat::kRawFrames:
      return "raw frames";
  }
  return "unknown";
}

Expected<CrashReport> parseCrashReport(std::string_view text) {
  if (text.size() > kMaxReportBytes) {
    return tooLarge("the crash report is " + std::to_string(text.size()) + " bytes; at most " +
                    std::to_string(kMaxReportBytes) + " are read");
  }
  CrashReport report;
  const size_t first = text.find_first_not_of(" \t\r\n");
  std::string_view start = first == std::string_view::npos ? std::string_view() : text.substr(first);
  if (start.starts_with("{") && start.substr(0, start.find('\n')).find("\"bug_type\"") != std::string_view::npos) {
    if (Status read = readAppleIps(start, report); !read) return read.error();
  } else {
    const std::vector<std::string_view> lines = reportLines(start);
    bool apple = false, anr = false, tombstone = false, logcat = false, java = false, javascript = false,
         native = false;
    for (std::string_view raw : lines) {
      std::string_view line = trim(raw);
      if (line.starts_with("Incident Identifier:") || line.starts_with("Exception Type:") ||
          line.starts_with("Binary Images:")) {
        apple = true;
      }
      if (line.find("*** *** *** ***") != std::string_view::npos || line.find("backtrace:") != std::string_view::npos) {
        tombstone = true;
      }
      std::string_view message = raw;
      if (auto tag = stripLogcatPrefix(message)) {
        if (*tag == "AndroidRuntime") logcat = true;
        if (*tag == "DEBUG" && trim(message).starts_with("#")) tombstone = true;
      }
      if (stack::isThreadDumpHeader(line)) anr = true;
      stack::StackLine parsed = stack::parseStackLine(message);
      if (stack::asJavaFrame(parsed)) java = true;
      if (stack::asJsFrame(parsed)) javascript = true;
      if (const auto* frame = stack::asNative(parsed)) {
        native = true;
        if (frame->frame_index && trim(message).starts_with("#")) tombstone = true;
      }
    }
    if (apple) {
      readAppleCrash(lines, report);
    } else if (anr) {
      readAnrDump(lines, report);
    } else if (tombstone) {
      readTombstone(lines, report);
    } else if (logcat) {
      readLogcat(lines, report);
    } else if (java) {
      report.format = ReportFormat::kJavaTrace;
      readJavaTrace(lines, report);
    } else if (javascript) {
      readJavaScript(lines, report);
    } else if (native) {
      readRawFrames(lines, report);
    } else {
      return malformed(std::string("no stack found; formats read: ") + kFormatsList);
    }
  }
  if (countFrames(report) == 0) {
    return malformed(std::string("the ") + reportFormatName(report.format) + " holds no frame Restack can read");
  }
  return report;
}

}  // namespace restack::crash_report

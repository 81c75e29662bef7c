// Address-mapped frame lines: iOS (SDK form and Apple crash reports) and Android native (SDK
// form and tombstones). See stack_line.h for worked examples.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "formats/stack/native_line.h"
#include "formats/stack/text_scan.h"

namespace restack::stack {
namespace {

// The position of the bracket that closes the one `text` starts with, or npos. Symbols may hold
// brackets of their own ("foo(int)+12"), so brackets are matched by depth. Each step jumps to the
// next closing bracket and counts the opening ones passed on the way (memchr, not a loop over
// every byte: the group is most often a 40-digit build id, on every Android frame).
size_t matchingClose(std::string_view text, char open, char close) {
  size_t depth = 1;
  size_t from = 1;
  while (true) {
    const size_t end = text.find(close, from);
    if (end == std::string_view::npos) return end;
    for (size_t at = text.find(open, from); at < end; at = text.find(open, at + 1)) ++depth;
    if (--depth == 0) return end;
    from = end + 1;
  }
}

// Reads the Android forms after an optional "#NN" into `frame`, a default NativeFrameLine:
// "pc <hex> <path> [abi::id]" or "pc <hex>  <path> (offset 0x1000) (sym+12) (BuildId: id)".
bool readAndroid(std::string_view rest, std::optional<uint32_t> index, NativeFrameLine& frame) {
  std::string_view pc_word = scan::takeToken(rest);
  if (pc_word != "pc") return false;
  const std::string_view address_text = scan::takeToken(rest);
  auto address = scan::parseHex(address_text);
  if (!address) return false;
  rest = scan::trimLeft(rest);
  frame.frame_index = index;
  frame.address = *address;
  // libunwindstack's own form: "#NN pc" and the pc in bare hex (the SDK form writes "0x").
  frame.call_site_pc = index.has_value() && !address_text.starts_with("0x") && !address_text.starts_with("0X");
  // The path runs up to " (" or " [" (paths with spaces are rare but exist on some vendors).
  size_t path_end = rest.size();
  for (size_t i = 0; i + 1 < rest.size(); ++i) {
    if (scan::isSpace(rest[i]) && (rest[i + 1] == '(' || rest[i + 1] == '[')) {
      path_end = i;
      break;
    }
  }
  std::string_view path = scan::trim(rest.substr(0, path_end));
  if (path.empty()) return false;
  frame.module_path.append(path);
  // A library the runtime maps straight out of the APK prints as ".../base.apk!libfoo.so": the
  // image is the entry after the '!' (the name its symbols were uploaded under).
  std::string_view image = scan::basename(path);
  if (const size_t bang = image.rfind('!'); bang != std::string_view::npos && bang + 1 < image.size()) {
    image.remove_prefix(bang + 1);
  }
  frame.module.append(image);
  rest.remove_prefix(path_end);
  while (true) {
    rest = scan::trimLeft(rest);
    if (rest.empty()) break;
    char open = rest.front();
    char close = open == '(' ? ')' : open == '[' ? ']' : '\0';
    if (close == '\0') break;
    const size_t end = matchingClose(rest, open, close);
    if (end == std::string_view::npos) break;
    std::string_view group = rest.substr(1, end - 1);
    rest.remove_prefix(end + 1);
    if (open == '[') {
      // "[arm64-v8a::ba78e30f…]"
      size_t sep = group.find("::");
      std::string_view id = sep == std::string_view::npos ? group : group.substr(sep + 2);
      if (sep != std::string_view::npos) frame.abi.assign(group.substr(0, sep));
      frame.debug_id = normalizeDebugId(scan::trim(id));
    } else if (group.starts_with("BuildId: ")) {
      frame.debug_id = normalizeDebugId(scan::trim(group.substr(9)));
    } else if (group.starts_with("offset ")) {
      // Offset of the mapped library inside an APK: the pc is already a file address.
    } else if (group == "deleted") {
      // The mapped file was deleted ("/memfd:jit-cache (deleted)"): no symbol.
    } else {
      frame.symbol_hint.assign(group);
    }
  }
  return true;
}

// Appends tokens [begin, end) joined by one space each: an image name with spaces ("My App"),
// the symbol a device printed ("__pthread_kill + 8").
void appendJoined(std::span<const std::string_view> tokens, size_t begin, size_t end, std::string& out) {
  for (size_t k = begin; k < end; ++k) {
    if (k != begin) out.push_back(' ');
    out.append(tokens[k]);
  }
}

// Reads an image's "[uuid]" token into the frame's debug id; false when the token is not one.
bool readBracketedId(std::string_view token, NativeFrameLine& frame) {
  if (token.size() < 2 || token.front() != '[' || token.back() != ']') return false;
  frame.debug_id = normalizeDebugId(token.substr(1, token.size() - 2));
  return true;
}

// Apple's other form of a frame not symbolicated, the image named again before the offset:
// "3  MyApp  0x0000000104a1c3e4 MyApp + 33764 [uuid]" (Last Exception Backtraces, Organizer, many
// crash reporters). The offset is from the image's start, as in the "<load> + <offset>" form,
// and the load address follows from it.
bool readIosImagePlusOffset(std::span<const std::string_view> tokens, NativeFrameLine& frame) {
  size_t first_name = tokens.size() > 1 && scan::parseU32(tokens[0]) ? 1 : 0;
  for (size_t i = first_name + 1; i < tokens.size(); ++i) {
    if (!tokens[i].starts_with("0x")) continue;
    const size_t name_tokens = i - first_name;
    const size_t plus = i + 1 + name_tokens;
    if (plus + 1 >= tokens.size() || tokens[plus] != "+") return false;
    for (size_t k = 0; k < name_tokens; ++k) {
      if (tokens[first_name + k] != tokens[i + 1 + k]) return false;
    }
    auto runtime = scan::parseHex(tokens[i]);
    auto offset = scan::parseDecimal(tokens[plus + 1]);
    if (!runtime || !offset || *offset > *runtime) return false;
    if (first_name == 1) frame.frame_index = scan::parseU32(tokens[0]);
    appendJoined(tokens, first_name, i, frame.module);
    frame.runtime_address = *runtime;
    frame.load_address = *runtime - *offset;
    frame.address = *offset;
    if (plus + 2 < tokens.size() && (plus + 3 != tokens.size() || !readBracketedId(tokens[plus + 2], frame))) {
      return false;
    }
    return true;
  }
  return false;
}

// A line a device symbolicated, sent without the report's binary images: the runtime address
// and the symbol the device printed, no load address, no offset in the image:
// "2  UIKitCore  0x00000001a2b3c4d5 -[UIApplication _run] + 888" (the symbol may hold spaces:
// "MyApp.ViewController.tap(_:) + 52"). The image offset stays unknown; the symbol is kept.
bool readIosRuntimeAndSymbol(std::span<const std::string_view> tokens, NativeFrameLine& frame) {
  const size_t first_name = tokens.size() > 1 && scan::parseU32(tokens[0]) ? 1 : 0;
  size_t at = first_name + 1;
  while (at < tokens.size() && !tokens[at].starts_with("0x")) ++at;
  // <image…> <0x…> <symbol…> + <decimal>
  if (at + 4 > tokens.size() || tokens[tokens.size() - 2] != "+") return false;
  auto runtime = scan::parseHex(tokens[at]);
  if (!runtime || *runtime == 0 || !scan::parseDecimal(tokens.back())) return false;
  // The image named again is the "<image> + <offset>" form, whose numbers did not agree.
  const std::span<const std::string_view> image = tokens.subspan(first_name, at - first_name);
  const std::span<const std::string_view> symbol = tokens.subspan(at + 1, tokens.size() - 2 - (at + 1));
  if (std::equal(image.begin(), image.end(), symbol.begin(), symbol.end())) return false;
  if (first_name == 1) frame.frame_index = scan::parseU32(tokens[0]);
  appendJoined(tokens, first_name, at, frame.module);
  frame.runtime_address = *runtime;
  frame.image_offset_unknown = true;
  appendJoined(tokens, at + 1, tokens.size(), frame.symbol_hint);
  return true;
}

// Reads the iOS forms into `frame`, a default NativeFrameLine: "<image> <runtime hex> <load hex> +
// <decimal offset> [uuid]", with an optional leading frame number (Apple crash reports). Image
// names may contain spaces.
bool readIos(std::string_view text, NativeFrameLine& frame) {
  // The tokens of a line, on the stack for the usual handful: a heap vector per line was one
  // allocation for every native frame of every event. Longer lines (image names with many
  // spaces) continue in `more`.
  constexpr size_t kInlineTokens = 16;
  std::string_view inline_tokens[kInlineTokens];
  std::vector<std::string_view> more;
  size_t count = 0;
  std::string_view rest = text;
  while (true) {
    std::string_view token = scan::takeToken(rest);
    if (token.empty()) break;
    if (count < kInlineTokens) {
      inline_tokens[count] = token;
    } else {
      if (more.empty()) more.assign(inline_tokens, inline_tokens + kInlineTokens);
      more.push_back(token);
    }
    ++count;
  }
  const std::span<const std::string_view> tokens =
      more.empty() ? std::span<const std::string_view>(inline_tokens, count) : std::span<const std::string_view>(more);
  // Find "<0x…> <0x…> + <n>".
  for (size_t i = 1; i + 3 < tokens.size(); ++i) {
    if (!tokens[i].starts_with("0x") || !tokens[i + 1].starts_with("0x") || tokens[i + 2] != "+") continue;
    auto runtime = scan::parseHex(tokens[i]);
    auto load = scan::parseHex(tokens[i + 1]);
    auto offset = scan::parseDecimal(tokens[i + 3]);
    if (!runtime || !load || !offset) return false;
    size_t first_name = 0;
    if (i >= 2) {
      if (auto number = scan::parseU32(tokens[0])) {
        frame.frame_index = *number;
        first_name = 1;
      }
    }
    if (first_name >= i) return false;
    appendJoined(tokens, first_name, i, frame.module);
    frame.runtime_address = *runtime;
    frame.load_address = *load;
    frame.address = *offset;
    size_t next = i + 4;
    if (next < tokens.size() && readBracketedId(tokens[next], frame)) ++next;
    // What follows is the symbol the device printed, when a report gave one ("__pthread_kill + 8";
    // formats/crash_report keeps it there).
    appendJoined(tokens, next, tokens.size(), frame.symbol_hint);
    return true;
  }
  if (readIosImagePlusOffset(tokens, frame)) return true;
  frame = NativeFrameLine{};  // what the form before wrote of a line that was not it
  return readIosRuntimeAndSymbol(tokens, frame);
}

// Reads a native line into `frame`, a default NativeFrameLine (left partly written when the line
// is not one): the line's payload is filled where it lives, not built aside and moved there
// through an optional (five strings moved twice for every native frame).
bool readNativeLine(std::string_view trimmed, NativeFrameLine& frame) {
  std::string_view rest = trimmed;
  // Android's ANR dumps print a thread's native frames among its Java ones as
  // "native: #00 pc 00000000000a33b8  /apex/…/libc.so (__epoll_pwait+8) (BuildId: …)".
  if (rest.starts_with("native: #")) rest.remove_prefix(8);
  std::optional<uint32_t> index;
  if (rest.starts_with('#')) {
    std::string_view number = scan::takeToken(rest);
    index = scan::parseU32(number.substr(1));
    if (!index) return false;
  }
  if (scan::trimLeft(rest).starts_with("pc ")) return readAndroid(rest, index, frame);
  if (index) return false;
  return readIos(trimmed, frame);
}

}  // namespace

// Every payload fits in the line (no allocation per line beyond its strings).
static_assert(sizeof(NativeFrameLine) <= LinePayload::kInlineBytes);

constinit const LineSyntaxOf<NativeFrameLine> kNativeLine("native", true, readNativeLine);

}  // namespace restack::stack

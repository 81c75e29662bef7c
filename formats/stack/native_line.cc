// Address-mapped frame lines: iOS (SDK form and Apple crash reports) and Android native (SDK
// form and tombstones). See stack_line.h for worked examples.
#include <span>
#include <string>
#include <vector>

#include "formats/stack/native_line.h"
#include "formats/stack/text_scan.h"

namespace restack::stack {
namespace {

// Parses the Android forms after an optional "#NN": "pc <hex> <path> [abi::id]" or
// "pc <hex>  <path> (offset 0x1000) (sym+12) (BuildId: id)".
std::optional<NativeFrameLine> parseAndroid(std::string_view rest, std::optional<uint32_t> index) {
  std::string_view pc_word = scan::takeToken(rest);
  if (pc_word != "pc") return std::nullopt;
  auto address = scan::parseHex(scan::takeToken(rest));
  if (!address) return std::nullopt;
  rest = scan::trimLeft(rest);
  NativeFrameLine frame;
  frame.frame_index = index;
  frame.address = *address;
  // The path runs up to " (" or " [" (paths with spaces are rare but exist on some vendors).
  size_t path_end = rest.size();
  for (size_t i = 0; i + 1 < rest.size(); ++i) {
    if (scan::isSpace(rest[i]) && (rest[i + 1] == '(' || rest[i + 1] == '[')) {
      path_end = i;
      break;
    }
  }
  std::string_view path = scan::trim(rest.substr(0, path_end));
  if (path.empty()) return std::nullopt;
  frame.module_path = std::string(path);
  frame.module = std::string(scan::basename(path));
  rest.remove_prefix(path_end);
  while (true) {
    rest = scan::trimLeft(rest);
    if (rest.empty()) break;
    char open = rest.front();
    char close = open == '(' ? ')' : open == '[' ? ']' : '\0';
    if (close == '\0') break;
    // Symbols may contain parentheses ("foo(int)+12"): match the closing bracket by depth.
    size_t depth = 0, end = std::string_view::npos;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == open) ++depth;
      if (rest[i] == close && --depth == 0) {
        end = i;
        break;
      }
    }
    if (end == std::string_view::npos) break;
    std::string_view group = rest.substr(1, end - 1);
    rest.remove_prefix(end + 1);
    if (open == '[') {
      // "[arm64-v8a::ba78e30f…]"
      size_t sep = group.find("::");
      std::string_view id = sep == std::string_view::npos ? group : group.substr(sep + 2);
      if (sep != std::string_view::npos) frame.abi = std::string(group.substr(0, sep));
      frame.debug_id = normalizeDebugId(scan::trim(id));
    } else if (group.starts_with("BuildId: ")) {
      frame.debug_id = normalizeDebugId(scan::trim(group.substr(9)));
    } else if (group.starts_with("offset ")) {
      // Offset of the mapped library inside an APK: the pc is already a file address.
    } else {
      frame.symbol_hint = std::string(group);
    }
  }
  return frame;
}

// Parses the iOS forms: "<image> <runtime hex> <load hex> + <decimal offset> [uuid]", with an
// optional leading frame number (Apple crash reports). Image names may contain spaces.
std::optional<NativeFrameLine> parseIos(std::string_view text) {
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
    if (!runtime || !load || !offset) return std::nullopt;
    NativeFrameLine frame;
    size_t first_name = 0;
    if (i >= 2) {
      if (auto number = scan::parseU32(tokens[0])) {
        frame.frame_index = *number;
        first_name = 1;
      }
    }
    if (first_name >= i) return std::nullopt;
    // An image name with spaces ("My App") is its tokens joined by one space each.
    for (size_t k = first_name; k < i; ++k) {
      if (k != first_name) frame.module.push_back(' ');
      frame.module.append(tokens[k]);
    }
    frame.runtime_address = *runtime;
    frame.load_address = *load;
    frame.address = *offset;
    if (i + 4 < tokens.size()) {
      std::string_view id = tokens[i + 4];
      if (id.size() >= 2 && id.front() == '[' && id.back() == ']') {
        frame.debug_id = normalizeDebugId(id.substr(1, id.size() - 2));
      }
    }
    return frame;
  }
  return std::nullopt;
}

}  // namespace

std::optional<NativeFrameLine> parseNativeLine(std::string_view trimmed) {
  std::string_view rest = trimmed;
  std::optional<uint32_t> index;
  if (rest.starts_with('#')) {
    std::string_view number = scan::takeToken(rest);
    index = scan::parseU32(number.substr(1));
    if (!index) return std::nullopt;
  }
  if (scan::trimLeft(rest).starts_with("pc ")) return parseAndroid(rest, index);
  if (index) return std::nullopt;
  return parseIos(trimmed);
}

// Every payload fits in the line (no allocation per line beyond its strings).
static_assert(sizeof(NativeFrameLine) <= LinePayload::kInlineBytes);

constinit const LineSyntaxOf<NativeFrameLine> kNativeLine("native", true, parseNativeLine);

}  // namespace restack::stack

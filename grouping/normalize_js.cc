// JavaScript names and files (Web H5, React Native) after source-map restoration (normalize.h).
#include <array>

#include "grouping/normalize.h"
#include "grouping/text_util.h"

namespace restack::grouping {
namespace {

constexpr size_t kMaxNameBytes = 2048;

// A content hash in a file name: 8+ hex digits with at least one digit and one letter, or 16+
// base-36 characters with a digit ("main.3f9a1c2b.js", "app-a1b2c3d4e5f6g7h8.js").
bool looksLikeHash(std::string_view part) {
  if (part.size() < 8) return false;
  bool digit = false, letter = false, hex = true;
  for (char c : part) {
    if (text::isDigit(c)) {
      digit = true;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      letter = true;
      hex = hex && text::isHexDigit(c);
    } else {
      return false;
    }
  }
  if (!digit) return false;
  return hex || part.size() >= 16 || !letter;
}

}  // namespace

std::string normalizeJsFile(std::string_view url) {
  std::string_view s = text::trim(url);
  if (s.size() > kMaxNameBytes) s = s.substr(0, kMaxNameBytes);
  size_t cut = s.find_first_of("?#");
  if (cut != std::string_view::npos) s = s.substr(0, cut);
  size_t scheme = s.find("://");
  if (scheme != std::string_view::npos && scheme < 32) {
    std::string_view rest = s.substr(scheme + 3);
    std::string_view scheme_name = s.substr(0, scheme);
    if (scheme_name == "webpack") {
      // "webpack:///./src/a.js", "webpack://my-app/./src/a.js": the namespace is not a path.
      size_t slash = rest.find('/');
      rest = slash == std::string_view::npos ? rest : rest.substr(slash + 1);
    } else {
      // "https://host/path", "app:///index.bundle", "file:///…": drop the origin.
      size_t slash = rest.find('/');
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    }
    s = rest;
  }
  // Restored sources are relative to the map's folder ("../../src/cart.js" next to
  // dist/chunks/, "../../../src/cart.js" next to dist/static/js/): the output layout is not part
  // of the source's identity, so leading "./", "../" and "/" go.
  for (bool again = true; again;) {
    again = false;
    for (std::string_view prefix : {"./", "../", "/"}) {
      if (s.starts_with(prefix)) {
        s.remove_prefix(prefix.size());
        again = true;
      }
    }
  }

  // Rebuild the base name without hash parts: "207.e017fea1.chunk.js" -> "207.chunk.js".
  size_t slash = s.rfind('/');
  std::string out(slash == std::string_view::npos ? std::string_view() : s.substr(0, slash + 1));
  std::string_view base = slash == std::string_view::npos ? s : s.substr(slash + 1);
  std::string rebuilt;
  size_t start = 0;
  while (start <= base.size()) {
    size_t dot = base.find('.', start);
    std::string_view part = base.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    // "app-3f9a1c2b.js": a hash glued on with '-' or '~'.
    size_t dash = part.find_last_of("-~");
    if (dash != std::string_view::npos && looksLikeHash(part.substr(dash + 1))) {
      part = part.substr(0, dash);
    }
    if (!looksLikeHash(part)) {
      if (!rebuilt.empty()) rebuilt += '.';
      rebuilt += part;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out + rebuilt;
}

NormalizedName normalizeJsName(std::string_view function, std::string_view file) {
  NormalizedName result;
  std::string_view s = text::trim(function);
  if (s.size() > kMaxNameBytes) s = s.substr(0, kMaxNameBytes);
  auto note = [&result](bool changed, const char* tag) {
    if (changed) result.steps.push_back(tag);
  };
  // V8 prints "Object.foo [as bar]": the alias is how it was called, not what it is.
  size_t as = s.find(" [as ");
  if (as != std::string_view::npos) {
    s = s.substr(0, as);
    note(true, "js:alias");
  }
  s = text::trim(s);
  static constexpr std::string_view kPrefixes[] = {"async ", "new ", "Object.", "async*"};
  for (bool again = true; again;) {
    again = false;
    for (auto prefix : kPrefixes) {
      if (s.starts_with(prefix) && s.size() > prefix.size()) {
        s.remove_prefix(prefix.size());
        s = text::trim(s);
        again = true;
        note(true, "js:prefix");
      }
    }
  }
  // "async" / "new" alone: V8's prefix on a frame without a name ("at async file.js:1:2").
  if (s == "async" || s == "new") s = {};
  // A module's top-level code ("<global>" in function maps) is printed by V8 without a name, as
  // an anonymous function is: both are keyed by file. A map whose column for an arrow lands on
  // the line's indentation (terser inside webpack maps "t=>new X()" there) names the arrow's
  // frame "<global>" in one bundle and "<anonymous>" in another.
  if (s.empty() || s == "<anonymous>" || s == "<global>" || s == "anonymous" || s == "?" || s == "Object" ||
      s == "<unknown>") {
    std::string normalized_file = normalizeJsFile(file);
    if (normalized_file.empty()) return result;  // nothing stable to name it by
    result.name = "<anonymous>@" + normalized_file;
    note(true, "js:anonymous-by-file");
    return result;
  }
  result.name = std::string(s);
  return result;
}

}  // namespace restack::grouping

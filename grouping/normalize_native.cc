// Native names: C, C++, Objective-C, Swift and Rust as demanglers print them (normalize.h).
#include <array>

#include "grouping/normalize.h"
#include "grouping/text_util.h"

namespace restack::grouping {
namespace {

using text::isDigit;
using text::isHexDigit;

constexpr size_t kMaxNameBytes = 4096;  // longer names are cut: templates can explode

// "foo + 123", "abort+164", "foo+0x1c": a symbol-table offset printed after the name.
bool stripSymbolOffset(std::string& s) {
  size_t plus = s.rfind('+');
  if (plus == std::string::npos || plus == 0) return false;
  std::string_view tail = text::trim(std::string_view(s).substr(plus + 1));
  if (tail.starts_with("0x") || tail.starts_with("0X")) tail.remove_prefix(2);
  if (tail.empty()) return false;
  for (char c : tail) {
    if (!isHexDigit(c)) return false;
  }
  std::string_view head = text::trim(std::string_view(s).substr(0, plus));
  if (head.empty() || head.ends_with("operator")) return false;
  s = std::string(head);
  return true;
}

// " [clone .cold.1]" and " [abi:cxx11]" anywhere in a demangled name.
bool stripBracketTags(std::string& s, std::string_view opener) {
  bool changed = false;
  size_t pos;
  while ((pos = s.find(opener)) != std::string::npos) {
    size_t close = s.find(']', pos);
    if (close == std::string::npos) close = s.size() - 1;
    size_t from = (pos > 0 && s[pos - 1] == ' ') ? pos - 1 : pos;
    s.erase(from, close + 1 - from);
    changed = true;
  }
  return changed;
}

// Raw (not demangled) GCC/LLVM clone suffixes: "foo.cold", "foo.isra.0", "foo.llvm.8812".
bool stripRawCloneSuffix(std::string& s) {
  static constexpr std::string_view kSuffixes[] = {"cold",     "part", "isra",       "constprop",
                                                   "lto_priv", "llvm", "localalias", "clone"};
  bool changed = false;
  for (;;) {
    std::string_view view(s);
    size_t dot = view.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return changed;
    std::string_view tail = view.substr(dot + 1);
    size_t cut = dot;
    if (text::allDigits(tail)) {  // "foo.isra.0": look at the word before the number
      size_t dot2 = view.rfind('.', dot - 1);
      if (dot2 == std::string_view::npos || dot2 == 0) return changed;
      tail = view.substr(dot2 + 1, dot - dot2 - 1);
      cut = dot2;
    }
    bool known = false;
    for (auto suffix : kSuffixes) known = known || tail == suffix;
    if (!known) return changed;
    s.resize(cut);
    changed = true;
  }
}

// Finds the index of the bracket closing the one at `open` (same kind), or npos.
size_t findClose(std::string_view s, size_t open, char opener, char closer);

bool stripPrefixes(std::string& s) {
  static constexpr std::string_view kPrefixes[] = {"non-virtual thunk to ",
                                                   "virtual thunk to ",
                                                   "covariant return thunk to ",
                                                   "@objc ",
                                                   "partial apply for ",
                                                   "partial apply forwarder for ",
                                                   "partial apply ObjC forwarder for ",
                                                   "async function pointer to ",
                                                   "protocol witness for ",
                                                   "merged ",
                                                   "specialized ",
                                                   "dispatch thunk of ",
                                                   "@nonobjc ",
                                                   "static "};
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (auto prefix : kPrefixes) {
      if (std::string_view(s).starts_with(prefix)) {
        s.erase(0, prefix.size());
        again = changed = true;
      }
    }
    // Swift: "generic specialization <Swift.Int> of Foo.bar" -> "Foo.bar", and the other
    // "<…> of" specializations; the bracket is matched, since its text can hold "> of ".
    for (std::string_view specialization : {"generic specialization <", "generic not re-abstracted specialization <",
                                            "function signature specialization <", "inlined generic function <"}) {
      if (!std::string_view(s).starts_with(specialization)) continue;
      size_t close = findClose(s, specialization.size() - 1, '<', '>');
      if (close != std::string::npos && std::string_view(s).substr(close).starts_with("> of ")) {
        s.erase(0, close + 5);
        again = changed = true;
      }
    }
    // Swift async functions are split at every suspension point: "(2) suspend resume partial
    // function for X.f() async -> ()" is still X.f.
    if (s.size() > 4 && s[0] == '(' && isDigit(s[1])) {
      size_t close = s.find(") ");
      for (std::string_view kind : {"suspend resume partial function for ", "await resume partial function for "}) {
        if (close != std::string::npos && std::string_view(s).substr(close + 2).starts_with(kind)) {
          s.erase(0, close + 2 + kind.size());
          again = changed = true;
        }
      }
    }
  }
  return changed;
}

// "__29-[Foo bar]_block_invoke" -> "-[Foo bar]_block_invoke"
bool stripBlockPrefix(std::string& s) {
  if (s.size() < 4 || s[0] != '_' || s[1] != '_' || !isDigit(s[2])) return false;
  size_t i = 2;
  while (i < s.size() && isDigit(s[i])) ++i;
  if (i + 1 >= s.size() || (s[i] != '-' && s[i] != '+') || s[i + 1] != '[') return false;
  s.erase(0, i);
  return true;
}

// "foo_block_invoke_2" / "foo_block_invoke.17" -> "foo_block_invoke"
bool stripBlockSuffix(std::string& s) {
  static constexpr std::string_view kBlock = "_block_invoke";
  size_t pos = s.rfind(kBlock);
  if (pos == std::string::npos) return false;
  size_t end = pos + kBlock.size();
  if (end == s.size()) return false;
  if ((s[end] == '_' || s[end] == '.') && text::allDigits(std::string_view(s).substr(end + 1))) {
    s.resize(end);
    return true;
  }
  return false;
}

// Rust's legacy mangling escapes what a path cannot hold ("$LT$" '<', "$GT$" '>', "$u20$" ' ',
// "$C$" ',', "$RF$" '&', "$BP$" '*', "..", "::"), and an LLVM-style demangler leaves the escapes
// in: "_$LT$inventory..Item$u20$as$u20$core..fmt..Debug$GT$::fmt" is DWARF's
// "<inventory::Item as core::fmt::Debug>::fmt". Decoded, so that a frame named from the symbol
// table (out of line) and one named from DWARF (inlined) get one key.
bool decodeRustEscapes(std::string& s) {
  if (s.find('$') == std::string::npos ||
      (s.find("$LT$") == std::string::npos && s.find("$u") == std::string::npos && s.find("$C$") == std::string::npos &&
       s.find("$RF$") == std::string::npos && s.find("$BP$") == std::string::npos)) {
    return false;
  }
  static constexpr std::pair<std::string_view, std::string_view> kEscapes[] = {
      {"$LT$", "<"},  {"$GT$", ">"},  {"$u20$", " "}, {"$C$", ","},   {"$RF$", "&"},  {"$BP$", "*"},
      {"$SP$", "@"},  {"$LP$", "("},  {"$RP$", ")"},  {"$u27$", "'"}, {"$u5b$", "["}, {"$u5d$", "]"},
      {"$u7b$", "{"}, {"$u7d$", "}"}, {"$u7e$", "~"}, {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u22$", "\""}};
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    // A path component that starts with an escape is written with a leading '_'.
    if (s[i] == '_' && i + 1 < s.size() && s[i + 1] == '$' && (i == 0 || s[i - 1] == ':')) {
      ++i;
      continue;
    }
    if (s[i] == '$') {
      bool replaced = false;
      for (const auto& [escape, text] : kEscapes) {
        if (std::string_view(s).substr(i).starts_with(escape)) {
          out += text;
          i += escape.size();
          replaced = true;
          break;
        }
      }
      if (replaced) continue;
    }
    if (s[i] == '.' && i + 1 < s.size() && s[i + 1] == '.') {
      out += "::";
      i += 2;
      continue;
    }
    out += s[i++];
  }
  s = std::move(out);
  return true;
}

// "core::panicking::panic::h1a2b3c4d5e6f7a8b" -> "core::panicking::panic"
bool stripRustHash(std::string& s) {
  if (s.size() < 20) return false;
  std::string_view tail = std::string_view(s).substr(s.size() - 19);
  if (!tail.starts_with("::h")) return false;
  for (char c : tail.substr(3)) {
    if (!isHexDigit(c)) return false;
  }
  s.resize(s.size() - 19);
  return true;
}

// Swift: "closure #2 in implicit closure #1 in Foo.bar" -> prefix "closure in closure in ".
// Also skips a closure's printed signature: "closure #1 (Swift.Int) -> () in Foo.bar".
bool takeSwiftClosurePrefix(std::string& s, std::string& prefix) {
  bool changed = false;
  for (;;) {
    std::string_view view(s);
    size_t start = 0;
    if (view.starts_with("implicit closure #")) {
      start = 18;
    } else if (view.starts_with("closure #")) {
      start = 9;
    } else {
      return changed;
    }
    size_t in = view.find(" in ", start);
    if (in == std::string_view::npos) return changed;
    prefix += "closure in ";
    s.erase(0, in + 4);
    changed = true;
  }
}

// Swift decorations that are not part of a function's name:
//   "main.Test.(in _PRIV_).init(x: Swift.Int)"        -> "main.Test.init(x: Swift.Int)"
//   "test.(getPrivateClass in _DISC)() -> test.C"      -> "test.getPrivateClass() -> test.C"
//   "P.foo() -> Swift.Int in conformance C : P in M"   -> "P.foo() -> Swift.Int"
//   "example.f() async throws -> ()"                   -> "example.f() -> ()"
bool stripSwiftDecorations(std::string& s) {
  bool changed = false;
  for (size_t at = s.find("(in _"); at != std::string::npos; at = s.find("(in _", at)) {
    size_t close = s.find(')', at);
    if (close == std::string::npos) break;
    size_t end = close + 1 < s.size() && s[close + 1] == '.' ? close + 2 : close + 1;
    s.erase(at, end - at);
    changed = true;
  }
  for (size_t at = s.find(" in _"); at != std::string::npos; at = s.find(" in _", at + 1)) {
    size_t open = s.rfind('(', at);
    size_t close = s.find(')', at);
    if (open == std::string::npos || close == std::string::npos) break;
    s.erase(at, close + 1 - at);  // "(name in _DISC)" -> "(name"
    s.erase(open, 1);             // -> "name"
    changed = true;
    at = open;
  }
  size_t conformance = s.find(" in conformance ");
  if (conformance != std::string::npos) {
    s.resize(conformance);
    changed = true;
  }
  for (std::string_view effect : {" async throws", " async rethrows", " async", " throws", " rethrows"}) {
    for (size_t at = s.find(effect); at != std::string::npos; at = s.find(effect, at)) {
      size_t after = at + effect.size();
      if (after != s.size() && !std::string_view(s).substr(after).starts_with(" -> ")) {
        at = after;
        continue;
      }
      s.erase(at, effect.size());
      changed = true;
    }
  }
  return changed;
}

bool isOperatorChar(char c) {
  return std::string_view("+-*/%^&|~!=<>,").find(c) != std::string_view::npos;
}

// Finds the index of the bracket closing the one at `open` (same kind), or npos.
size_t findClose(std::string_view s, size_t open, char opener, char closer) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == opener) {
      ++depth;
    } else if (s[i] == closer && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

// '<' at `open`: the matching '>' counting nested <> but ignoring '>' inside parentheses.
size_t findTemplateClose(std::string_view s, size_t open) {
  int angle = 0, paren = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(') {
      ++paren;
    } else if (c == ')') {
      if (paren > 0) --paren;
    } else if (paren == 0 && c == '<') {
      ++angle;
    } else if (paren == 0 && c == '>' && --angle == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

struct StructuralResult {
  bool templates = false;
  bool arguments = false;
  bool lambda_numbers = false;
};

// Inside "{lambda(int)#1}" / "{unnamed type#2}": drop parameter lists and "#N".
std::string normalizeBraceContent(std::string_view inner, StructuralResult& result) {
  std::string out;
  for (size_t i = 0; i < inner.size(); ++i) {
    char c = inner[i];
    if (c == '(') {
      size_t close = findClose(inner, i, '(', ')');
      if (close == std::string_view::npos) break;
      i = close;
    } else if (c == '#' && i + 1 < inner.size() && isDigit(inner[i + 1])) {
      while (i + 1 < inner.size() && isDigit(inner[i + 1])) ++i;
      result.lambda_numbers = true;
    } else {
      out += c;
    }
  }
  return out;
}

// One pass that replaces template arguments by "<T>", removes parameter lists and keeps
// operator names intact ("operator()", "operator<<", "operator bool").
std::string structuralPass(std::string_view s, StructuralResult& result, int depth = 0) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == 'o' && s.substr(i).starts_with("operator") && (i == 0 || !text::isIdentChar(s[i - 1])) &&
        (i + 8 >= s.size() || !text::isIdentChar(s[i + 8]) || s[i + 8] == ' ')) {
      out += "operator";
      i += 8;
      if (i < s.size() && s.substr(i).starts_with("()")) {
        out += "()";
        i += 1;
      } else if (i < s.size() && s.substr(i).starts_with("[]")) {
        out += "[]";
        i += 1;
      } else if (i < s.size() && isOperatorChar(s[i])) {
        while (i < s.size() && isOperatorChar(s[i])) out += s[i++];
        --i;
      } else {
        // "operator new[]", "operator bool", "operator char const*": glue the type on with '_'
        // so the return-type split below cannot cut it.
        size_t end = i;
        while (end < s.size() && s[end] != '(') ++end;
        std::string_view type = text::trim(s.substr(i, end - i));
        out += '_';
        for (char t : type) out += (t == ' ') ? '_' : t;
        i = end - 1;
      }
    } else if (c == '<') {
      size_t close = findTemplateClose(s, i);
      if (close == std::string_view::npos) {
        out += s.substr(i);
        break;
      }
      if ((i == 0 || !text::isIdentChar(s[i - 1])) && depth < 8) {
        // Rust qualified path "<Type as Trait>::method": the brackets name the impl, keep it.
        out += '<';
        out += structuralPass(s.substr(i + 1, close - i - 1), result, depth + 1);
        out += '>';
      } else {
        out += "<T>";
        result.templates = true;
      }
      i = close;
    } else if (c == '(') {
      size_t close = findClose(s, i, '(', ')');
      if (close == std::string_view::npos) break;  // unbalanced: drop the rest
      result.arguments = true;
      i = close;
      // Qualifiers of an enclosing function in a nested name belong to its argument list:
      // "A::f(int) const::'lambda'(int)::operator()" -> "A::f::'lambda'::operator()".
      for (bool again = true; again;) {
        again = false;
        for (std::string_view qualifier : {" const", " volatile", " &&", " &", " noexcept"}) {
          std::string_view rest = s.substr(i + 1);
          if (rest.starts_with(qualifier) && rest.substr(qualifier.size()).starts_with("::")) {
            i += qualifier.size();
            again = true;
          }
        }
      }
    } else if (c == '{') {
      size_t close = findClose(s, i, '{', '}');
      if (close == std::string_view::npos) break;
      std::string inner = normalizeBraceContent(s.substr(i + 1, close - i - 1), result);
      out += '{';
      out += depth < 8 ? structuralPass(inner, result, depth + 1) : inner;
      out += '}';
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

// "'lambda0'" -> "'lambda'", "'unnamed2'" -> "'unnamed'", "$_12" -> "$_" (clang lambdas).
bool stripLambdaNumbers(std::string& s) {
  bool changed = false;
  for (std::string_view word : {std::string_view("'lambda"), std::string_view("'unnamed")}) {
    size_t pos = 0;
    while ((pos = s.find(word, pos)) != std::string::npos) {
      size_t digits = pos + word.size();
      size_t end = digits;
      while (end < s.size() && isDigit(s[end])) ++end;
      if (end > digits) {
        s.erase(digits, end - digits);
        changed = true;
      }
      pos = digits;
    }
  }
  size_t pos = 0;
  while ((pos = s.find("$_", pos)) != std::string::npos) {
    size_t end = pos + 2;
    while (end < s.size() && isDigit(s[end])) ++end;
    if (end > pos + 2) {
      s.erase(pos + 2, end - pos - 2);
      changed = true;
    }
    pos += 2;
  }
  return changed;
}

bool stripTrailingQualifiers(std::string& s) {
  static constexpr std::string_view kQualifiers[] = {" const", " volatile", " &&", " &", " noexcept", " override"};
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    for (auto q : kQualifiers) {
      if (std::string_view(s).ends_with(q)) {
        s.resize(s.size() - q.size());
        again = changed = true;
      }
    }
  }
  return changed;
}

// "void foo::bar" -> "foo::bar": the name is the last space-separated word at bracket depth 0.
bool stripReturnType(std::string& s) {
  int depth = 0;
  size_t last_space = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<' || c == '{' || c == '[') ++depth;
    if ((c == '>' || c == '}' || c == ']') && depth > 0) --depth;
    if (c == ' ' && depth == 0) last_space = i;
  }
  if (last_space == std::string::npos || last_space + 1 >= s.size()) return false;
  s.erase(0, last_space + 1);
  return true;
}

}  // namespace

NormalizedName normalizeNativeName(std::string_view function) {
  NormalizedName result;
  std::string_view trimmed = text::trim(function);
  if (trimmed.size() > kMaxNameBytes) trimmed = trimmed.substr(0, kMaxNameBytes);
  if (trimmed.empty() || trimmed == "???" || trimmed == "<redacted>" || trimmed == "<unknown>" ||
      trimmed == "unknown") {
    return result;
  }
  std::string s(trimmed);
  auto note = [&result](bool changed, const char* tag) {
    if (changed) result.steps.push_back(tag);
  };

  note(stripSymbolOffset(s), "native:symbol-offset");
  note(stripBracketTags(s, "[clone "), "native:clone-suffix");
  note(stripBracketTags(s, "[abi:"), "native:abi-tag");
  note(stripPrefixes(s), "native:thunk-prefix");
  // Objective-C selectors contain dots never; skip them anyway so "-[A b.c]" stays whole.
  if (s.find('[') == std::string::npos) note(stripRawCloneSuffix(s), "native:clone-suffix");

  std::string_view view(s);
  if (view.starts_with("_OUTLINED_FUNCTION_") || view.starts_with("OUTLINED_FUNCTION_") ||
      view.starts_with("__OUTLINED_FUNCTION_")) {
    result.drop_reason = "outlined function";
    result.name = "_OUTLINED_FUNCTION";
    return result;
  }
  note(stripBlockPrefix(s), "native:block-number");
  note(stripBlockSuffix(s), "native:block-number");

  if (s.starts_with("-[") || s.starts_with("+[")) {
    // Objective-C: "-[Class(Category) selector:with:]" has no arguments or templates to strip.
    result.name = std::move(s);
    return result;
  }

  if (s.find("Swift.") != std::string::npos || s.find(" -> ") != std::string::npos ||
      s.find(" in _") != std::string::npos || s.find("(in _") != std::string::npos) {
    note(stripSwiftDecorations(s), "swift:decorations");
  }
  std::string closure_prefix;
  note(takeSwiftClosurePrefix(s, closure_prefix), "swift:closure-number");
  bool inline_namespace = false;
  for (std::string_view inline_ns : {"std::__1::", "std::__ndk1::", "std::__cxx11::", "std::__2::"}) {
    inline_namespace = text::replaceAll(s, inline_ns, "std::") || inline_namespace;
  }
  note(inline_namespace, "native:std-inline-namespace");
  text::replaceAll(s, "(anonymous namespace)", "{anon}");
  note(stripRustHash(s), "rust:hash");
  note(decodeRustEscapes(s), "rust:escapes");
  // Rust spells one closure "{{closure}}" in legacy-mangled symbol names and "{closure#0}" in
  // DWARF and v0 names (whose number the brace pass drops): an inlined copy and an out-of-line
  // one of the same closure get the same key.
  note(text::replaceAll(s, "{{closure}}", "{closure}"), "rust:closure");
  note(stripLambdaNumbers(s), "native:lambda-number");

  StructuralResult structure;
  s = structuralPass(s, structure);
  note(structure.templates, "native:template-args");
  note(structure.arguments, "native:arguments");
  note(structure.lambda_numbers, "native:lambda-number");

  size_t arrow = s.find(" -> ");  // Swift return type left after the argument list went away
  if (arrow != std::string::npos) {
    s.resize(arrow);
    note(true, "swift:return-type");
  }
  note(stripTrailingQualifiers(s), "native:qualifiers");
  note(stripReturnType(s), "native:return-type");
  // Clang names a lambda of an ordinary (non-inline) function "$_0", GCC "{lambda(int)#1}"
  // (demangled "'lambda'(int)"): the same closure, so the same key whichever compiled it.
  note(text::replaceAll(s, "::$_::operator()", "::'lambda'::operator()"), "native:clang-lambda");
  while (!s.empty() && s.front() == ':') s.erase(0, 1);  // "(extension in X):Y.z" -> "Y.z"
  note(stripRustHash(s), "rust:hash");

  result.name = closure_prefix + std::string(text::trim(s));
  if (text::trim(s).empty()) result.name.clear();
  return result;
}

}  // namespace restack::grouping

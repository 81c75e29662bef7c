#include "formats/sourcemap/function_scanner.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace restack::sourcemap {
namespace {

enum class TokenType { kIdent, kPunct, kString, kNumber, kRegex, kTemplate };

struct Token {
  TokenType type;
  std::string_view text;
  uint32_t line;    // 1-based
  uint32_t column;  // 0-based, UTF-16 units
};

bool isIdentStart(unsigned char c) {
  return std::isalpha(c) || c == '_' || c == '$' || c >= 0x80 || c == '#';
}
bool isIdentPart(unsigned char c) {
  return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

bool isKeywordBeforeExpression(std::string_view word) {
  static constexpr std::string_view kWords[] = {"return", "typeof", "case", "do",    "else",       "in",    "of",
                                                "new",    "delete", "void", "throw", "instanceof", "yield", "await"};
  for (std::string_view keyword : kWords) {
    if (word == keyword) return true;
  }
  return false;
}

bool isControlKeyword(std::string_view word) {
  static constexpr std::string_view kWords[] = {"if",   "for",      "while",  "switch", "catch",
                                                "with", "function", "return", "typeof", "await"};
  for (std::string_view keyword : kWords) {
    if (word == keyword) return true;
  }
  return false;
}

// Splits source text into tokens; whitespace and comments are dropped. Never fails.
class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    // Open '{' kinds, to know whether a '}' resumes a template literal.
    std::vector<bool> brace_is_template;
    while (pos_ < text_.size()) {
      const unsigned char c = text_[pos_];
      if (c == '\n') {
        advance();
        continue;
      }
      if (std::isspace(c)) {
        advance();
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
        continue;
      }
      if (c == '/' && peek(1) == '*') {
        advance(2);
        while (pos_ < text_.size() && !(text_[pos_] == '*' && peek(1) == '/')) advance();
        advance(2);
        continue;
      }
      const uint32_t line = line_, column = column_;
      const size_t start = pos_;
      if (c == '"' || c == '\'') {
        skipQuoted(static_cast<char>(c));
        tokens.push_back({TokenType::kString, text_.substr(start, pos_ - start), line, column});
      } else if (c == '`') {
        advance();
        scanTemplate(&brace_is_template);
        tokens.push_back({TokenType::kTemplate, text_.substr(start, pos_ - start), line, column});
      } else if (c == '}' && !brace_is_template.empty() && brace_is_template.back()) {
        brace_is_template.pop_back();
        advance();
        scanTemplate(&brace_is_template);
        tokens.push_back({TokenType::kTemplate, text_.substr(start, pos_ - start), line, column});
      } else if (isIdentStart(c)) {
        advance();
        while (pos_ < text_.size() && isIdentPart(text_[pos_])) advance();
        tokens.push_back({TokenType::kIdent, text_.substr(start, pos_ - start), line, column});
      } else if (std::isdigit(c) || (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' || text_[pos_] == '_')) {
          advance();
        }
        tokens.push_back({TokenType::kNumber, text_.substr(start, pos_ - start), line, column});
      } else if (c == '/' && regexAllowed(tokens)) {
        skipRegex();
        tokens.push_back({TokenType::kRegex, text_.substr(start, pos_ - start), line, column});
      } else {
        size_t length = 1;
        if (text_.substr(pos_, 3) == "...") {
          length = 3;
        } else if (c == '=' && peek(1) == '>') {
          length = 2;
        } else if ((c == '=' || c == '!') && peek(1) == '=') {
          length = peek(2) == '=' ? 3 : 2;
        } else if (c == '?' && peek(1) == '.') {
          length = 2;
        }
        if (c == '{') brace_is_template.push_back(false);
        if (c == '}' && !brace_is_template.empty()) brace_is_template.pop_back();
        advance(length);
        tokens.push_back({TokenType::kPunct, text_.substr(start, length), line, column});
      }
    }
    return tokens;
  }

 private:
  char peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // Moves over `count` bytes, keeping line/column (UTF-16 units) up to date.
  void advance(size_t count = 1) {
    for (size_t i = 0; i < count && pos_ < text_.size(); ++i) {
      const unsigned char c = text_[pos_++];
      if (c == '\n') {
        ++line_;
        column_ = 0;
      } else if ((c & 0xc0) != 0x80) {
        // A UTF-8 lead byte starts a code point; 4-byte sequences are two UTF-16 units.
        column_ += (c >= 0xf0) ? 2 : 1;
      }
    }
  }

  void skipQuoted(char quote) {
    advance();
    while (pos_ < text_.size() && text_[pos_] != quote && text_[pos_] != '\n') {
      if (text_[pos_] == '\\') advance();
      advance();
    }
    advance();
  }

  // Scans template text up to the closing '`' or a '${' (which opens a template brace).
  void scanTemplate(std::vector<bool>* brace_is_template) {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\\') {
        advance(2);
      } else if (c == '`') {
        advance();
        return;
      } else if (c == '$' && peek(1) == '{') {
        advance(2);
        brace_is_template->push_back(true);
        return;
      } else {
        advance();
      }
    }
  }

  void skipRegex() {
    advance();
    bool in_class = false;
    while (pos_ < text_.size() && text_[pos_] != '\n') {
      const char c = text_[pos_];
      if (c == '\\') {
        advance(2);
        continue;
      }
      advance();
      if (c == '[') in_class = true;
      if (c == ']') in_class = false;
      if (c == '/' && !in_class) break;
    }
    while (pos_ < text_.size() && isIdentPart(text_[pos_])) advance();  // flags
  }

  static bool regexAllowed(const std::vector<Token>& tokens) {
    if (tokens.empty()) return true;
    const Token& previous = tokens.back();
    switch (previous.type) {
      case TokenType::kIdent:
        return isKeywordBeforeExpression(previous.text);
      case TokenType::kPunct:
        return previous.text != ")" && previous.text != "]" && previous.text != "}";
      default:
        return false;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t column_ = 0;
};

enum class ScopeKind { kBlock, kFunction, kClass, kArrowExpression };

struct Scope {
  ScopeKind kind;
  std::string name;  // function or class name
  size_t depth = 0;  // bracket depth at which an arrow expression body lives
};

class FunctionMapBuilder {
 public:
  FunctionMapBuilder(std::vector<Token> tokens, const TokenRenamer& rename)
      : tokens_(std::move(tokens)), rename_(rename) {
    match_.assign(tokens_.size(), SIZE_MAX);
    close_brace_.assign(tokens_.size(), SIZE_MAX);
    std::vector<size_t> open;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (is(i, "{")) {
        open.push_back(i);
      } else if (is(i, "}") && !open.empty()) {
        close_brace_[open.back()] = i;
        open.pop_back();
      }
    }
  }

  FunctionMap run() {
    add(1, 0, "<global>");
    std::vector<size_t> open_parens;  // token indexes of unmatched '(' and '['
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Token& token = tokens_[i];
      if (token.type != TokenType::kPunct) continue;
      const std::string_view text = token.text;
      if (text == "(" || text == "[") {
        open_parens.push_back(i);
        ++depth_;
      } else if (text == ")" || text == "]") {
        closeArrowsAt(i, /*closing=*/true);
        if (!open_parens.empty()) {
          match_[i] = open_parens.back();
          open_parens.pop_back();
        }
        if (depth_ > 0) --depth_;
      } else if (text == "{") {
        openBrace(i);
        ++depth_;
      } else if (text == "}") {
        closeArrowsAt(i, /*closing=*/true);
        if (depth_ > 0) --depth_;
        closeBrace(i);
      } else if (text == "," || text == ";") {
        closeArrowsAt(i, /*closing=*/false);
      } else if (text == "=>" && (i + 1 >= tokens_.size() || tokens_[i + 1].text != "{")) {
        const size_t start = arrowStart(i);
        scopes_.push_back({ScopeKind::kArrowExpression, nameBefore(start), depth_});
        add(tokens_[start].line, tokens_[start].column, scopes_.back().name);
        if (i + 1 < tokens_.size()) add(tokens_[i + 1].line, tokens_[i + 1].column, scopes_.back().name);
      }
    }
    // An arrow's entry sits at its parameters, which may hold functions already added
    // ("(a = function () {}) => …"): restore source order; on equal positions the later wins.
    std::vector<size_t> order(map_.entries.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const auto& x = map_.entries[a];
      const auto& y = map_.entries[b];
      return std::tie(x.line, x.column, a) < std::tie(y.line, y.column, b);
    });
    std::vector<FunctionMapEntry> sorted;
    sorted.reserve(order.size());
    for (size_t index : order) {
      const FunctionMapEntry& entry = map_.entries[index];
      if (!sorted.empty() && sorted.back().line == entry.line && sorted.back().column == entry.column) {
        sorted.back() = entry;
      } else {
        sorted.push_back(entry);
      }
    }
    map_.entries = std::move(sorted);
    return std::move(map_);
  }

 private:
  bool is(size_t index, std::string_view text) const {
    return index < tokens_.size() && tokens_[index].text == text && tokens_[index].type != TokenType::kString;
  }
  bool isIdent(size_t index) const { return index < tokens_.size() && tokens_[index].type == TokenType::kIdent; }

  // An identifier as the original source spells it: the renamer's answer when scanning a
  // minified file, else the token itself.
  std::string textOf(size_t index) const {
    const Token& token = tokens_[index];
    if (rename_ && token.type == TokenType::kIdent) return rename_(token.line, token.column, token.text);
    return std::string(token.text);
  }

  // `get x() {}` / `set x(v) {}`: the accessor keyword before a method name, when it is one.
  bool isAccessorKeyword(size_t index) const {
    if (!is(index, "get") && !is(index, "set")) return false;
    return index == 0 || is(index - 1, "{") || is(index - 1, ",") || is(index - 1, ";") || is(index - 1, "}") ||
           is(index - 1, "static");
  }

  void add(uint32_t line, uint32_t column, const std::string& name) {
    auto [it, inserted] = name_index_.try_emplace(name, static_cast<uint32_t>(map_.names.size()));
    if (inserted) map_.names.push_back(name);
    if (!map_.entries.empty()) {
      FunctionMapEntry& last = map_.entries.back();
      if (last.line == line && last.column == column) {  // same position: the later one wins
        last.name = it->second;
        return;
      }
    }
    map_.entries.push_back({line, column, it->second});
  }

  std::string enclosingFunctionName() const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->kind == ScopeKind::kFunction || it->kind == ScopeKind::kArrowExpression) return it->name;
    }
    return "<global>";
  }

  const Scope* enclosingBrace() const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->kind != ScopeKind::kArrowExpression) return &*it;
    }
    return nullptr;
  }

  // Ends arrow expression bodies: at ',' ';' on their own depth, or at a closing bracket that
  // leaves it.
  void closeArrowsAt(size_t index, bool closing) {
    while (!scopes_.empty() && scopes_.back().kind == ScopeKind::kArrowExpression) {
      const size_t depth = scopes_.back().depth;
      const bool ends = closing ? depth_ <= depth : depth_ == depth;
      if (!ends) return;
      scopes_.pop_back();
      add(tokens_[index].line, tokens_[index].column, enclosingFunctionName());
    }
  }

  // The first token of an arrow function whose "=>" is at `arrow`: its parameter list (or the
  // single parameter), plus a leading "async".
  size_t arrowStart(size_t arrow) const {
    if (arrow == 0) return 0;
    size_t start = arrow - 1;
    if (!is(start, ")")) {
      const size_t close = closeBeforeReturnType(start);  // (a: T): R => …
      if (close != SIZE_MAX) start = close;
    }
    if (is(start, ")") && match_[start] != SIZE_MAX) start = match_[start];
    if (start > 0 && is(start - 1, "async")) --start;
    return start;
  }

  // TypeScript/Flow: when tokens [.., last] are a return type annotation "): Type", the index of
  // that ')' (matched), else SIZE_MAX. Types of identifiers, dots, generics, unions,
  // intersections, arrays, tuples, literals and predicates ("x is T") are recognised.
  size_t closeBeforeReturnType(size_t last) const {
    int angles = 0;
    size_t at = last;
    for (int steps = 0; steps < 64 && at != SIZE_MAX && at < tokens_.size(); ++steps) {
      const Token& token = tokens_[at];
      if (token.type == TokenType::kPunct) {
        const std::string_view text = token.text;
        if (text == ":" && angles == 0) {
          // A type must follow the ':' ("case (a): {" has none).
          return at != last && at > 0 && is(at - 1, ")") && match_[at - 1] != SIZE_MAX ? at - 1 : SIZE_MAX;
        }
        if ((text == "," || text == "?") && angles == 0) {
          // Outside generics a type has neither: minified "c?JSON.parse(t):t,{…}=d" is a
          // conditional followed by a destructuring, not a method "parse" returning "t,".
          return SIZE_MAX;
        }
        if (text == ">") {
          ++angles;
        } else if (text == "<") {
          if (--angles < 0) return SIZE_MAX;
        } else if ((text == ")" || text == "]") && match_[at] != SIZE_MAX) {
          at = match_[at];
        } else if (text != "." && text != "|" && text != "&" && text != "," && text != "?" && text != "[" &&
                   text != "(") {
          return SIZE_MAX;
        }
      } else if (token.type == TokenType::kRegex || token.type == TokenType::kTemplate) {
        return SIZE_MAX;
      }
      if (at == 0) break;
      --at;
    }
    return SIZE_MAX;
  }

  // `name<T, U>(`: the index of `name` given the index of the '>' before '(' (else `at`).
  size_t skipTypeParameters(size_t at) const {
    if (!is(at, ">")) return at;
    int angles = 0;
    for (size_t i = at, steps = 0; i != SIZE_MAX && steps < 64; --i, ++steps) {
      if (is(i, ">")) ++angles;
      if (is(i, "<") && --angles == 0) return i > 0 ? i - 1 : at;
      if (i == 0) break;
    }
    return at;
  }

  // The name a function expression starting at `start` gets from what precedes it:
  // "x = ", "a.b = ", "x: ", "const x = " -> "x" / "a.b"; anything else -> "<anonymous>".
  std::string nameBefore(size_t start) const {
    if (start >= 1 && (is(start - 1, "=") || is(start - 1, ":")) && start >= 2) {
      size_t at = start - 2;
      if (tokens_[at].type == TokenType::kString && is(start - 1, ":")) {
        std::string_view quoted = tokens_[at].text;
        return quoted.size() >= 2 ? std::string(quoted.substr(1, quoted.size() - 2)) : "<anonymous>";
      }
      if (!isIdent(at)) return "<anonymous>";
      std::string name = textOf(at);
      while (at >= 2 && is(at - 1, ".") && isIdent(at - 2)) {
        at -= 2;
        // V8 leaves "prototype" out of inferred names: A.prototype.m = function … -> "A.m".
        if (tokens_[at].text == "prototype" && at >= 2 && is(at - 1, ".")) continue;
        name = textOf(at) + "." + name;
      }
      return name;
    }
    return "<anonymous>";
  }

  // Scanning a minified file: an anonymous function invoked where it is written
  // ("function(n){…}(x)", "(n=>{…})(x)") is what a minifier leaves of a function it inlined at
  // its only call (terser's compress does this in webpack and rollup builds). The map names that
  // call's '(' by the callee the original source called there, the inlined function's own name,
  // which V8 printed for it in the original program. `body` is the function's '{'.
  std::string invokedAs(size_t body) const {
    static const std::string kAnonymous = "<anonymous>";
    if (!rename_ || close_brace_[body] == SIZE_MAX) return kAnonymous;
    size_t call = close_brace_[body] + 1;
    if (is(call, ")")) ++call;  // (function(){…})(x)
    if (!is(call, "(")) return kAnonymous;
    std::string name = rename_(tokens_[call].line, tokens_[call].column, {});
    // A member call ("f0.entry0(x)" with f0 a module namespace, as rollup records the callee it
    // rewrote) called the function its last part names.
    if (const size_t dot = name.rfind('.'); dot != std::string::npos) name.erase(0, dot + 1);
    return name.empty() ? kAnonymous : name;
  }

  void openBrace(size_t index) {
    Scope scope{ScopeKind::kBlock, {}, depth_};
    size_t start = index;
    if (index > 0) {
      size_t previous = index - 1;
      if (!is(previous, ")") && !is(previous, "=>")) {
        const size_t close = closeBeforeReturnType(previous);  // m(a: T): R {
        if (close != SIZE_MAX) previous = close;
      }
      if (is(previous, ")") && match_[previous] != SIZE_MAX) {
        const size_t open = match_[previous];
        size_t before = open > 0 ? open - 1 : SIZE_MAX;
        if (before != SIZE_MAX) before = skipTypeParameters(before);        // f<T>(…)
        if (before != SIZE_MAX && is(before, "?") && before > 0) --before;  // optional method m?()
        if (before != SIZE_MAX && is(before, "*")) --before;                // generator
        if (before != SIZE_MAX && is(before, "function")) {
          scope.kind = ScopeKind::kFunction;
          start = before > 0 && is(before - 1, "async") ? before - 1 : before;
          scope.name = nameBefore(start);
          if (scope.name == "<anonymous>") scope.name = invokedAs(index);
        } else if (before != SIZE_MAX && isIdent(before) && before > 0 &&
                   (is(before - 1, "function") || (is(before - 1, "*") && before > 1 && is(before - 2, "function")))) {
          scope.kind = ScopeKind::kFunction;
          scope.name = textOf(before);
          start = is(before - 1, "*") ? before - 2 : before - 1;
          if (start > 0 && is(start - 1, "async")) --start;
        } else if (before != SIZE_MAX && (isIdent(before) || is(before, "]")) &&
                   !isControlKeyword(tokens_[before].text)) {
          // A method definition: name(…) {, get name(…) {, [computed](…) {.
          scope.kind = ScopeKind::kFunction;
          std::string method = isIdent(before) ? textOf(before) : "<computed>";
          start = before;
          if (is(before, "]") && match_[before] != SIZE_MAX) start = match_[before];
          const Scope* owner = enclosingBrace();
          if (start > 0 && isAccessorKeyword(start - 1)) {
            // V8 names accessors "get x" / "set x", in classes and object literals alike.
            scope.name = std::string(tokens_[start - 1].text) + " " + method;
            --start;
          } else if (owner != nullptr && owner->kind == ScopeKind::kClass) {
            scope.name = method == "constructor" ? owner->name : owner->name + "." + method;
          } else {
            scope.name = method;
          }
        }
      } else if (is(previous, "=>")) {
        scope.kind = ScopeKind::kFunction;
        start = arrowStart(previous);
        scope.name = nameBefore(start);
        if (scope.name == "<anonymous>") scope.name = invokedAs(index);
      } else {
        // class Name {, class Name extends a.b.C {, class {, class extends X {; TypeScript's
        // "implements A, B.C" clause before the brace is skipped (npm packages ship maps whose
        // sourcesContent is their TypeScript source).
        size_t at = previous;
        while (at > 0 && (isIdent(at) || is(at, ".") || is(at, ",")) && !is(at, "implements") && !is(at, "class")) --at;
        if (is(at, "implements") && at > 0) previous = at - 1;
        at = previous;
        while (at > 0 && (isIdent(at) || is(at, ".")) && !is(at, "class") && !is(at, "extends")) --at;
        if (is(at, "extends")) {
          --at;
          if (is(at, "class")) {
            scope.kind = ScopeKind::kClass;
            scope.name = nameBefore(at);
          } else if (isIdent(at) && at > 0 && is(at - 1, "class")) {
            scope.kind = ScopeKind::kClass;
            scope.name = textOf(at);
          }
        } else if (is(previous, "class")) {
          scope.kind = ScopeKind::kClass;
          scope.name = nameBefore(previous);
        } else if (isIdent(previous) && previous > 0 && is(previous - 1, "class")) {
          scope.kind = ScopeKind::kClass;
          scope.name = textOf(previous);
        }
      }
    }
    scopes_.push_back(scope);
    if (scope.kind == ScopeKind::kFunction) {
      add(tokens_[start].line, tokens_[start].column, scope.name);
      // Again at the body: functions in default parameter values ended in between, naming the
      // code after them by the scope that was open before this function was known.
      add(tokens_[index].line, tokens_[index].column, scope.name);
    }
  }

  void closeBrace(size_t index) {
    // Drop arrow bodies that a malformed input left open inside this brace.
    while (!scopes_.empty() && scopes_.back().kind == ScopeKind::kArrowExpression) scopes_.pop_back();
    if (scopes_.empty()) return;
    const bool was_function = scopes_.back().kind == ScopeKind::kFunction;
    scopes_.pop_back();
    if (was_function) {
      const Token& brace = tokens_[index];
      add(brace.line, brace.column + 1, enclosingFunctionName());
    }
  }

  std::vector<Token> tokens_;
  const TokenRenamer& rename_;
  std::vector<size_t> match_;        // for ')' and ']': index of the matching opener
  std::vector<size_t> close_brace_;  // for '{': index of the matching '}'
  std::vector<Scope> scopes_;
  size_t depth_ = 0;
  FunctionMap map_;
  std::unordered_map<std::string, uint32_t> name_index_;
};

}  // namespace

FunctionMap inferFunctionMap(std::string_view source, const TokenRenamer& rename) {
  return FunctionMapBuilder(Tokenizer(source).run(), rename).run();
}

}  // namespace restack::sourcemap

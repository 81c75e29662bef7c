#include "formats/sourcemap/function_scanner.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <tuple>
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
  uint32_t id = 0;   // index into FunctionMapBuilder::scope_names_ (functions only)
  // A function literal V8 names by inference (an arrow, `function (…)` without a name): it joins
  // the pending functions of its parse context when it ends.
  bool literal = false;
  bool own_context = false;  // a function V8 compiles lazily: its body is a parse context
  // The function's own name as V8 holds it, where it differs from `name`: a class method's
  // ("m" where `name` is "K.m"), which V8 puts before the names it infers inside the method.
  std::optional<std::string> own_name = std::nullopt;
};

// What a '{' opens, for the names stack walk (FunctionMapBuilder::stackName).
enum class BraceKind : uint8_t { kBlock, kObject, kClass, kFunctionBody, kEagerFunctionBody, kArrowBody };

// One entry of V8's names stack (FuncNameInferrer): a variable reference or a property name.
struct InferredPart {
  std::string name;
  bool variable;
};

// A function literal that ended without a name of its own, waiting for V8's next inference.
struct Pending {
  uint32_t id;
  bool inferable;  // no name from its context: the inferred name becomes its name
};

// A parse of its own (the file, or a lazily compiled function): V8 infers names per parse.
struct Context {
  size_t boundary;  // the function body's '{' (SIZE_MAX: the file)
  std::vector<Pending> pending;
};

// An open `target = value` (or `const target = value`): V8 infers a name when its value ends.
struct Assignment {
  size_t eq;     // the '=' token
  size_t depth;  // bracket depth of the '='
  bool compound;
};

bool isStatementKeyword(std::string_view word) {
  static constexpr std::string_view kWords[] = {
      "return", "throw", "if",    "else",     "for", "while", "do",      "switch", "case",   "default", "var",
      "let",    "const", "break", "continue", "try", "catch", "finally", "export", "import", "class",   "function"};
  return std::find(std::begin(kWords), std::end(kWords), word) != std::end(kWords);
}

// V8 asks whether the first character is an uppercase letter in Unicode; ASCII here, as names
// that begin with another capital are rare.
bool startsWithCapital(std::string_view name) {
  return !name.empty() && name[0] >= 'A' && name[0] <= 'Z';
}

// Keywords inside an expression that V8 does not push on its names stack.
bool isExpressionKeyword(std::string_view word) {
  static constexpr std::string_view kWords[] = {"new",   "typeof", "void",       "delete", "await", "yield",
                                                "in",    "of",     "this",       "super",  "null",  "true",
                                                "false", "async",  "instanceof", "extends"};
  return std::find(std::begin(kWords), std::end(kWords), word) != std::end(kWords);
}

class FunctionMapBuilder {
 public:
  FunctionMapBuilder(std::vector<Token> tokens, const TokenRenamer& rename)
      : tokens_(std::move(tokens)), rename_(rename) {
    match_.assign(tokens_.size(), SIZE_MAX);
    close_brace_.assign(tokens_.size(), SIZE_MAX);
    open_brace_.assign(tokens_.size(), SIZE_MAX);
    parent_.assign(tokens_.size(), SIZE_MAX);
    brace_kind_.assign(tokens_.size(), BraceKind::kBlock);
    arrow_start_.assign(tokens_.size(), SIZE_MAX);
    std::vector<size_t> open, brackets;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      parent_[i] = brackets.empty() ? SIZE_MAX : brackets.back();
      if (is(i, "{")) {
        open.push_back(i);
      } else if (is(i, "}") && !open.empty()) {
        close_brace_[open.back()] = i;
        open_brace_[i] = open.back();
        open.pop_back();
      }
      if (is(i, "{") || is(i, "(") || is(i, "[")) {
        brackets.push_back(i);
      } else if ((is(i, "}") || is(i, ")") || is(i, "]")) && !brackets.empty()) {
        brackets.pop_back();
      }
    }
    scope_names_.push_back(std::string(kModuleCodeName));
    scope_inferred_.push_back(false);
    contexts_.push_back({SIZE_MAX, {}});
  }

  FunctionMap run() {
    add(1, 0, 0);
    std::vector<size_t> open_parens;  // token indexes of unmatched '(' and '['
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Token& token = tokens_[i];
      if (i > 0 && statementBreak(i - 1)) endAssignments(i);
      if (token.type != TokenType::kPunct) continue;
      const std::string_view text = token.text;
      if (text == "(" || text == "[") {
        open_parens.push_back(i);
        ++depth_;
      } else if (text == ")" || text == "]") {
        closeArrowsAt(i, /*closing=*/true);
        endAssignments(i);
        if (!open_parens.empty()) {
          match_[i] = open_parens.back();
          open_parens.pop_back();
        }
        if (depth_ > 0) --depth_;
        if (isCallEnd(i)) removeLastPending();
      } else if (text == "{") {
        openBrace(i);
        ++depth_;
      } else if (text == "}") {
        closeArrowsAt(i, /*closing=*/true);
        endAssignments(i);
        if (open_brace_[i] != SIZE_MAX && brace_kind_[open_brace_[i]] == BraceKind::kObject && i > 0 &&
            !is(i - 1, "{") && !is(i - 1, ",")) {
          endProperty(open_brace_[i], i);
        }
        if (depth_ > 0) --depth_;
        closeBrace(i);
      } else if (text == "," || text == ";") {
        closeArrowsAt(i, /*closing=*/false);
        endAssignments(i);
        if (text == "," && parent_[i] != SIZE_MAX && is(parent_[i], "{") &&
            brace_kind_[parent_[i]] == BraceKind::kObject) {
          endProperty(parent_[i], i);
        }
      } else if (text == "=") {
        openAssignment(i);
      } else if (text == "=>" && (i + 1 >= tokens_.size() || tokens_[i + 1].text != "{")) {
        const size_t start = arrowStart(i);
        Scope scope{ScopeKind::kArrowExpression, nameBefore(start), depth_};
        scope.literal = true;
        scope.id = newScope(scope.name);
        scopes_.push_back(scope);
        add(tokens_[start].line, tokens_[start].column, scope.id);
        if (i + 1 < tokens_.size()) add(tokens_[i + 1].line, tokens_[i + 1].column, scope.id);
      }
    }
    // Scope ids -> names (a pending function's name is known only once its context names it).
    for (FunctionMapEntry& entry : map_.entries) {
      const std::string& name = scope_names_[entry.name];
      const bool inferred = scope_inferred_[entry.name];
      auto [it, inserted] =
          name_index_.try_emplace(std::make_pair(name, inferred), static_cast<uint32_t>(map_.names.size()));
      if (inserted) map_.markInferred(map_.names.emplace_back(name), inferred);
      entry.name = it->second;
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
    if (rename_ && token.type == TokenType::kIdent) {
      std::string original = rename_(token.line, token.column, token.text);
      if (!original.empty()) return original;
    }
    return std::string(token.text);
  }

  // True when the renamer says the token (an identifier, or a property key) has no counterpart in
  // the original source.
  bool synthesized(size_t index) const {
    const Token& token = tokens_[index];
    return rename_ &&
           (token.type == TokenType::kIdent || token.type == TokenType::kNumber || token.type == TokenType::kString) &&
           rename_(token.line, token.column, token.text).empty();
  }

  // `get x() {}` / `set x(v) {}`: the accessor keyword before a method name, when it is one.
  bool isAccessorKeyword(size_t index) const {
    if (!is(index, "get") && !is(index, "set")) return false;
    return index == 0 || is(index - 1, "{") || is(index - 1, ",") || is(index - 1, ";") || is(index - 1, "}") ||
           is(index - 1, "static");
  }

  // Entries hold scope ids until run() ends: a pending function is named after its end.
  void add(uint32_t line, uint32_t column, uint32_t scope) {
    if (!map_.entries.empty()) {
      FunctionMapEntry& last = map_.entries.back();
      if (last.line == line && last.column == column) {  // same position: the later one wins
        last.name = scope;
        return;
      }
    }
    map_.entries.push_back({line, column, scope});
  }

  uint32_t newScope(const std::string& name) {
    scope_names_.push_back(name);
    scope_inferred_.push_back(false);
    return static_cast<uint32_t>(scope_names_.size() - 1);
  }

  // V8 starts the names it infers inside a function with that function's own name when the name
  // begins with a capital letter, taking it for a constructor: `this.x = function` in
  // `function Widget` or in `class Widget`'s constructor is "Widget.x"; in `function widget` it is
  // "x" (FuncNameInferrer::PushEnclosingName in V8). The prefix, with its dot, or "".
  std::string constructorPrefix() const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->kind != ScopeKind::kFunction && it->kind != ScopeKind::kArrowExpression) continue;
      const std::string& own = it->own_name ? *it->own_name : it->name;
      return startsWithCapital(own) ? own + "." : std::string();
    }
    return {};
  }

  uint32_t enclosingFunction() const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->kind == ScopeKind::kFunction || it->kind == ScopeKind::kArrowExpression) return it->id;
    }
    return 0;
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
      const Scope arrow = scopes_.back();
      scopes_.pop_back();
      add(tokens_[index].line, tokens_[index].column, enclosingFunction());
      addPending(arrow);
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
        } else if (text == "," && angles == 0) {
          return SIZE_MAX;  // "a ? f(x) : y, {…}": a ',' outside type arguments ends any type
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
    // `export default function () {…}`, `export default class {…}`, `export default () => …`:
    // the binding is named "default", and so is the function.
    if (start >= 2 && is(start - 1, "default") && is(start - 2, "export")) return "default";
    if (start >= 1 && (is(start - 1, "=") || is(start - 1, ":")) && start >= 2) {
      size_t at = start - 2;
      if (tokens_[at].type == TokenType::kString && is(start - 1, ":")) {
        std::string_view quoted = tokens_[at].text;
        return quoted.size() >= 2 ? std::string(quoted.substr(1, quoted.size() - 2)) : "<anonymous>";
      }
      std::string name;
      bool member = false;
      if (is(start - 1, "=") && is(at, "]") && match_[at] != SIZE_MAX && match_[at] + 2 == at &&
          tokens_[at - 1].type == TokenType::kString && match_[at] > 0 && isIdent(match_[at] - 1)) {
        // this["key"] = function …: the key is a property name like any other.
        const std::string_view quoted = tokens_[at - 1].text;
        name = std::string(quoted.substr(1, quoted.size() - 2));
        member = true;
        at = match_[at] - 1;
        if (tokens_[at].text != "this") name = textOf(at) + "." + name;
      } else if (isIdent(at)) {
        name = textOf(at);
      } else {
        return "<anonymous>";
      }
      while (at >= 2 && is(at - 1, ".") && isIdent(at - 2)) {
        at -= 2;
        member = true;
        // V8 leaves "prototype" out of inferred names: A.prototype.m = function … -> "A.m".
        if (tokens_[at].text == "prototype" && at >= 2 && is(at - 1, ".")) continue;
        // An object the minifier wrote where the map records no source ("e.validateInternal=
        // function(…)", terser's export assignment of `function validateInternal`) is no part
        // of the original name.
        if (!(at >= 2 && is(at - 1, ".") && isIdent(at - 2)) && synthesized(at)) break;
        // `this` is no name: this.x = function … is "x", or "Widget.x" in a constructor.
        if (tokens_[at].text == "this" && !(at >= 2 && is(at - 1, "."))) break;
        name = textOf(at) + "." + name;
      }
      // A function assigned to a property has no name of its own; V8 infers one, which begins with
      // the enclosing constructor's name. One assigned to a variable is named by the variable.
      if (member && is(start - 1, "=")) name = constructorPrefix() + name;
      return name;
    }
    return "<anonymous>";
  }

  // The name V8 gives a method whose key is computed, `[` at `open`, `]` at `close`: a string or
  // a template without substitutions is the name itself ("computedName"); a well-known symbol is
  // "[Symbol.iterator]" and a number "2", both printed without the class. Any other expression
  // is known only when the program runs: "<computed>".
  struct ComputedKey {
    std::string name;
    bool unqualified = false;
  };
  ComputedKey computedKey(size_t open, size_t close) const {
    if (close == open + 2) {
      const Token& key = tokens_[open + 1];
      const bool plain_template = key.type == TokenType::kTemplate && key.text.starts_with('`') &&
                                  key.text.ends_with('`') && key.text.find("${") == std::string_view::npos;
      if ((key.type == TokenType::kString || plain_template) && key.text.size() >= 2) {
        return {std::string(key.text.substr(1, key.text.size() - 2)), false};
      }
      if (key.type == TokenType::kNumber) return {std::string(key.text), true};
    }
    if (close == open + 4 && isIdent(open + 1) && tokens_[open + 1].text == "Symbol" && is(open + 2, ".") &&
        isIdent(open + 3)) {
      return {"[Symbol." + std::string(tokens_[open + 3].text) + "]", true};
    }
    return {std::string(kComputedKeyName), false};
  }

  // True when the function whose body starts at `body` is called where it is written.
  bool invokedWhereWritten(size_t body) const {
    if (close_brace_[body] == SIZE_MAX) return false;
    size_t call = close_brace_[body] + 1;
    if (is(call, ")")) ++call;  // (function(){…})(x)
    return is(call, "(");
  }

  // Scanning a minified file: an anonymous function invoked where it is written
  // ("function(n){…}(x)", "(n=>{…})(x)") is what a minifier leaves of a function it inlined at
  // its only call (terser's compress does this in webpack and rollup builds). The map names that
  // call's '(' by the callee the original source called there, the inlined function's own name,
  // which V8 printed for it in the original program. `body` is the function's '{'.
  std::string invokedAs(size_t body) const {
    static const std::string kAnonymous = "<anonymous>";
    if (!rename_ || !invokedWhereWritten(body)) return kAnonymous;
    size_t call = close_brace_[body] + 1;
    if (is(call, ")")) ++call;
    // The renamer gives "(" back when the map names nothing there, "" when the bundler wrote the
    // call (rollup's commonjs plugin calling the wrapper it put around a module).
    std::string name = rename_(tokens_[call].line, tokens_[call].column, "(");
    if (name == "(") return kAnonymous;
    if (name.empty()) return std::string(kModuleCodeName);
    // A member call ("f0.entry0(x)" with f0 a module namespace, as rollup records the callee it
    // rewrote) called the function its last part names.
    if (const size_t dot = name.rfind('.'); dot != std::string::npos) name.erase(0, dot + 1);
    return name.empty() ? kAnonymous : name;
  }

  // ---- V8's name inference for function literals (src/parsing/func-name-inferrer.h in V8) ----
  // V8 names an anonymous function literal by the next assignment, variable declaration or
  // object-literal property whose value ends after it in the same parse, unless a call ends
  // first while it is the last one waiting (a call removes the last pending function). The
  // name is the names stack at that point: variable references and property names of the
  // enclosing expressions, a variable followed by another variable left out. So in
  //   const scenarios = [["a", () => f()], ["b", () => { new C({}).x = 1; }]];
  // the first arrow is named "C.x" (by the assignment inside the second one's body) and the
  // second "scenarios". Arrow bodies are parsed with the code around them; other functions are
  // compiled lazily, each in a parse of its own (a context here).

  // True when a line break after token `at` ends a statement (automatic semicolon insertion).
  bool statementBreak(size_t at) const {
    if (at + 1 >= tokens_.size() || tokens_[at + 1].line == tokens_[at].line) return false;
    const Token& next = tokens_[at + 1];
    if (next.type != TokenType::kIdent || next.text == "in" || next.text == "of" || next.text == "instanceof") {
      return false;
    }
    const Token& last = tokens_[at];
    if (last.type == TokenType::kPunct) return last.text == ")" || last.text == "]" || last.text == "}";
    return last.type != TokenType::kIdent || !isKeywordBeforeExpression(last.text);
  }

  void addPending(const Scope& scope) {
    if (!scope.literal) return;
    contexts_.back().pending.push_back({scope.id, scope.name == "<anonymous>"});
  }

  void removeLastPending() {
    if (!contexts_.back().pending.empty()) contexts_.back().pending.pop_back();
  }

  void infer(const std::string& name) {
    for (const Pending& pending : contexts_.back().pending) {
      if (pending.inferable && !name.empty()) {
        scope_names_[pending.id] = name;
        scope_inferred_[pending.id] = true;
      }
    }
    contexts_.back().pending.clear();
  }

  // `)` at `close` ends a call (not `new X(…)`, a parameter list, or a statement's condition).
  bool isCallEnd(size_t close) const {
    if (!is(close, ")")) return false;
    const size_t open = match_[close];
    if (open == SIZE_MAX || open == 0) return false;
    if (is(close + 1, "{") || is(close + 1, "=>")) return false;
    const size_t callee = open - 1;
    const Token& token = tokens_[callee];
    if (token.type == TokenType::kTemplate) return true;
    if (is(callee, "}")) {  // function () {…}(x)
      const size_t body = open_brace_[callee];
      return body != SIZE_MAX && brace_kind_[body] != BraceKind::kBlock && brace_kind_[body] != BraceKind::kObject &&
             brace_kind_[body] != BraceKind::kClass;
    }
    if (token.type == TokenType::kPunct) return is(callee, ")") || is(callee, "]");
    if (token.type != TokenType::kIdent) return false;
    if (token.text != "super" && token.text != "import" &&
        (isStatementKeyword(token.text) || isExpressionKeyword(token.text) || isControlKeyword(token.text))) {
      return false;
    }
    size_t first = callee;
    while (first >= 2 && (is(first - 1, ".") || is(first - 1, "?.")) && isIdent(first - 2)) first -= 2;
    if (first > 0 && (is(first - 1, "function") || is(first - 1, "*") || is(first - 1, "new"))) return false;
    return true;
  }

  // True when tokens [begin, end) are one call: `f(x)`, `a.b(c).d(e)`, `new X(y)`, `new a.X`,
  // `(function(){})()`.
  bool isCall(size_t begin, size_t end) const {
    if (end <= begin) return false;
    if (is(begin, "new") && isIdent(end - 1)) {  // new X, new a.X: arguments left out
      size_t first = end - 1;
      while (first >= 2 && is(first - 1, ".") && isIdent(first - 2)) first -= 2;
      return first == begin + 1;
    }
    if (!is(end - 1, ")") || (!isCallEnd(end - 1) && !isNewCall(end - 1))) return false;
    for (size_t at = end - 1;;) {
      const Token& token = tokens_[at];
      if (is(at, ")") || is(at, "]")) {
        if (match_[at] == SIZE_MAX) return false;
        at = match_[at];
      } else if (is(at, "}")) {
        if (open_brace_[at] == SIZE_MAX) return false;
        at = open_brace_[at];
      } else if (token.type == TokenType::kIdent) {
        if (token.text == "await" || token.text == "typeof" || token.text == "void" || token.text == "delete" ||
            token.text == "yield") {
          return false;
        }
      } else if (token.type == TokenType::kPunct && !is(at, ".") && !is(at, "?.")) {
        return false;
      }
      if (at <= begin) return at == begin;
      --at;
    }
  }
  bool isNewCall(size_t close) const {
    const size_t open = match_[close];
    if (open == SIZE_MAX || open == 0 || !isIdent(open - 1)) return false;
    size_t first = open - 1;
    while (first >= 2 && (is(first - 1, ".") || is(first - 1, "?.")) && isIdent(first - 2)) first -= 2;
    return first > 0 && is(first - 1, "new");
  }

  void openAssignment(size_t eq) {
    bool compound = false;
    if (eq > 0 && tokens_[eq - 1].type == TokenType::kPunct && tokens_[eq - 1].line == tokens_[eq].line &&
        tokens_[eq - 1].column + 1 == tokens_[eq].column) {
      const char op = tokens_[eq - 1].text.back();
      if (op == '<' || op == '>') return;  // a comparison
      compound = std::string_view("+-*/%&|^?").find(op) != std::string_view::npos;
    }
    assignments_.push_back({eq, depth_, compound});
  }

  // Ends the assignments whose value ends at token `end` (exclusive).
  void endAssignments(size_t end) {
    while (!assignments_.empty() && assignments_.back().depth >= depth_) {
      const Assignment assignment = assignments_.back();
      assignments_.pop_back();
      if (assignment.compound || isCall(assignment.eq + 1, end)) {
        removeLastPending();
      } else {
        std::vector<InferredPart> parts;
        collectNames(assignment.eq, parts);
        infer(joinNames(parts));
      }
    }
  }

  // An object-literal property of the object at `brace` ends at `end` ('}' or ',').
  void endProperty(size_t brace, size_t end) {
    size_t start = end;
    while (start > brace + 1 && !(is(start - 1, ",") && parent_[start - 1] == brace)) --start;
    size_t key = start;
    if ((is(key, "get") || is(key, "set") || is(key, "async") || is(key, "*")) && key + 1 < end && !is(key + 1, ":") &&
        !is(key + 1, "(") && !is(key + 1, ",")) {
      ++key;
    }
    if (is(key, "*")) ++key;
    if (key < end && synthesized(key)) {
      // A key the bundler wrote (webpack's module table `{564: (module) => {…}}`): the function
      // holds a module's top-level code, which the original run shows as such ("<global>").
      for (const Pending& pending : contexts_.back().pending) {
        if (pending.inferable) scope_names_[pending.id] = std::string(kModuleCodeName);
      }
      contexts_.back().pending.clear();
      return;
    }
    std::vector<InferredPart> parts;
    collectNames(start, parts);
    if (key < end && (tokens_[key].type == TokenType::kIdent || tokens_[key].type == TokenType::kString ||
                      tokens_[key].type == TokenType::kNumber)) {
      std::string name = tokens_[key].type == TokenType::kString
                             ? std::string(tokens_[key].text.substr(1, tokens_[key].text.size() - 2))
                             : textOf(key);
      parts.push_back({std::move(name), false});
    }
    infer(joinNames(parts));
  }

  // V8's MakeNameFromStack: the parts joined by '.', a variable followed by a variable left out.
  static std::string joinNames(const std::vector<InferredPart>& parts) {
    std::string name;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i + 1 < parts.size() && parts[i].variable && parts[i + 1].variable) continue;
      if (!name.empty()) name += '.';
      name += parts[i].name;
    }
    return name;
  }

  // V8's names stack before token `from` (exclusive), in source order: the names the enclosing
  // expressions pushed, up to the start of the current parse context. Inner expressions that
  // ended (call arguments, other elements, earlier statements) left nothing on it.
  void collectNames(size_t from, std::vector<InferredPart>& out) const {
    const size_t boundary = contexts_.back().boundary;
    std::vector<InferredPart> reversed;
    bool collect = true;
    size_t at = from;
    while (at > 0 && reversed.size() < 64) {
      const size_t next = at;  // the token after the one looked at
      --at;
      if (at == boundary) break;
      if (collect && statementBreak(at) && next < from + 1) collect = false;
      const Token& token = tokens_[at];
      if (is(at, ")") || is(at, "]")) {
        if (match_[at] == SIZE_MAX) break;
        if (collect && rename_) {  // only a bundler writes it; a source that does is named as written
          const size_t callee = indirectCallee(match_[at], at);
          if (callee != SIZE_MAX) reversed.push_back({textOf(callee), true});
        }
        at = match_[at];
        continue;
      }
      if (is(at, "}")) {
        if (open_brace_[at] == SIZE_MAX) break;
        at = open_brace_[at];
        continue;
      }
      if (is(at, "(") || is(at, "[")) {
        collect = true;
        continue;
      }
      if (is(at, "{")) {
        const BraceKind kind = brace_kind_[at];
        if (kind == BraceKind::kFunctionBody) break;
        if (kind == BraceKind::kArrowBody || kind == BraceKind::kEagerFunctionBody) {
          if (arrow_start_[at] == SIZE_MAX) break;
          at = arrow_start_[at];
          collect = true;
        } else {
          collect = kind == BraceKind::kObject;
        }
        continue;
      }
      if (!collect) {
        // Only the enclosing bracket can push names again: jump to it.
        if (parent_[at] == SIZE_MAX) break;
        at = parent_[at] + 1;
        continue;
      }
      if (token.type == TokenType::kPunct) {
        if (token.text == "," || token.text == ";") {
          collect = false;
        } else if (token.text == "=>") {
          at = arrowStart(at);
        } else if (token.text == ":" && at >= 2 &&
                   (isIdent(at - 1) || tokens_[at - 1].type == TokenType::kString ||
                    tokens_[at - 1].type == TokenType::kNumber)) {
          const size_t object = is(at - 2, "{") ? at - 2 : is(at - 2, ",") ? parent_[at - 2] : SIZE_MAX;
          if (object != SIZE_MAX && is(object, "{") && brace_kind_[object] == BraceKind::kObject) {
            // Names end where the bundler's own code begins (webpack's `{564: (module) => {…}}`).
            if (synthesized(at - 1)) break;
            const Token& key = tokens_[at - 1];
            reversed.push_back(
                {key.type == TokenType::kString ? std::string(key.text.substr(1, key.text.size() - 2)) : textOf(at - 1),
                 false});
            collect = false;
            at -= 1;
          }
        }
        continue;
      }
      if (token.type != TokenType::kIdent) continue;
      if (isStatementKeyword(token.text)) {
        collect = false;
      } else if (!isExpressionKeyword(token.text) && token.text != "prototype") {
        if (synthesized(at)) break;  // the bundler's own code: no part of the original's names
        const bool property = at > 0 && (is(at - 1, ".") || is(at - 1, "?."));
        reversed.push_back({textOf(at), !property});
      }
    }
    out.assign(reversed.rbegin(), reversed.rend());
  }

  // Bundlers call an imported function `fn` as `(0, ns.fn)(…)` (esbuild, webpack) so that it
  // gets no `this`; the original source called `fn(…)`, a variable V8 puts on its names stack.
  // For the group `open`…`close` of such a call, the token index of `fn`; SIZE_MAX otherwise.
  size_t indirectCallee(size_t open, size_t close) const {
    if (!is(open, "(") || !is(close + 1, "(") || close < open + 4) return SIZE_MAX;
    if (tokens_[open + 1].type != TokenType::kNumber || tokens_[open + 1].text != "0" || !is(open + 2, ",")) {
      return SIZE_MAX;
    }
    for (size_t at = open + 3; at < close; at += 2) {
      if (!isIdent(at) || (at + 1 < close && !is(at + 1, "."))) return SIZE_MAX;
    }
    return (close - open - 3) % 2 == 1 ? close - 1 : SIZE_MAX;
  }

  // A '(' that groups an expression, not one that opens call arguments or a statement's head.
  bool isGroupingParen(size_t paren) const {
    if (paren == 0) return true;
    const Token& previous = tokens_[paren - 1];
    if (previous.type == TokenType::kIdent) return isKeywordBeforeExpression(previous.text);
    return !is(paren - 1, ")") && !is(paren - 1, "]") && previous.type != TokenType::kTemplate;
  }

  // An expression '{' (object literal) rather than a block, from the token before it.
  bool looksLikeObjectLiteral(size_t brace) const {
    if (brace == 0) return false;
    const size_t previous = brace - 1;
    const Token& token = tokens_[previous];
    if (token.type == TokenType::kIdent) {
      return isKeywordBeforeExpression(token.text) && token.text != "do" && token.text != "else";
    }
    if (token.type != TokenType::kPunct) return false;
    const std::string_view text = token.text;
    if (text == ")" || text == ";" || text == "{" || text == "}" || text == "]") return false;
    if (text == ":") {
      // A label ("outer: {") or a case ("case 1: {") opens a block.
      const size_t owner = parent_[brace];
      const bool in_expression =
          owner != SIZE_MAX && (is(owner, "(") || is(owner, "[") || brace_kind_[owner] == BraceKind::kObject);
      if (in_expression) return true;
      if (previous >= 1 && (isIdent(previous - 1) || tokens_[previous - 1].type == TokenType::kNumber ||
                            tokens_[previous - 1].type == TokenType::kString)) {
        const size_t before = previous - 1;
        if (before == 0) return false;
        if (is(before - 1, ";") || is(before - 1, "{") || is(before - 1, "}") || is(before - 1, "case")) return false;
        return !is(before, "default");
      }
      return true;
    }
    return true;
  }

  void openBrace(size_t index) {
    Scope scope{ScopeKind::kBlock, {}, depth_};
    size_t start = index;
    bool arrow = false;
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
          // `x = function () {…}(y)`: x holds the call's result; V8 leaves the function unnamed.
          scope.name = invokedWhereWritten(index) ? invokedAs(index) : nameBefore(start);
          scope.literal = true;
        } else if (before != SIZE_MAX && isIdent(before) && before > 0 &&
                   (is(before - 1, "function") || (is(before - 1, "*") && before > 1 && is(before - 2, "function")))) {
          scope.kind = ScopeKind::kFunction;
          // A declaration the bundler wrote around a module (rollup's commonjs "function
          // requireMain () {…}") holds that module's top-level code, as the original run shows
          // it ("<global>").
          scope.name = synthesized(before) ? std::string(kModuleCodeName) : textOf(before);
          start = is(before - 1, "*") ? before - 2 : before - 1;
          if (start > 0 && is(start - 1, "async")) --start;
        } else if (before != SIZE_MAX && (isIdent(before) || is(before, "]")) &&
                   !isControlKeyword(tokens_[before].text)) {
          // A method definition: name(…) {, get name(…) {, [computed](…) {.
          scope.kind = ScopeKind::kFunction;
          start = before;
          if (is(before, "]") && match_[before] != SIZE_MAX) start = match_[before];
          const ComputedKey key = isIdent(before) ? ComputedKey{textOf(before), false} : computedKey(start, before);
          const std::string& method = key.name;
          const Scope* owner = enclosingBrace();
          if (start > 0 && isAccessorKeyword(start - 1)) {
            // V8 names accessors "get x" / "set x", in classes and object literals alike.
            scope.name = std::string(tokens_[start - 1].text) + " " + method;
            --start;
          } else if (owner != nullptr && owner->kind == ScopeKind::kClass) {
            // V8 prints a private method ("#check") and a symbol-keyed one ("[Symbol.iterator]")
            // without the receiver's class.
            const bool bare = key.unqualified || method.starts_with('#');
            scope.name = method == "constructor" ? owner->name : bare ? method : owner->name + "." + method;
            if (method != "constructor" && scope.name != method) scope.own_name = method;
          } else {
            scope.name = method;
          }
        }
      } else if (is(previous, "=>")) {
        scope.kind = ScopeKind::kFunction;
        start = arrowStart(previous);
        scope.name = invokedWhereWritten(index) ? invokedAs(index) : nameBefore(start);
        scope.literal = true;
        arrow = true;
      } else {
        // class Name {, class Name extends a.b.C {, class {, class extends X {
        // TypeScript: class Name<T> implements A, B.C<T> {  class Name extends X implements Y {
        size_t at = previous;
        for (size_t steps = 0;
             at > 0 && steps < 64 && !is(at, "class") && !is(at, "implements") && !is(at, "extends") &&
             (isIdent(at) || is(at, ".") || is(at, ",") || is(at, "<") || is(at, ">"));
             ++steps) {
          --at;
        }
        if (is(at, "implements")) {
          // What precedes the heritage clause: "class Name", "class Name<T>", "class Name extends X".
          size_t head = at - 1;
          while (head > 0 && (isIdent(head) || is(head, ".") || is(head, ",") || is(head, "<") || is(head, ">")) &&
                 !is(head, "class")) {
            --head;
          }
          if (is(head, "class")) {
            scope.kind = ScopeKind::kClass;
            scope.name = isIdent(head + 1) && !is(head + 1, "extends") && !is(head + 1, "implements")
                             ? textOf(head + 1)
                             : nameBefore(head);
          }
        } else if (is(at, "extends")) {
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
    if (scope.kind == ScopeKind::kFunction) {
      scope.id = newScope(scope.name);
      arrow_start_[index] = start;
      // V8 compiles a function lazily, in a parse of its own, unless it is an arrow (parsed with
      // the code around it) or parenthesized ("(function () {…})", compiled at once).
      const bool eager = arrow || (start > 0 && is(start - 1, "(") && isGroupingParen(start - 1));
      brace_kind_[index] = arrow   ? BraceKind::kArrowBody
                           : eager ? BraceKind::kEagerFunctionBody
                                   : BraceKind::kFunctionBody;
      if (!eager) {
        scope.own_context = true;
        contexts_.push_back({index, {}});
      }
    } else if (scope.kind == ScopeKind::kClass) {
      brace_kind_[index] = BraceKind::kClass;
    } else if (looksLikeObjectLiteral(index)) {
      brace_kind_[index] = BraceKind::kObject;
    }
    scopes_.push_back(scope);
    if (scope.kind == ScopeKind::kFunction) {
      add(tokens_[start].line, tokens_[start].column, scope.id);
      // Again at the body: functions in default parameter values ended in between, naming the
      // code after them by the scope that was open before this function was known.
      add(tokens_[index].line, tokens_[index].column, scope.id);
    }
  }

  void closeBrace(size_t index) {
    // Drop arrow bodies that a malformed input left open inside this brace.
    while (!scopes_.empty() && scopes_.back().kind == ScopeKind::kArrowExpression) scopes_.pop_back();
    if (scopes_.empty()) return;
    const Scope closed = scopes_.back();
    scopes_.pop_back();
    if (closed.kind == ScopeKind::kFunction) {
      const Token& brace = tokens_[index];
      add(brace.line, brace.column + 1, enclosingFunction());
      // Functions still pending in a lazily compiled function's own parse keep no name.
      if (closed.own_context && contexts_.size() > 1) contexts_.pop_back();
      addPending(closed);
    }
  }

  std::vector<Token> tokens_;
  const TokenRenamer& rename_;
  std::vector<size_t> match_;        // for ')' and ']': index of the matching opener
  std::vector<size_t> close_brace_;  // for '{': index of the matching '}'
  std::vector<size_t> open_brace_;   // for '}': index of the matching '{'
  std::vector<size_t> parent_;       // innermost '(' '[' '{' open around each token
  std::vector<BraceKind> brace_kind_;
  std::vector<size_t> arrow_start_;  // for an arrow body's '{': the arrow's first token
  std::vector<Scope> scopes_;
  std::vector<std::string> scope_names_;  // by scope id; 0 is "<global>"
  // By scope id: the name is V8's inference for an anonymous literal (FunctionMap::inferred).
  std::vector<bool> scope_inferred_;
  std::vector<Context> contexts_;
  std::vector<Assignment> assignments_;
  size_t depth_ = 0;
  FunctionMap map_;
  // (name, inferred) -> index into map_.names: a declared name and the same inferred name differ.
  std::map<std::pair<std::string, bool>, uint32_t> name_index_;
};

}  // namespace

FunctionMap inferFunctionMap(std::string_view source, const TokenRenamer& rename) {
  return FunctionMapBuilder(Tokenizer(source).run(), rename).run();
}

}  // namespace restack::sourcemap

#include "formats/proguard/mapping_reader.h"

#include <algorithm>
#include <unordered_map>

#include "formats/proguard/lenient_json.h"

namespace restack::proguard {
namespace {

// Version that introduced each metadata id (major * 1000 + minor).
constexpr uint32_t kVersionSynthesized = 1000;
constexpr uint32_t kVersionRewriteFrame = 2000;
constexpr uint32_t kVersionOutline = 2000;
constexpr uint32_t kVersionOutlineCallsite = 2000;
constexpr uint32_t kVersionResidualSignature = 2002;

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Parses a decimal line number that fits in 32 bits.
std::optional<uint32_t> parseLine(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (!isDigit(c)) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(value);
}

std::string removeSpaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (!isSpace(c)) out.push_back(c);
  }
  return out;
}

bool hasSpace(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return isSpace(c); });
}

std::string shorten(std::string_view line) {
  constexpr size_t kMax = 120;
  if (line.size() <= kMax) return std::string(line);
  return std::string(line.substr(0, kMax)) + "…";
}

bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f');
}

// The position of the '$' of a ProGuard descriptor-hash suffix at the end of `name`, or npos.
size_t specializedSuffixAt(std::string_view name) {
  size_t dollar = name.rfind('$');
  if (dollar == std::string_view::npos || dollar == 0) return std::string_view::npos;
  std::string_view suffix = name.substr(dollar + 1);
  const bool min_value = suffix == "ffffffff80000000";  // Math.abs(Integer.MIN_VALUE) as a long
  if (!min_value && (suffix.size() < 5 || suffix.size() > 8 || suffix.front() == '0')) return std::string_view::npos;
  if (!std::all_of(suffix.begin(), suffix.end(), isHexDigit)) return std::string_view::npos;
  std::string_view base = name.substr(0, dollar);
  if (base == "access" || base.starts_with("access$")) return std::string_view::npos;
  if (base.starts_with("lambda$")) {
    // javac's "lambda$<method>$<n>": only a suffix after the counter is ProGuard's.
    size_t counter = base.rfind('$');
    std::string_view digits = base.substr(counter + 1);
    if (counter <= 6 || digits.empty() || !std::all_of(digits.begin(), digits.end(), isDigit)) {
      return std::string_view::npos;
    }
  }
  return dollar;
}

}  // namespace

std::string_view restoreSpecializedName(std::string_view name) {
  // A method specialized and later shrunk again carries one suffix per change.
  for (size_t at = specializedSuffixAt(name); at != std::string_view::npos; at = specializedSuffixAt(name)) {
    name = name.substr(0, at);
  }
  return name;
}

bool isDesugaredLambdaClass(std::string_view original_name, std::string_view source_file) {
  if (source_file == "D8$$SyntheticClass" || source_file == "R8$$SyntheticClass") return true;
  std::string_view simple = original_name.substr(original_name.rfind('.') + 1);  // npos + 1 = 0
  return simple.find("$$ExternalSyntheticLambda") != std::string_view::npos || simple.starts_with("-$$Lambda$") ||
         simple.find("$$Lambda$") != std::string_view::npos;
}

bool isDesugaredLambdaForwarder(std::string_view method_name) {
  return method_name.starts_with("$r8$lambda$");
}

uint32_t parseMapVersion(std::string_view text) {
  size_t dot = text.find('.');
  auto major = parseLine(text.substr(0, dot));
  std::optional<uint32_t> minor = 0u;
  if (dot != std::string_view::npos) minor = parseLine(text.substr(dot + 1));
  if (!major || !minor || *major > 1000000 || *minor > 999) return UINT32_MAX;
  return *major * 1000 + *minor;
}

MappingReader::MappingReader(std::string_view text, MappingReaderOptions options) : text_(text), options_(options) {
  // A UTF-8 byte order mark is not part of the first class name.
  if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
}

bool MappingReader::readLine(std::string_view& line, size_t& line_start) {
  if (pos_ >= text_.size()) return false;
  line_start = pos_;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = end < text_.size() ? end + 1 : end;
  ++line_number_;
  return true;
}

Error MappingReader::lineError(const std::string& what, std::string_view line) const {
  return malformed("mapping line " + std::to_string(line_number_) + ": " + what + " (got '" + shorten(line) + "')");
}

void MappingReader::warn(std::string message) {
  ++warning_count_;
  if (warnings_.size() < options_.max_warning_messages) warnings_.push_back(std::move(message));
}

void MappingReader::warnOnce(const std::string& key, std::string message) {
  if (std::find(warned_keys_.begin(), warned_keys_.end(), key) != warned_keys_.end()) return;
  warned_keys_.push_back(key);
  warn(std::move(message));
}

Status MappingReader::readPreamble() {
  if (preamble_done_) return Status::ok();
  std::string_view line;
  size_t line_start = 0;
  while (readLine(line, line_start)) {
    if (line.size() > options_.max_line_bytes) return lineError("line too long", line.substr(0, 64));
    std::string_view trimmed = trim(line);
    if (trimmed.empty()) continue;
    if (trimmed.front() == '#') {
      parseComment(trimmed.substr(1), nullptr);
      continue;
    }
    // The first class line: leave it for next().
    pos_ = line_start;
    --line_number_;
    break;
  }
  preamble_done_ = true;
  return Status::ok();
}

Expected<bool> MappingReader::next(ClassMapping& out) {
  RESTACK_RETURN_IF_ERROR(readPreamble());
  out = ClassMapping();
  bool in_class = false;
  std::string_view line;
  size_t line_start = 0;
  while (readLine(line, line_start)) {
    if (line.size() > options_.max_line_bytes) return lineError("line too long", line.substr(0, 64));
    std::string_view trimmed = trim(line);
    if (trimmed.empty()) continue;
    if (trimmed.front() == '#') {
      parseComment(trimmed.substr(1), in_class ? &out : nullptr);
      continue;
    }
    const bool indented = isSpace(line.front());
    if (!indented) {
      if (in_class) {  // the next class starts: hand this one out first
        pos_ = line_start;
        --line_number_;
        finishClass(out);
        return true;
      }
      RESTACK_RETURN_IF_ERROR(parseClassLine(trimmed, out));
      in_class = true;
      continue;
    }
    if (!in_class) return lineError("member line before any class line", line);
    RESTACK_RETURN_IF_ERROR(parseMemberLine(trimmed, out));
  }
  if (!in_class) return false;
  finishClass(out);
  return true;
}

Status MappingReader::parseClassLine(std::string_view line, ClassMapping& out) {
  size_t arrow = line.find(" -> ");
  if (arrow == std::string_view::npos || line.back() != ':') {
    return lineError("expected a class line 'original.Name -> obfuscated.Name:'", line);
  }
  std::string_view original = trim(line.substr(0, arrow));
  std::string_view obfuscated = trim(line.substr(arrow + 4, line.size() - arrow - 5));
  if (original.empty() || obfuscated.empty() || hasSpace(original) || hasSpace(obfuscated)) {
    return lineError("expected a class line 'original.Name -> obfuscated.Name:'", line);
  }
  out.original_name = std::string(original);
  out.obfuscated_name = std::string(obfuscated);
  out.line_number = line_number_;
  target_ = Target::kClass;
  return Status::ok();
}

Status MappingReader::parseMemberLine(std::string_view line, ClassMapping& out) {
  size_t arrow = line.rfind(" -> ");
  if (arrow == std::string_view::npos) return lineError("expected 'member -> obfuscatedName'", line);
  std::string_view obfuscated = trim(line.substr(arrow + 4));
  std::string_view left = trim(line.substr(0, arrow));
  if (obfuscated.empty() || hasSpace(obfuscated) || left.empty()) {
    return lineError("expected 'member -> obfuscatedName'", line);
  }
  std::optional<LineRange> minified;
  if (isDigit(left.front())) {  // "a:b:" minified range
    size_t first = left.find(':');
    size_t second = first == std::string_view::npos ? first : left.find(':', first + 1);
    if (second == std::string_view::npos) return lineError("expected 'start:end:' before the method", line);
    auto from = parseLine(left.substr(0, first));
    auto to = parseLine(left.substr(first + 1, second - first - 1));
    if (!from || !to || *to < *from) return lineError("bad minified line range", line);
    minified = LineRange{*from, *to};
    left = trim(left.substr(second + 1));
  }
  size_t space = left.find(' ');
  if (space == std::string_view::npos) return lineError("expected 'type name' before ' -> '", line);
  std::string_view type = left.substr(0, space);
  std::string_view rest = trim(left.substr(space + 1));
  size_t open = rest.find('(');
  if (open == std::string_view::npos) {  // field
    if (minified || rest.empty() || hasSpace(rest)) return lineError("malformed field line", line);
    FieldMapping field;
    field.type = std::string(type);
    field.name = std::string(rest);
    field.obfuscated_name = std::string(obfuscated);
    out.fields.push_back(std::move(field));
    target_ = Target::kField;
    return Status::ok();
  }
  size_t close = rest.find(')', open);
  if (close == std::string_view::npos || open == 0) return lineError("malformed method signature", line);
  MethodMapping method;
  method.obfuscated_name = std::string(obfuscated);
  method.minified = minified;
  method.signature.return_type = std::string(type);
  std::string_view qualified = rest.substr(0, open);
  if (hasSpace(qualified)) return lineError("malformed method name", line);
  size_t dot = qualified.rfind('.');
  if (dot != std::string_view::npos) {
    if (dot == 0 || dot + 1 == qualified.size()) return lineError("malformed qualified method name", line);
    method.signature.holder = std::string(qualified.substr(0, dot));
    method.signature.name = std::string(qualified.substr(dot + 1));
  } else {
    method.signature.name = std::string(qualified);
  }
  if (options_.restore_specialized_names && !writtenByR8()) {
    std::string_view restored = restoreSpecializedName(method.signature.name);
    if (restored.size() != method.signature.name.size()) method.signature.name.resize(restored.size());
  }
  method.signature.params = removeSpaces(rest.substr(open + 1, close - open - 1));
  std::string_view after = trim(rest.substr(close + 1));
  if (!after.empty()) {  // ":c" or ":c:d"
    if (after.front() != ':') return lineError("unexpected text after the method signature", line);
    after.remove_prefix(1);
    size_t colon = after.find(':');
    auto from = parseLine(after.substr(0, colon));
    std::optional<uint32_t> to = from;
    if (colon != std::string_view::npos) to = parseLine(after.substr(colon + 1));
    if (!from || !to || *to < *from) return lineError("bad original line range", line);
    method.original = LineRange{*from, *to};
  }
  out.methods.push_back(std::move(method));
  target_ = Target::kMethod;
  return Status::ok();
}

void MappingReader::parseComment(std::string_view comment, ClassMapping* current) {
  comment = trim(comment);
  if (comment.empty()) return;
  if (comment.front() == '{') {
    auto json = parseLenientJson(comment);
    if (json && json->kind == JsonValue::Kind::kObject) applyMetadata(*json, current);
    return;  // anything else in braces is an ordinary comment
  }
  // Header: "# key: value".
  size_t colon = comment.find(':');
  if (colon == std::string_view::npos) return;
  std::string_view key = trim(comment.substr(0, colon));
  std::string value(trim(comment.substr(colon + 1)));
  if (key == "compiler" || key == "compiler_version") {
    (key == "compiler" ? header_.compiler : header_.compiler_version) = value;
    records_every_source_file_ = recordsEverySourceFile(header_);
  } else if (key == "min_api")
    header_.min_api = value;
  else if (key == "pg_map_id")
    header_.pg_map_id = value;
  else if (key == "pg_map_hash")
    header_.pg_map_hash = value;
}

void MappingReader::applyMetadata(const JsonValue& json, ClassMapping* current) {
  auto id = json.stringMember("id");
  if (!id) return;
  if (id->starts_with("com.android.tools.r8.")) r8_metadata_seen_ = true;
  const std::string where = " (mapping line " + std::to_string(line_number_) + ")";
  if (*id == "com.android.tools.r8.mapping") {
    std::string version = json.stringMember("version").value_or("");
    map_version_ = parseMapVersion(version);
    header_.map_version = version;
    if (map_version_ > kSupportedMapVersion) {
      warnOnce("version:" + version,
               "map version '" + version + "' is newer than the supported 2.2; newer information is ignored" + where);
    }
    return;
  }
  if (*id == "sourceFile") {  // unversioned: predates the versioning scheme
    if (current != nullptr && target_ == Target::kClass) {
      current->source_file = json.stringMember("fileName").value_or("");
    }
    return;
  }
  auto gated = [&](uint32_t version) {
    if (versionAtLeast(version)) return true;
    warnOnce("gated:" + *id, "metadata '" + *id + "' ignored: the map version in force ('" + header_.map_version +
                                 "') predates it" + where);
    return false;
  };
  MethodMapping* method = current != nullptr && target_ == Target::kMethod && !current->methods.empty()
                              ? &current->methods.back()
                              : nullptr;
  FieldMapping* field =
      current != nullptr && target_ == Target::kField && !current->fields.empty() ? &current->fields.back() : nullptr;
  if (*id == "com.android.tools.r8.synthesized") {
    if (!gated(kVersionSynthesized)) return;
    if (method != nullptr)
      method->synthesized = true;
    else if (field != nullptr)
      field->synthesized = true;
    else if (current != nullptr && target_ == Target::kClass)
      current->synthesized = true;
    return;
  }
  if (*id == "com.android.tools.r8.outline") {
    if (gated(kVersionOutline) && method != nullptr) method->outline = true;
    return;
  }
  if (*id == "com.android.tools.r8.outlineCallsite") {
    if (!gated(kVersionOutlineCallsite) || method == nullptr) return;
    OutlineCallsite callsite;
    if (const JsonValue* positions = json.find("positions");
        positions != nullptr && positions->kind == JsonValue::Kind::kObject) {
      for (size_t i = 0; i < positions->member_names.size(); ++i) {
        const std::string& key = positions->member_names[i];
        const JsonValue& value = positions->member_values[i];
        auto from = parseLine(key);
        std::optional<uint32_t> to;
        if (value.kind == JsonValue::Kind::kNumber || value.kind == JsonValue::Kind::kString) {
          to = parseLine(value.text);
        }
        if (!from || !to) {
          warn("outlineCallsite position '" + key + "' is not a line number" + where);
          continue;
        }
        callsite.positions.emplace_back(*from, *to);
      }
    }
    std::sort(callsite.positions.begin(), callsite.positions.end());
    if (versionAtLeast(2002)) callsite.outline = json.stringMember("outline").value_or("");
    method->outline_callsite = std::move(callsite);
    return;
  }
  if (*id == "com.android.tools.r8.rewriteFrame") {
    if (!gated(kVersionRewriteFrame) || method == nullptr) return;
    RewriteRule rule;
    bool valid = true;
    if (const JsonValue* conditions = json.find("conditions");
        conditions != nullptr && conditions->kind == JsonValue::Kind::kArray) {
      for (const JsonValue& condition : conditions->items) {
        std::string_view text = condition.text;
        if (condition.kind == JsonValue::Kind::kString && text.starts_with("throws(") && text.ends_with(")")) {
          rule.throws_descriptors.emplace_back(text.substr(7, text.size() - 8));
        } else {
          valid = false;
        }
      }
    }
    if (const JsonValue* actions = json.find("actions");
        actions != nullptr && actions->kind == JsonValue::Kind::kArray) {
      for (const JsonValue& action : actions->items) {
        std::string_view text = action.text;
        std::optional<uint32_t> count;
        if (action.kind == JsonValue::Kind::kString && text.starts_with("removeInnerFrames(") && text.ends_with(")")) {
          count = parseLine(text.substr(18, text.size() - 19));
        }
        if (count)
          rule.remove_inner_frames += *count;
        else
          valid = false;
      }
    }
    if (!valid) {
      warn("rewriteFrame with an unknown condition or action ignored" + where);
      return;
    }
    method->rewrite_rules.push_back(std::move(rule));
    return;
  }
  if (*id == "com.android.tools.r8.residualsignature") {
    if (!gated(kVersionResidualSignature)) return;
    std::string signature = json.stringMember("signature").value_or("");
    if (method != nullptr)
      method->residual_signature = std::move(signature);
    else if (field != nullptr)
      field->residual_signature = std::move(signature);
    return;
  }
  warnOnce("unknown:" + *id, "unknown metadata id '" + *id + "' ignored" + where);
}

bool isKotlinLineMapFrame(const MethodMapping& innermost, const MethodMapping& caller) {
  if (!innermost.signature.holder.empty() || !innermost.original || !caller.original) return false;
  const uint32_t line = innermost.original->from;
  if (line == 0 || innermost.original->to != line || caller.original->from != line) return false;
  // A bridge calling its method, a Kotlin default-arguments stub calling its function
  // (`copy$default` -> `copy`) or an accessor: real calls that sit on one line by construction.
  const std::string& name = innermost.signature.name;
  const std::string& caller_name = caller.signature.name;
  if (caller_name == name || caller_name.starts_with("access$")) return false;
  if (caller_name.size() == name.size() + 8 && caller_name.starts_with(name) && caller_name.ends_with("$default"))
    return false;
  return !innermost.synthesized && !innermost.outline && innermost.rewrite_rules.empty() && !innermost.outline_callsite;
}

namespace {

// Removes isKotlinLineMapFrame's frames from the inline chains of one class's methods (a chain:
// consecutive lines of one obfuscated name and one minified range, each after the first with an
// original line).
void dropKotlinLineMapFrames(std::vector<MethodMapping>& methods) {
  auto continues = [&](size_t i) {
    return i > 0 && methods[i].minified && methods[i - 1].minified &&
           methods[i - 1].obfuscated_name == methods[i].obfuscated_name &&
           *methods[i - 1].minified == *methods[i].minified && methods[i].original;
  };
  std::vector<bool> dropped(methods.size(), false);
  bool any = false;
  for (size_t i = 0; i + 1 < methods.size(); ++i) {
    if (continues(i) || !continues(i + 1) || !isKotlinLineMapFrame(methods[i], methods[i + 1])) continue;
    // A rewriteFrame rule anywhere in the chain counts frames from its top, the added one
    // included as far as the mapping tells: such a chain is left as R8 wrote it.
    bool rewritten = false;
    for (size_t j = i + 1; j < methods.size() && continues(j); ++j) rewritten |= !methods[j].rewrite_rules.empty();
    dropped[i] = !rewritten;
    any |= !rewritten;
  }
  if (!any) return;
  // std::remove_if's compaction: an entry moves only onto a dropped one's place, never onto
  // itself (a self-move leaves a std::string empty, and with it the method's names).
  size_t kept = 0;
  for (size_t i = 0; i < methods.size(); ++i) {
    if (dropped[i]) continue;
    if (kept != i) methods[kept] = std::move(methods[i]);
    ++kept;
  }
  methods.resize(kept);
}

}  // namespace

bool MappingReader::recordsEverySourceFile(const MappingHeader& header) {
  if (header.compiler != "R8") return false;
  // "8.5.35", "9.5.28-dev": the major version, the leading digits.
  const std::string_view version = header.compiler_version;
  const auto major = parseLine(version.substr(0, version.find_first_not_of("0123456789")));
  return major && *major >= 8 && *major < 1000;
}

void MappingReader::finishClass(ClassMapping& out) const {
  if (options_.drop_kotlin_line_map_frames && writtenByR8() && out.source_file.ends_with(".kt")) {
    dropKotlinLineMapFrames(out.methods);
  }
  if (options_.unknown_source_without_file_entry && out.source_file.empty() && records_every_source_file_) {
    out.source_file = std::string(kUnknownSourceFile);
  }
  if (options_.hide_desugared_lambda_frames) {
    // R8 marks the synthetics it makes (and whether its markers count depends on the map
    // version), but not those D8 made before it: a class whose source file D8 named.
    if (writtenByR8() ? out.source_file == "D8$$SyntheticClass"
                      : isDesugaredLambdaClass(out.original_name, out.source_file)) {
      out.synthesized = true;
    }
    for (MethodMapping& method : out.methods) {
      if (isDesugaredLambdaForwarder(method.signature.name)) method.synthesized = true;
    }
  }
  // "A method is either synthesized or not": a synthesized (or outline) marker under one line of
  // a method applies to every line of that method, so that a frame at any position is treated
  // alike.
  auto key = [](const MethodMapping& method) {
    const MethodSignature& sig = method.signature;
    return method.obfuscated_name + '\0' + sig.holder + '\0' + sig.name + '\0' + sig.params + '\0' + sig.return_type;
  };
  std::unordered_map<std::string, std::pair<bool, bool>> marked;  // -> (synthesized, outline)
  for (const MethodMapping& method : out.methods) {
    if (!method.synthesized && !method.outline) continue;
    auto& flags = marked[key(method)];
    flags.first |= method.synthesized;
    flags.second |= method.outline;
  }
  if (marked.empty()) return;
  for (MethodMapping& method : out.methods) {
    auto found = marked.find(key(method));
    if (found == marked.end()) continue;
    method.synthesized |= found->second.first;
    method.outline |= found->second.second;
  }
}

}  // namespace restack::proguard

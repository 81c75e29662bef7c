#include "symbolstore/proguard/proguard_message.h"

#include <algorithm>
#include <vector>

namespace restack::proguard {
namespace {

using MaybeText = std::optional<std::string>;  // nullopt = unchanged

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c == '.' || c == '-' || static_cast<unsigned char>(c) >= 0x80;
}

// A replacement of message[from, from + length) by `text`.
struct Edit {
  size_t from = 0;
  size_t length = 0;
  std::string text;
};

class MessageRestorer {
 public:
  explicit MessageRestorer(const ClassLookup& lookup) : lookup_(lookup) {}

  // The original name of a type as printed: "a.b", "a.b[]", "[La.b;", "int"; nullopt = unchanged.
  Expected<std::optional<std::string>> type(std::string_view printed) {
    std::string_view core = printed;
    std::string_view before, after;
    if (core.starts_with('[')) {  // JVM descriptor form of an array: "[[La.b;"
      size_t dims = core.find_first_not_of('[');
      if (dims == std::string_view::npos || core[dims] != 'L' || !core.ends_with(';')) return MaybeText();
      before = core.substr(0, dims + 1);
      after = ";";
      core = core.substr(dims + 1, core.size() - dims - 2);
    } else {
      size_t brackets = core.find('[');
      if (brackets != std::string_view::npos) {
        after = core.substr(brackets);
        core = core.substr(0, brackets);
      }
    }
    auto record = lookup_(core);
    if (!record) return record.error();
    if (!*record) return MaybeText();
    return MaybeText(std::string(before) + std::string((*record)->original_name) + std::string(after));
  }

  // "ret cls.method(params)" (ret optional) -> restored text; nullopt = unchanged.
  Expected<std::optional<std::string>> methodSignature(std::string_view signature, bool with_return) {
    std::string_view ret;
    if (with_return && !splitLeadingType(signature, ret)) return MaybeText();
    size_t open = signature.find('(');
    if (open == std::string_view::npos || !signature.ends_with(')')) return MaybeText();
    std::string_view qualified = signature.substr(0, open);
    std::string_view params = signature.substr(open + 1, signature.size() - open - 2);
    size_t dot = qualified.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return MaybeText();
    std::string_view owner = qualified.substr(0, dot);
    std::string_view method = qualified.substr(dot + 1);
    bool changed = false;
    std::string out;
    if (with_return) RESTACK_RETURN_IF_ERROR(appendType(ret, changed, out));
    auto record = lookup_(owner);
    if (!record) return record.error();
    if (*record) {
      const ClassRecord& cls = **record;
      changed = true;
      std::string_view name = uniqueMethodName(cls, method);
      out += std::string(cls.original_name) + "." + std::string(name.empty() ? method : name);
    } else {
      out += std::string(qualified);
    }
    out += "(";
    size_t start = 0;
    while (start <= params.size() && !params.empty()) {
      size_t comma = params.find(',', start);
      std::string_view param =
          params.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      size_t lead = param.find_first_not_of(' ');
      std::string_view trimmed = lead == std::string_view::npos ? std::string_view() : param.substr(lead);
      auto restored = restoreOrKeep(trimmed, changed);
      if (!restored) return restored.error();
      out += std::string(param.substr(0, lead == std::string_view::npos ? param.size() : lead)) + *restored;
      if (comma == std::string_view::npos) break;
      out += ",";
      start = comma + 1;
    }
    out += ")";
    if (!changed) return MaybeText();
    return MaybeText(std::move(out));
  }

  // "type cls.field" (type optional) -> restored text; nullopt = unchanged.
  Expected<std::optional<std::string>> fieldReference(std::string_view reference, bool with_type) {
    std::string_view type_text;
    if (with_type && !splitLeadingType(reference, type_text)) return MaybeText();
    size_t dot = reference.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == reference.size()) return MaybeText();
    std::string_view owner = reference.substr(0, dot);
    std::string_view field = reference.substr(dot + 1);
    bool changed = false;
    std::string out;
    if (with_type) RESTACK_RETURN_IF_ERROR(appendType(type_text, changed, out));
    auto record = lookup_(owner);
    if (!record) return record.error();
    if (*record) {
      const ClassRecord& cls = **record;
      std::string_view name = uniqueFieldName(cls, field);
      if (!with_type && name.empty()) return MaybeText();  // not known to be a field at all
      changed = true;
      out += std::string(cls.original_name) + "." + std::string(name.empty() ? field : name);
    } else {
      out += std::string(reference);
    }
    if (!changed) return MaybeText();
    return MaybeText(std::move(out));
  }

 private:
  // "type rest" -> `type` = "type", `text` = "rest"; false when there is no space.
  static bool splitLeadingType(std::string_view& text, std::string_view& type) {
    size_t space = text.find(' ');
    if (space == std::string_view::npos) return false;
    type = text.substr(0, space);
    text = text.substr(space + 1);
    return true;
  }

  // Appends `printed` restored (or as it is) and a space.
  Status appendType(std::string_view printed, bool& changed, std::string& out) {
    auto restored = restoreOrKeep(printed, changed);
    if (!restored) return restored.error();
    out += *restored + " ";
    return Status::ok();
  }

  Expected<std::string> restoreOrKeep(std::string_view printed, bool& changed) {
    auto restored = type(printed);
    if (!restored) return restored.error();
    if (!*restored) return std::string(printed);
    changed = true;
    return std::move(**restored);
  }

  // The one original name every mapping of `obfuscated` in `cls` gives; "" when there is none,
  // several, or the method was moved there from another class (its name alone would mislead).
  static std::string_view uniqueMethodName(const ClassRecord& cls, std::string_view obfuscated) {
    const MethodRecord* method = cls.findMethod(obfuscated);
    if (method == nullptr) return {};
    std::string_view found_holder, found_name;
    bool first = true;
    for (const MethodRecord::Chain& chain : method->chains) {
      const RangeRecord& outermost = method->outermost(chain);
      std::string_view holder = cls.strings[outermost.holder];
      std::string_view name = cls.strings[outermost.name];
      if (first) {
        found_holder = holder;
        found_name = name;
        first = false;
      } else if (holder != found_holder || name != found_name) {
        return {};
      }
    }
    if (first || !found_holder.empty()) return {};  // moved methods: keep it simple, unchanged name
    return found_name;
  }

  static std::string_view uniqueFieldName(const ClassRecord& cls, std::string_view obfuscated) {
    std::string_view found;
    for (const FieldRecord& field : cls.fields) {
      if (field.obfuscated_name != obfuscated) continue;
      std::string_view name = cls.strings[field.name];
      if (!found.empty() && found != name) return {};
      found = name;
    }
    return found;
  }

  const ClassLookup& lookup_;
};

// "…'<inner>'…": the text between the first quote after `from` and the next one.
bool quoted(std::string_view message, size_t from, char quote, size_t& begin, size_t& end) {
  begin = message.find(quote, from);
  if (begin == std::string_view::npos) return false;
  ++begin;
  end = message.find(quote, begin);
  return end != std::string_view::npos;
}

// ART: "Attempt to invoke <kind> method '<sig>' …", "Attempt to read from field '<sig>' …".
Status artNullPointer(std::string_view message, MessageRestorer& restorer, std::vector<Edit>& edits) {
  if (!message.starts_with("Attempt to ")) return Status::ok();
  const bool method = message.starts_with("Attempt to invoke ");
  const bool field =
      message.starts_with("Attempt to read from field '") || message.starts_with("Attempt to write to field '");
  if (!method && !field) return Status::ok();
  size_t begin = 0, end = 0;
  if (!quoted(message, 0, '\'', begin, end)) return Status::ok();
  std::string_view inner = message.substr(begin, end - begin);
  auto restored = method ? restorer.methodSignature(inner, true) : restorer.fieldReference(inner, true);
  if (!restored) return restored.error();
  if (*restored) edits.push_back({begin, end - begin, std::move(**restored)});
  return Status::ok();
}

// HotSpot helpful NPE: every quoted "cls.method(params)" or "cls.staticField".
Status hotspotNullPointer(std::string_view message, MessageRestorer& restorer, std::vector<Edit>& edits) {
  if (!message.starts_with("Cannot ")) return Status::ok();
  size_t from = 0, begin = 0, end = 0;
  while (quoted(message, from, '"', begin, end)) {
    std::string_view inner = message.substr(begin, end - begin);
    from = end + 1;
    if (inner.find('.') == std::string_view::npos || inner.find(' ') != std::string_view::npos) continue;
    auto restored =
        inner.ends_with(')') ? restorer.methodSignature(inner, false) : restorer.fieldReference(inner, false);
    if (!restored) return restored.error();
    if (*restored) edits.push_back({begin, end - begin, std::move(**restored)});
  }
  return Status::ok();
}

// The whole name token that ends right before `at` / starts at `at`.
std::string_view tokenBefore(std::string_view message, size_t at) {
  size_t start = at;
  while (start > 0 && (isNameChar(message[start - 1]) || message[start - 1] == '[' || message[start - 1] == ']' ||
                       message[start - 1] == ';')) {
    --start;
  }
  return message.substr(start, at - start);
}
std::string_view tokenAfter(std::string_view message, size_t at) {
  size_t end = at;
  while (end < message.size() &&
         (isNameChar(message[end]) || message[end] == '[' || message[end] == ']' || message[end] == ';')) {
    ++end;
  }
  return message.substr(at, end - at);
}

// ClassCastException / ArrayStoreException: "X cannot be cast to Y", "class X cannot be cast to
// class Y (X and Y are …)", "X cannot be stored in an array of type Y". Both names are restored
// at every whole-token occurrence.
Status classNamePair(std::string_view message, MessageRestorer& restorer, std::vector<Edit>& edits) {
  static constexpr std::string_view kShapes[] = {" cannot be cast to ", " cannot be stored in an array of type "};
  for (std::string_view shape : kShapes) {
    size_t at = message.find(shape);
    if (at == std::string_view::npos) continue;
    size_t after = at + shape.size();
    if (message.substr(after).starts_with("class ")) after += 6;
    std::string_view names[] = {tokenBefore(message, at), tokenAfter(message, after)};
    for (std::string_view name : names) {
      // Strip a trailing period or the like that is not part of the name.
      while (!name.empty() && (name.back() == '.' || name.back() == '-')) name.remove_suffix(1);
      if (name.empty()) continue;
      auto restored = restorer.type(name);
      if (!restored) return restored.error();
      if (!*restored) continue;
      for (size_t pos = message.find(name); pos != std::string_view::npos; pos = message.find(name, pos + 1)) {
        bool starts = pos == 0 || !isNameChar(message[pos - 1]);
        size_t stop = pos + name.size();
        bool ends = stop == message.size() || !isNameChar(message[stop]) ||
                    (message[stop] == '.' && (stop + 1 == message.size() || !isNameChar(message[stop + 1])));
        if (starts && ends) edits.push_back({pos, name.size(), **restored});
      }
    }
    break;
  }
  return Status::ok();
}

// Enum.valueOf: "No enum constant <canonical class name>.<constant>". The constant is the text
// the app passed, never renamed; the class is printed by its canonical name, which spells a
// nested class's '$' as '.', so a nested enum is tried with the dots before its last one turned
// back into '$', innermost first ("a.b.c" -> "a.b.c", then "a.b$c", then "a$b$c").
Status enumConstant(std::string_view message, MessageRestorer& restorer, std::vector<Edit>& edits) {
  static constexpr std::string_view kShape = "No enum constant ";
  if (!message.starts_with(kShape)) return Status::ok();
  const std::string_view reference = message.substr(kShape.size());
  const size_t last_dot = reference.rfind('.');
  if (last_dot == std::string_view::npos || last_dot == 0) return Status::ok();
  std::string candidate(reference.substr(0, last_dot));
  for (size_t dot = candidate.size();;) {
    auto restored = restorer.type(candidate);
    if (!restored) return restored.error();
    if (*restored) {
      std::string canonical = std::move(**restored);
      std::replace(canonical.begin(), canonical.end(), '$', '.');
      edits.push_back({kShape.size(), last_dot, std::move(canonical)});
      return Status::ok();
    }
    dot = candidate.rfind('.', dot - 1);
    if (dot == std::string::npos || dot == 0) return Status::ok();
    candidate[dot] = '$';
  }
}

// The package-qualified class name a message starts with, when it is followed by ": " or ends
// the message: the message of `new RuntimeException(cause)` is the cause's toString()
// ("a.b: negative qty"), and HotSpot's ArrayStoreException message is the stored object's class
// alone ("a.c"). A name without a package is left: "x: must be positive" is more often prose.
std::string_view leadingClassName(std::string_view message) {
  const std::string_view name = tokenAfter(message, 0);
  if (name.find('.') == std::string_view::npos || name.front() == '.' || name.back() == '.') return {};
  if (name.size() != message.size() && !message.substr(name.size()).starts_with(": ")) return {};
  return name;
}

Expected<std::optional<std::string>> restoreMessage(std::string_view message, const ClassLookup& lookup, int depth);

// `name`, leadingClassName's answer for `message`, restored; what follows ": " is a message of its
// own, restored by every shape (a chain of causes, `depth` of them so far, is followed 8 deep).
Status leadingThrowable(std::string_view message, std::string_view name, MessageRestorer& restorer,
                        const ClassLookup& lookup, int depth, std::vector<Edit>& edits) {
  if (name.empty()) return Status::ok();
  auto restored = restorer.type(name);
  if (!restored) return restored.error();
  if (*restored) edits.push_back({0, name.size(), std::move(**restored)});
  if (name.size() == message.size() || depth >= 8) return Status::ok();
  const size_t rest = name.size() + 2;
  auto inner = restoreMessage(message.substr(rest), lookup, depth + 1);
  if (!inner) return inner.error();
  if (*inner) edits.push_back({rest, message.size() - rest, std::move(**inner)});
  return Status::ok();
}

Expected<std::optional<std::string>> restoreMessage(std::string_view message, const ClassLookup& lookup, int depth) {
  // Cheap rejection first: most messages have none of the shapes.
  const std::string_view leading_class = leadingClassName(message);
  const bool candidate = message.starts_with("Attempt to ") || message.starts_with("Cannot ") ||
                         message.starts_with("No enum constant ") ||
                         message.find(" cannot be ") != std::string_view::npos || !leading_class.empty();
  if (!candidate) return MaybeText();
  MessageRestorer restorer(lookup);
  std::vector<Edit> edits;
  RESTACK_RETURN_IF_ERROR(leadingThrowable(message, leading_class, restorer, lookup, depth, edits));
  RESTACK_RETURN_IF_ERROR(artNullPointer(message, restorer, edits));
  RESTACK_RETURN_IF_ERROR(hotspotNullPointer(message, restorer, edits));
  RESTACK_RETURN_IF_ERROR(classNamePair(message, restorer, edits));
  RESTACK_RETURN_IF_ERROR(enumConstant(message, restorer, edits));
  if (edits.empty()) return MaybeText();
  // Apply left to right; overlapping edits (the same token found twice) keep the first.
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.from < b.from; });
  std::string out;
  size_t copied = 0;
  for (const Edit& edit : edits) {
    if (edit.from < copied) continue;
    out.append(message.substr(copied, edit.from - copied));
    out += edit.text;
    copied = edit.from + edit.length;
  }
  out.append(message.substr(copied));
  if (out == message) return MaybeText();
  return MaybeText(std::move(out));
}

}  // namespace

Expected<std::optional<std::string>> restoreExceptionMessage(std::string_view message, const ClassLookup& lookup) {
  return restoreMessage(message, lookup, 0);
}

}  // namespace restack::proguard

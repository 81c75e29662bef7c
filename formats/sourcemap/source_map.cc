#include "formats/sourcemap/source_map.h"

#include <simdjson.h>

#include <cctype>

namespace restack::sourcemap {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// "sources[3]" style paths in messages; `where` is "" for the top level map.
std::string fieldPath(const std::string& where, std::string_view field) {
  if (field.empty()) return where;
  return where.empty() ? std::string(field) : where + "." + std::string(field);
}

Error fieldError(const std::string& where, std::string_view field, const std::string& what) {
  return malformed("source map: \"" + fieldPath(where, field) + "\" " + what);
}

bool isAbsoluteUrl(std::string_view source) {
  const size_t colon = source.find("://");
  if (colon != std::string_view::npos && colon > 0) {
    for (size_t i = 0; i < colon; ++i) {
      if (!std::isalpha(static_cast<unsigned char>(source[i]))) return false;
    }
    return true;
  }
  return !source.empty() && source[0] == '/';
}

Expected<std::string> getString(element value, const std::string& where, std::string_view field) {
  std::string_view text;
  if (value.get_string().get(text)) return fieldError(where, field, "is not a string");
  return std::string(text);
}

Expected<uint32_t> getIndex(element value, const std::string& where, std::string_view field) {
  int64_t number = 0;
  if (value.get_int64().get(number) || number < 0 || number > 0x7fffffff) {
    return fieldError(where, field, "is not a non-negative integer");
  }
  return static_cast<uint32_t>(number);
}

// Reads an array of strings; `allow_null` keeps nulls as std::nullopt (sourcesContent).
Status getStringArray(element value, const std::string& where, std::string_view field, bool allow_null,
                      std::vector<std::optional<std::string>>* out) {
  array items;
  if (value.get_array().get(items)) return fieldError(where, field, "is not an array");
  out->reserve(items.size());
  size_t index = 0;
  for (element item : items) {
    std::string_view text;
    if (item.is_null() && allow_null) {
      out->emplace_back();
    } else if (!item.get_string().get(text)) {
      out->emplace_back(std::string(text));
    } else if (item.is_null()) {
      // "sources" may hold null for generated code in some tools; keep it as an empty name.
      out->emplace_back(std::string());
    } else {
      return fieldError(where, std::string(field) + "[" + std::to_string(index) + "]", "is not a string");
    }
    ++index;
  }
  return Status::ok();
}

std::string normalizeDebugId(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '-') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

Status parseIgnoreList(element value, const std::string& where, std::string_view field, SourceMapDocument* doc) {
  array items;
  if (value.get_array().get(items)) return fieldError(where, field, "is not an array");
  for (element item : items) {
    auto index = getIndex(item, where, field);
    if (!index) return index.error();
    if (*index >= doc->sources.size()) {
      return fieldError(where, field,
                        "names source " + std::to_string(*index) + " but the map has " +
                            std::to_string(doc->sources.size()) + " sources");
    }
    doc->ignored[*index] = true;
  }
  return Status::ok();
}

Status parseFunctionMaps(element value, const std::string& where, SourceMapDocument* doc) {
  constexpr std::string_view kField = "x_facebook_sources";
  array items;
  if (value.get_array().get(items)) return fieldError(where, kField, "is not an array");
  doc->function_maps.resize(doc->sources.size());
  size_t index = 0;
  for (element item : items) {
    if (index >= doc->sources.size()) break;  // extra entries describe nothing
    array metadata;
    // Each entry is null or [functionMap, …further metadata kinds]; only index 0 is defined.
    if (!item.is_null() && !item.get_array().get(metadata) && metadata.size() > 0) {
      element function_map;
      object fields;
      if (!metadata.at(0).get(function_map) && !function_map.is_null()) {
        const std::string entry = std::string(kField) + "[" + std::to_string(index) + "][0]";
        if (function_map.get_object().get(fields)) return fieldError(where, entry, "is not an object");
        EncodedFunctionMap encoded;
        element names, mappings;
        if (fields["names"].get(names) || fields["mappings"].get(mappings)) {
          return fieldError(where, entry, "needs \"names\" and \"mappings\"");
        }
        std::vector<std::optional<std::string>> name_list;
        RESTACK_RETURN_IF_ERROR(getStringArray(names, where, entry + ".names", false, &name_list));
        for (auto& name : name_list) encoded.names.push_back(std::move(*name));
        auto text = getString(mappings, where, entry + ".mappings");
        if (!text) return text.error();
        encoded.mappings = std::move(*text);
        doc->function_maps[index] = std::move(encoded);
      }
    }
    ++index;
  }
  return Status::ok();
}

Status parseHermesOffsets(element value, const std::string& where, SourceMapDocument* doc) {
  constexpr std::string_view kField = "x_hermes_function_offsets";
  object segments;
  if (value.get_object().get(segments)) return fieldError(where, kField, "is not an object");
  for (auto field : segments) {
    uint32_t segment = 0;
    const std::string_view key = field.key;
    if (key.empty() || key.size() > 9) return fieldError(where, kField, "has a non-numeric key");
    for (char c : key) {
      if (c < '0' || c > '9') return fieldError(where, kField, "has a non-numeric key");
      segment = segment * 10 + static_cast<uint32_t>(c - '0');
    }
    array offsets;
    if (field.value.get_array().get(offsets)) return fieldError(where, kField, "values must be arrays");
    std::vector<uint32_t>& out = doc->hermes_function_offsets[segment];
    out.reserve(offsets.size());
    for (element offset : offsets) {
      auto number = getIndex(offset, where, kField);
      if (!number) return number.error();
      out.push_back(*number);
    }
  }
  return Status::ok();
}

Status parseModuleOffsets(element value, const std::string& where, SourceMapDocument* doc) {
  constexpr std::string_view kField = "x_facebook_offsets";
  array offsets;
  if (value.get_array().get(offsets)) return fieldError(where, kField, "is not an array");
  doc->module_offsets.reserve(offsets.size());
  size_t index = 0;
  for (element offset : offsets) {
    if (offset.is_null()) {
      doc->module_offsets.push_back(kNoModuleOffset);
    } else {
      auto line = getIndex(offset, where, std::string(kField) + "[" + std::to_string(index) + "]");
      if (!line) return line.error();
      doc->module_offsets.push_back(*line);
    }
    ++index;
  }
  return Status::ok();
}

Status parseDocument(object root, const std::string& where, uint32_t depth, const ParseOptions& options,
                     SourceMapDocument* doc);

Status parseSections(element value, const std::string& where, uint32_t depth, const ParseOptions& options,
                     SourceMapDocument* doc) {
  array sections;
  if (value.get_array().get(sections)) return fieldError(where, "sections", "is not an array");
  size_t index = 0;
  for (element item : sections) {
    const std::string path = fieldPath(where, "sections[" + std::to_string(index) + "]");
    object section;
    if (item.get_object().get(section)) return fieldError(path, "", "is not an object");
    SourceMapSection out;
    object offset;
    element line, column;
    if (section["offset"].get_object().get(offset) || offset["line"].get(line) || offset["column"].get(column)) {
      return fieldError(path, "offset", "needs \"line\" and \"column\"");
    }
    auto line_value = getIndex(line, path, "offset.line");
    if (!line_value) return line_value.error();
    auto column_value = getIndex(column, path, "offset.column");
    if (!column_value) return column_value.error();
    out.offset_line = *line_value;
    out.offset_column = *column_value;
    if (!doc->sections.empty()) {
      const SourceMapSection& previous = doc->sections.back();
      if (out.offset_line < previous.offset_line ||
          (out.offset_line == previous.offset_line && out.offset_column < previous.offset_column)) {
        return fieldError(path, "offset", "is before the previous section's offset");
      }
    }
    object inline_map;
    element url;
    if (!section["map"].get_object().get(inline_map)) {
      if (depth + 1 > options.max_nesting) return fieldError(path, "map", "is nested too deeply");
      out.map = std::make_unique<SourceMapDocument>();
      RESTACK_RETURN_IF_ERROR(parseDocument(inline_map, fieldPath(path, "map"), depth + 1, options, out.map.get()));
    } else if (!section["url"].get(url)) {
      auto text = getString(url, path, "url");
      if (!text) return text.error();
      out.url = std::move(*text);
    } else {
      return fieldError(path, "", "has neither \"map\" nor \"url\"");
    }
    doc->sections.push_back(std::move(out));
    ++index;
  }
  return Status::ok();
}

Status parseDocument(object root, const std::string& where, uint32_t depth, const ParseOptions& options,
                     SourceMapDocument* doc) {
  element value;
  if (!root["version"].get(value)) {
    int64_t version = 0;
    if (value.get_int64().get(version) || version != 3) {
      return fieldError(where, "version", "is not 3 (only source map v3 is defined)");
    }
  }
  if (!root["file"].get(value) && !value.is_null()) {
    auto text = getString(value, where, "file");
    if (!text) return text.error();
    doc->file = std::move(*text);
  }
  if (!root["sections"].get(value)) return parseSections(value, where, depth, options, doc);

  if (!root["sourceRoot"].get(value) && !value.is_null()) {
    auto text = getString(value, where, "sourceRoot");
    if (!text) return text.error();
    doc->source_root = std::move(*text);
  }
  if (root["sources"].get(value)) return fieldError(where, "sources", "is missing");
  std::vector<std::optional<std::string>> sources;
  RESTACK_RETURN_IF_ERROR(getStringArray(value, where, "sources", true, &sources));
  for (auto& source : sources) doc->sources.push_back(source ? std::move(*source) : std::string());
  doc->ignored.assign(doc->sources.size(), false);
  doc->sources_content.resize(doc->sources.size());
  if (!root["sourcesContent"].get(value) && !value.is_null()) {
    std::vector<std::optional<std::string>> contents;
    RESTACK_RETURN_IF_ERROR(getStringArray(value, where, "sourcesContent", true, &contents));
    for (size_t i = 0; i < contents.size() && i < doc->sources.size(); ++i) {
      doc->sources_content[i] = std::move(contents[i]);
    }
  }
  if (!root["names"].get(value) && !value.is_null()) {
    std::vector<std::optional<std::string>> names;
    RESTACK_RETURN_IF_ERROR(getStringArray(value, where, "names", true, &names));
    for (auto& name : names) doc->names.push_back(name ? std::move(*name) : std::string());
  }
  if (root["mappings"].get(value)) return fieldError(where, "mappings", "is missing");
  auto mappings = getString(value, where, "mappings");
  if (!mappings) return mappings.error();
  doc->mappings = std::move(*mappings);

  if (!root["scopes"].get(value) && !value.is_null()) {
    auto text = getString(value, where, "scopes");
    if (!text) return text.error();
    doc->scopes = std::move(*text);
  }
  for (std::string_view field : {"ignoreList", "x_google_ignoreList"}) {
    if (!root[field].get(value) && !value.is_null()) {
      RESTACK_RETURN_IF_ERROR(parseIgnoreList(value, where, field, doc));
    }
  }
  for (std::string_view field : {"debugId", "debug_id"}) {
    if (doc->debug_id.empty() && !root[field].get(value)) {
      auto text = getString(value, where, field);
      if (!text) return text.error();
      doc->debug_id = normalizeDebugId(*text);
    }
  }
  if (!root["x_facebook_sources"].get(value) && !value.is_null()) {
    RESTACK_RETURN_IF_ERROR(parseFunctionMaps(value, where, doc));
  }
  if (!root["x_hermes_function_offsets"].get(value) && !value.is_null()) {
    RESTACK_RETURN_IF_ERROR(parseHermesOffsets(value, where, doc));
  }
  if (!root["x_facebook_offsets"].get(value) && !value.is_null()) {
    RESTACK_RETURN_IF_ERROR(parseModuleOffsets(value, where, doc));
  }
  if (!root["x_facebook_segments"].get(value) && !value.is_null()) {
    object segments;
    if (value.get_object().get(segments)) {
      return fieldError(where, "x_facebook_segments", "is not an object");
    }
    for (auto field : segments) {
      const std::string path = fieldPath(where, "x_facebook_segments." + std::string(field.key));
      uint32_t segment = 0;
      if (field.key.empty() || field.key.size() > 9) return fieldError(path, "", "is not a number");
      for (char c : field.key) {
        if (c < '0' || c > '9') return fieldError(path, "", "is not a number");
        segment = segment * 10 + static_cast<uint32_t>(c - '0');
      }
      object segment_map;
      if (field.value.get_object().get(segment_map)) return fieldError(path, "", "is not an object");
      if (depth + 1 > options.max_nesting) return fieldError(path, "", "is nested too deeply");
      auto child = std::make_unique<SourceMapDocument>();
      RESTACK_RETURN_IF_ERROR(parseDocument(segment_map, path, depth + 1, options, child.get()));
      doc->segments[segment] = std::move(child);
    }
  }
  return Status::ok();
}

}  // namespace

std::string SourceMapDocument::resolvedSource(size_t index) const {
  if (index >= sources.size()) return {};
  const std::string& source = sources[index];
  if (source_root.empty() || isAbsoluteUrl(source)) return source;
  if (source_root.back() == '/') return source_root + source;
  return source_root + "/" + source;
}

Expected<SourceMapDocument> parseSourceMap(std::string_view json, const ParseOptions& options) {
  // A UTF-8 byte order mark (maps written by Windows toolchains), which JSON does not allow.
  if (json.starts_with("\xef\xbb\xbf")) json.remove_prefix(3);
  // XSSI guard: ")]}'" followed by a newline.
  if (json.substr(0, 4) == ")]}'") {
    const size_t newline = json.find('\n');
    json = newline == std::string_view::npos ? std::string_view() : json.substr(newline + 1);
  }
  if (json.size() > options.max_bytes) {
    return tooLarge("source map of " + std::to_string(json.size()) + " bytes is larger than the parser accepts (" +
                    std::to_string(options.max_bytes) + " bytes)");
  }
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  element root;
  if (auto error = parser.parse(padded).get(root)) {
    return malformed(std::string("source map is not valid JSON: ") + simdjson::error_message(error));
  }
  object top;
  if (root.get_object().get(top)) return malformed("source map: the top level is not a JSON object");
  SourceMapDocument doc;
  RESTACK_RETURN_IF_ERROR(parseDocument(top, "", 0, options, &doc));
  return doc;
}

}  // namespace restack::sourcemap

#include "worker/kafka/upload_message.h"

#include <cstdio>
#include <optional>

#include "symbolstore/symbol_source.h"
#include "worker/kafka/scratch.h"

namespace restack::worker {
namespace {

// A header value as it may appear in a message: printable ASCII, the rest as \xNN, cut at 64
// bytes (the value may be a megabyte of binary).
std::string printable(std::string_view value) {
  constexpr size_t kShown = 64;
  std::string out;
  for (size_t i = 0; i < value.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  if (value.size() > kShown) out += "…";
  return out;
}

Status checkValue(std::string_view what, std::string_view value, size_t limit) {
  if (value.size() > limit) {
    return malformed(std::string(what) + " is " + std::to_string(value.size()) + " bytes, more than the limit of " +
                     std::to_string(limit) + " ('" + printable(value) + "')");
  }
  if (value.find('\0') != std::string_view::npos) {
    return malformed(std::string(what) + " holds a NUL byte ('" + printable(value) + "')");
  }
  return Status::ok();
}

// Sets `field` from header `name`; the same header again must repeat the value.
Status assign(std::optional<std::string>& field, const std::string& name, const std::string& value, size_t limit) {
  RESTACK_RETURN_IF_ERROR(checkValue("header " + name, value, limit));
  if (field && *field != value) {
    return malformed("header " + name + " appears twice with different values ('" + printable(*field) + "', '" +
                     printable(value) + "')");
  }
  field = value;
  return Status::ok();
}

}  // namespace

Headers encodeUploadHeaders(const UploadMessage& upload) {
  Headers headers;
  if (upload.meta.kind) headers.emplace_back("restack.kind", symbolKindName(*upload.meta.kind));
  if (!upload.meta.app.empty()) headers.emplace_back("restack.app", upload.meta.app);
  if (!upload.meta.build_id.empty()) headers.emplace_back("restack.build_id", upload.meta.build_id);
  if (!upload.meta.name.empty()) headers.emplace_back("restack.name", upload.meta.name);
  if (!upload.file_name.empty()) headers.emplace_back("restack.file_name", upload.file_name);
  if (!upload.location.empty()) headers.emplace_back("restack.location", upload.location);
  return headers;
}

Expected<UploadMessage> decodeUploadMessage(std::string_view key, const Headers& headers, bool shared) {
  std::optional<std::string> kind, app, build_id, name, file_name, location;
  for (const auto& [header, value] : headers) {
    if (header == "restack.kind") {
      RESTACK_RETURN_IF_ERROR(assign(kind, header, value, kMaxUploadHeaderBytes));
    } else if (header == "restack.app") {
      RESTACK_RETURN_IF_ERROR(assign(app, header, value, kMaxUploadHeaderBytes));
    } else if (header == "restack.build_id") {
      RESTACK_RETURN_IF_ERROR(assign(build_id, header, value, kMaxUploadHeaderBytes));
    } else if (header == "restack.name") {
      RESTACK_RETURN_IF_ERROR(assign(name, header, value, kMaxUploadHeaderBytes));
    } else if (header == "restack.file_name") {
      RESTACK_RETURN_IF_ERROR(assign(file_name, header, value, kMaxUploadHeaderBytes));
    } else if (header == "restack.location") {
      RESTACK_RETURN_IF_ERROR(assign(location, header, value, kMaxUploadLocationBytes));
    }
  }
  UploadMessage upload;
  upload.meta.shared = shared;
  if (kind) {
    auto parsed = parseSymbolKind(*kind);
    if (!parsed) {
      return malformed("header restack.kind is '" + printable(*kind) + "', not one of " + symbolKindList(", ", ", "));
    }
    upload.meta.kind = *parsed;
  }
  if (!shared && (!app || !build_id)) {
    RESTACK_RETURN_IF_ERROR(checkValue("the message key", key, kMaxUploadHeaderBytes));
    size_t colon = key.find(':');
    if (colon == std::string_view::npos) {
      return malformed("upload has no restack.app/restack.build_id headers and its key '" + printable(key) +
                       "' is not '<app>:<build_id>'");
    }
    if (!app) app = std::string(key.substr(0, colon));
    if (!build_id) build_id = std::string(key.substr(colon + 1));
  }
  upload.meta.app = app.value_or("");
  upload.meta.build_id = build_id.value_or("");
  upload.meta.name = name.value_or("");
  upload.file_name = file_name.value_or("");
  upload.location = location.value_or("");
  return upload;
}

IngestOptions ingestOptionsFrom(const config::Config& config) {
  IngestOptions options;
  options.max_input_bytes = config.limits.max_upload_bytes;
  options.max_decompression_ratio = config.limits.max_decompression_ratio;
  options.max_sourcemap_bytes = config.limits.max_sourcemap_bytes;
  options.scratch_dir = scratchDirFor(config);
  return options;
}

}  // namespace restack::worker

#include "worker/kafka/upload_message.h"

namespace restack::worker {

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
  UploadMessage upload;
  upload.meta.shared = shared;
  bool has_app = false, has_build = false;
  for (const auto& [name, value] : headers) {
    if (name == "restack.kind") {
      auto kind = parseSymbolKind(value);
      if (!kind) return kind.error();
      upload.meta.kind = *kind;
    } else if (name == "restack.app") {
      upload.meta.app = value;
      has_app = true;
    } else if (name == "restack.build_id") {
      upload.meta.build_id = value;
      has_build = true;
    } else if (name == "restack.name") {
      upload.meta.name = value;
    } else if (name == "restack.file_name") {
      upload.file_name = value;
    } else if (name == "restack.location") {
      upload.location = value;
    }
  }
  if (!shared && (!has_app || !has_build)) {
    size_t colon = key.find(':');
    if (colon == std::string_view::npos) {
      return malformed("upload has no restack.app/restack.build_id headers and its key '" + std::string(key) +
                       "' is not '<app>:<build_id>'");
    }
    if (!has_app) upload.meta.app = std::string(key.substr(0, colon));
    if (!has_build) upload.meta.build_id = std::string(key.substr(colon + 1));
  }
  return upload;
}

}  // namespace restack::worker

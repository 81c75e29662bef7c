#include "tests/archive/fuzz_entry.h"

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "worker/kafka/upload_message.h"

namespace restack::archive_test {
namespace {

bool clean(const std::string& value, size_t limit) {
  return value.size() <= limit && value.find('\0') == std::string::npos;
}

}  // namespace

int fuzzUploadMessageOnce(const uint8_t* data, size_t size) {
  static const char* const kNames[] = {"restack.kind",      "restack.app",      "restack.build_id", "restack.name",
                                       "restack.file_name", "restack.location", "traceparent"};
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const bool shared = size > 0 && (data[0] & 1);
  std::vector<std::string> parts;
  while (true) {
    size_t end = input.find('\xff');
    parts.emplace_back(input.substr(0, end));
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  worker::Headers headers;
  for (size_t i = 1; i + 1 < parts.size(); i += 2) {
    std::string name = parts[i];
    if (name.size() == 1 && static_cast<unsigned char>(name[0]) < 7) name = kNames[static_cast<size_t>(name[0])];
    headers.emplace_back(std::move(name), parts[i + 1]);
  }
  auto upload = worker::decodeUploadMessage(parts[0], headers, shared);
  if (!upload) {
    if (upload.error().message().size() > 1000) std::abort();  // errors quote values cut short
    return 0;
  }
  const UploadMeta& meta = upload->meta;
  if (!clean(meta.app, worker::kMaxUploadHeaderBytes) || !clean(meta.build_id, worker::kMaxUploadHeaderBytes) ||
      !clean(meta.name, worker::kMaxUploadHeaderBytes) || !clean(upload->file_name, worker::kMaxUploadHeaderBytes) ||
      !clean(upload->location, worker::kMaxUploadLocationBytes) || meta.shared != shared) {
    std::abort();
  }
  // What it decoded encodes and decodes to the same upload. Empty values are not encoded, so
  // the key carries app and build id the way producers write it ("<app>:<build_id>"); that
  // key splits back only when the app holds no ':'.
  const std::string key = meta.app + ":" + meta.build_id;
  const bool key_splits_back = meta.app.find(':') == std::string::npos;
  auto again = worker::decodeUploadMessage(key, worker::encodeUploadHeaders(*upload), shared);
  if (!again || again->meta.kind != meta.kind || again->location != upload->location ||
      again->file_name != upload->file_name || again->meta.name != meta.name ||
      (!shared && key_splits_back && (again->meta.app != meta.app || again->meta.build_id != meta.build_id))) {
    std::abort();
  }
  return 0;
}

}  // namespace restack::archive_test

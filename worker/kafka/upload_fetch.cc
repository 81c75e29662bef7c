#include "worker/kafka/upload_fetch.h"

#include <curl/curl.h>

#include <cstdio>
#include <filesystem>

namespace restack::worker {
namespace fs = std::filesystem;
namespace {

struct Download {
  FILE* file = nullptr;
  uint64_t written = 0;
  uint64_t limit = 0;
  bool over_limit = false;
};

size_t writeChunk(char* data, size_t size, size_t count, void* user) {
  auto* download = static_cast<Download*>(user);
  size_t bytes = size * count;
  download->written += bytes;
  if (download->written > download->limit) {
    download->over_limit = true;
    return 0;  // aborts the transfer
  }
  return std::fwrite(data, 1, bytes, download->file);
}

std::string percentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace

Expected<FetchedUpload> fetchUpload(const std::string& location, const std::string& upload_root, uint64_t max_bytes) {
  FetchedUpload fetched;
  if (location.starts_with("file://")) {
    fs::path path = fs::weakly_canonical(percentDecode(location.substr(7)));
    if (!upload_root.empty()) {
      fs::path root = fs::weakly_canonical(upload_root);
      auto [root_end, unused] = std::mismatch(root.begin(), root.end(), path.begin());
      (void)unused;
      if (root_end != root.end()) {
        return invalidArgument("upload location " + location + " is outside worker.upload_root (" + upload_root + ")");
      }
    }
    if (!fs::exists(path)) return notFound("upload location " + location + " does not exist on this worker");
    fetched.path = path.string();
    return fetched;
  }
  if (!location.starts_with("http://") && !location.starts_with("https://")) {
    return unsupported("upload location '" + location + "' must be file://, http:// or https://");
  }
  auto dir = TempDir::create("restack-download-");
  if (!dir) return dir.error();
  fetched.holder.emplace(std::move(*dir));
  std::string target = fetched.holder->path() + "/upload";
  Download download;
  download.limit = max_bytes;
  download.file = std::fopen(target.c_str(), "wb");
  if (!download.file) return ioError("cannot create " + target);
  CURL* curl = curl_easy_init();
  if (!curl) {
    std::fclose(download.file);
    return Error(ErrorCode::kInternal, "libcurl could not start");
  }
  char message[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, location.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, writeChunk);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &download);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  CURLcode code = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  std::fclose(download.file);
  if (download.over_limit) {
    return tooLarge("download of " + location + " exceeds limits.max_upload_bytes (" + std::to_string(max_bytes) + ")");
  }
  if (code != CURLE_OK) {
    return ioError("cannot download " + location + ": " + (message[0] ? message : curl_easy_strerror(code)));
  }
  fetched.path = target;
  return fetched;
}

}  // namespace restack::worker

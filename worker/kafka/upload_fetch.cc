#include "worker/kafka/upload_fetch.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "worker/kafka/scratch.h"

namespace restack::worker {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

Error unavailable(std::string message) {
  return Error(ErrorCode::kUnavailable, std::move(message));
}

char lowerChar(char ch) {
  return (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
}
std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lowerChar);
  return out;
}
bool hasScheme(std::string_view location, std::string_view scheme) {
  return location.size() > scheme.size() + 3 && lower(location.substr(0, scheme.size())) == scheme &&
         location.substr(scheme.size(), 3) == "://";
}
int hexValue(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

std::string joined(const std::vector<std::string>& entries) {
  std::string out;
  for (const auto& entry : entries) out += (out.empty() ? "" : ",") + entry;
  return out;
}

// Path components without the root, empty and "." ones.
std::vector<std::string> components(const fs::path& path) {
  std::vector<std::string> out;
  for (const auto& part : path) {
    std::string text = part.string();
    if (text.empty() || text == "/" || text == ".") continue;
    out.push_back(std::move(text));
  }
  return out;
}
// True when `path` lies strictly below `root` (component-wise, no file system access).
bool isUnder(const fs::path& path, const fs::path& root) {
  auto root_parts = components(root);
  auto path_parts = components(path);
  return path_parts.size() > root_parts.size() && std::equal(root_parts.begin(), root_parts.end(), path_parts.begin());
}

Expected<CheckedLocation> checkFile(const std::string& location, const UploadPolicy& policy) {
  const std::string shown = redactLocation(location);
  std::string_view rest = std::string_view(location).substr(std::strlen("file://"));
  if (lower(rest.substr(0, 10)) == "localhost/") rest.remove_prefix(std::strlen("localhost"));
  if (!rest.starts_with('/')) {
    return invalidArgument("upload location " + shown +
                           " is refused: a file:// location names an absolute path on the worker (file:///path)");
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return invalidArgument("upload location " + shown +
                           " is refused: '?' and '#' must be percent-encoded (%3F, %23) in a file:// location");
  }
  auto decoded = percentDecode(rest);
  if (!decoded) return invalidArgument("upload location " + shown + " is refused: " + decoded.error().message());
  if (policy.file_roots.empty()) {
    return invalidArgument("upload location " + shown +
                           " is refused: file:// locations are off (uploads.file_roots is empty)");
  }
  fs::path path(*decoded);
  for (const auto& part : path) {
    if (part == "..") return invalidArgument("upload location " + shown + " is refused: it contains '..'");
  }
  path = path.lexically_normal();

  // First by name, so that nothing is revealed about paths outside the roots (not even whether
  // they exist); then again after resolving symbolic links.
  std::vector<fs::path> real_roots;
  bool named_inside = false;
  for (const std::string& root : policy.file_roots) {
    fs::path named = fs::path(root).lexically_normal();
    named_inside = named_inside || isUnder(path, named);
    std::error_code error;
    fs::path real = fs::canonical(named, error);
    if (error) continue;  // a root that does not exist holds nothing
    named_inside = named_inside || isUnder(path, real);
    real_roots.push_back(std::move(real));
  }
  if (!named_inside) {
    return invalidArgument("upload location " + shown + " is refused: it is outside uploads.file_roots (" +
                           joined(policy.file_roots) + ")");
  }
  auto insideRealRoot = [&](const fs::path& real) {
    return std::any_of(real_roots.begin(), real_roots.end(), [&](const fs::path& root) { return isUnder(real, root); });
  };
  const std::string escapes = "upload location " + shown +
                              " is refused: it resolves through a symbolic link to a path outside uploads.file_roots";
  std::error_code error;
  fs::path real = fs::canonical(path, error);
  if (error) {
    // The part that exists, resolved: a link out of the roots is refused before anything is said
    // about what lies behind it.
    std::error_code weak_error;
    fs::path partly = fs::weakly_canonical(path, weak_error);
    if (weak_error || !insideRealRoot(partly)) return invalidArgument(escapes);
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) {
      // Like an HTTP 404: the upload may not be visible on this worker's volume yet.
      return unavailable("upload location " + shown + " does not exist on this worker");
    }
    return ioError("upload location " + shown + ": " + error.message());
  }
  if (!insideRealRoot(real)) return invalidArgument(escapes);
  fs::file_status status = fs::status(real, error);
  if (error || !fs::is_regular_file(status)) {
    return invalidArgument("upload location " + shown +
                           " is refused: not a regular file (send a .dSYM bundle as a zip archive)");
  }
  CheckedLocation checked;
  checked.is_file = true;
  checked.path = real.string();
  checked.display = shown;
  return checked;
}

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
std::string urlPart(CURLU* url, CURLUPart part, unsigned flags = 0) {
  char* value = nullptr;
  if (curl_url_get(url, part, &value, flags) != CURLUE_OK || !value) return "";
  std::string out(value);
  curl_free(value);
  return out;
}

bool hostAllowed(std::string host, const std::vector<std::string>& allowed) {
  if (host.ends_with('.')) host.pop_back();  // "example.com." is example.com
  for (std::string entry : allowed) {
    if (entry.size() > 2 && entry.front() == '[' && entry.back() == ']') entry = entry.substr(1, entry.size() - 2);
    if (entry.starts_with("*.")) {
      std::string_view suffix = std::string_view(entry).substr(1);  // ".example.com"
      if (host.size() > suffix.size() && host.ends_with(suffix)) return true;
    } else if (host == entry) {
      return true;
    }
  }
  return false;
}

Expected<CheckedLocation> checkHttp(const std::string& location, const UploadPolicy& policy, bool https) {
  const std::string shown = redactLocation(location);
  if (!https && !policy.allow_plain_http) {
    return invalidArgument("upload location " + shown +
                           " is refused: plain http:// is off (uploads.allow_plain_http is false); use https://");
  }
  if (policy.http_hosts.empty()) {
    return invalidArgument("upload location " + shown +
                           " is refused: http(s) locations are off (uploads.http_hosts is empty)");
  }
  // libcurl's own parser decides the host, and the URL it prints back is what is requested, so
  // the host that is checked is the host that is contacted.
  std::unique_ptr<CURLU, UrlDeleter> url(curl_url());
  if (!url) return Error(ErrorCode::kInternal, "libcurl could not allocate a URL");
  if (curl_url_set(url.get(), CURLUPART_URL, location.c_str(), 0) != CURLUE_OK) {
    return invalidArgument("upload location " + shown + " is refused: not a valid URL");
  }
  const std::string scheme = urlPart(url.get(), CURLUPART_SCHEME);
  const std::string host = lower(urlPart(url.get(), CURLUPART_HOST));
  const std::string port = urlPart(url.get(), CURLUPART_PORT);
  const std::string path = urlPart(url.get(), CURLUPART_PATH);
  const std::string full = urlPart(url.get(), CURLUPART_URL);
  if (scheme != (https ? "https" : "http") || host.empty() || full.empty()) {
    return invalidArgument("upload location " + shown + " is refused: not a valid URL");
  }
  std::string name = host;
  bool literal_v6 = name.size() > 2 && name.front() == '[' && name.back() == ']';
  if (literal_v6) name = name.substr(1, name.size() - 2);
  bool plain = std::all_of(name.begin(), name.end(), [&](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
           (literal_v6 && ch == ':');
  });
  CheckedLocation checked;
  checked.url = full;
  checked.display = scheme + "://" + host + (port.empty() ? "" : ":" + port) + path;
  if (!plain) {
    return invalidArgument("upload location " + redactLocation(checked.display) +
                           " is refused: the host name has characters other than letters, digits, '-', '.', '_'");
  }
  if (!hostAllowed(name, policy.http_hosts)) {
    return invalidArgument("upload location " + redactLocation(checked.display) + " is refused: " + name +
                           " is not on uploads.http_hosts (" + joined(policy.http_hosts) + ")");
  }
  return checked;
}

// One transfer's state, shared with libcurl's callbacks.
struct Transfer {
  CURL* curl = nullptr;
  const UploadPolicy* policy = nullptr;
  FILE* file = nullptr;
  uint64_t written = 0;
  uint64_t limit = 0;
  bool over_limit = false;
  bool write_failed = false;
  int write_errno = 0;
  bool unwanted_body = false;  // the body of a redirect or an error: not kept
  std::string refusal;         // why a socket was refused
};

// libcurl asks this about once a second and on every chunk: nonzero ends the transfer.
int checkCancel(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* transfer = static_cast<const Transfer*>(user);
  return transfer->policy->cancel != nullptr && transfer->policy->cancel->load() ? 1 : 0;
}

size_t writeChunk(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  long status = 0;
  curl_easy_getinfo(transfer->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    transfer->unwanted_body = true;
    return 0;  // ends the transfer; the status decides what happens next
  }
  const size_t bytes = size * count;
  if (bytes > transfer->limit - transfer->written) {
    transfer->over_limit = true;
    return 0;
  }
  if (std::fwrite(data, 1, bytes, transfer->file) != bytes) {
    transfer->write_failed = true;
    transfer->write_errno = errno;
    return 0;
  }
  transfer->written += bytes;
  return bytes;
}

// Called for every socket libcurl opens, with the address it resolved and is about to connect
// to: the one place where a DNS answer (or a rebinding one) meets the address policy.
curl_socket_t openSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* transfer = static_cast<Transfer*>(user);
  if (purpose != CURLSOCKTYPE_IPCXN) {
    transfer->refusal = "an unexpected kind of socket";
    return CURL_SOCKET_BAD;
  }
  auto ip = ipAddressFromSockaddr(&address->addr, address->addrlen);
  if (!ip) {
    transfer->refusal = "an address of an unexpected family";
    return CURL_SOCKET_BAD;
  }
  std::string why = addressRefusal(*ip, transfer->policy->allowed_networks);
  if (why.empty() && transfer->policy->socket_guard && !transfer->policy->socket_guard(*ip)) {
    why = formatIpAddress(*ip) + " was refused by the test's socket guard";
  }
  if (!why.empty()) {
    if (transfer->refusal.empty()) transfer->refusal = why;
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

struct EasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct FileCloser {
  void operator()(FILE* file) const { std::fclose(file); }
};

bool passingStatus(long status) {
  return status >= 500 || status == 408 || status == 429 || status == 401 || status == 403 || status == 404;
}
bool redirectStatus(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

Expected<std::string> percentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\0') return invalidArgument("a NUL byte at offset " + std::to_string(i));
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int high = i + 1 < text.size() ? hexValue(text[i + 1]) : -1;
    int low = i + 2 < text.size() ? hexValue(text[i + 2]) : -1;
    if (high < 0 || low < 0) {
      return invalidArgument("bad percent escape at offset " + std::to_string(i) +
                             " ('%' must be followed by two hex digits)");
    }
    if (high == 0 && low == 0) return invalidArgument("percent escape %00 (a NUL byte) at offset " + std::to_string(i));
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

std::string redactLocation(std::string_view location) {
  location = location.substr(0, location.find_first_of("?#"));
  std::string out;
  size_t scheme_end = location.find("://");
  if (scheme_end != std::string_view::npos) {
    size_t authority = scheme_end + 3;
    size_t slash = location.find('/', authority);
    std::string_view host_part =
        location.substr(authority, slash == std::string_view::npos ? slash : slash - authority);
    size_t at = host_part.rfind('@');
    out = std::string(location.substr(0, authority));
    if (at != std::string_view::npos) authority += at + 1;
    out += location.substr(authority);
  } else {
    out = std::string(location);
  }
  for (char& ch : out) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '_';
  }
  constexpr size_t kMax = 200;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

UploadPolicy uploadPolicyFrom(const config::Config& config) {
  const config::Uploads& uploads = config.uploads;
  UploadPolicy policy;
  for (const std::string& root : config::splitList(uploads.file_roots)) {
    if (root.starts_with('/')) policy.file_roots.push_back(root);
  }
  for (const std::string& host : config::splitList(uploads.http_hosts)) policy.http_hosts.push_back(lower(host));
  policy.allow_plain_http = uploads.allow_plain_http;
  for (const std::string& entry : config::splitList(uploads.allowed_networks)) {
    if (auto network = parseIpNetwork(entry)) policy.allowed_networks.push_back(*network);
  }
  policy.max_redirects = uploads.max_redirects;
  policy.connect_timeout_ms = uploads.connect_timeout_ms;
  policy.total_timeout_ms = uploads.total_timeout_ms;
  policy.low_speed_bytes_per_s = uploads.low_speed_bytes_per_s;
  policy.low_speed_time_s = uploads.low_speed_time_s;
  policy.scratch_dir = scratchDirFor(config);
  return policy;
}

Expected<CheckedLocation> checkUploadLocation(const std::string& location, const UploadPolicy& policy, bool redirect) {
  // libcurl and the file system see a C string: what follows a NUL byte would be checked here but
  // not used there.
  if (location.find('\0') != std::string::npos) {
    return invalidArgument("upload location " + redactLocation(location) + " is refused: it contains a NUL byte");
  }
  if (hasScheme(location, "https")) return checkHttp(location, policy, true);
  if (hasScheme(location, "http")) return checkHttp(location, policy, false);
  if (!redirect && hasScheme(location, "file")) return checkFile(location, policy);
  return invalidArgument("upload location " + redactLocation(location) + " is refused: it must be " +
                         (redirect ? "http:// or https://" : "file://, http:// or https://"));
}

Expected<FetchedUpload> fetchUpload(const std::string& location, const UploadPolicy& policy, uint64_t max_bytes) {
  auto checked = checkUploadLocation(location, policy);
  if (!checked) return checked.error();
  FetchedUpload fetched;
  if (checked->is_file) {
    fetched.path = checked->path;
    return fetched;
  }
  auto dir = TempDir::create("restack-download-", policy.scratch_dir);
  if (!dir) return dir.error();
  fetched.holder.emplace(std::move(*dir));
  const std::string target = fetched.holder->path() + "/upload";
  const std::string origin = checked->display;  // what the messages name
  const std::string protocols = policy.allow_plain_http ? "http,https" : "https";
  const auto deadline = Clock::now() + std::chrono::milliseconds(policy.total_timeout_ms);

  CheckedLocation hop = std::move(*checked);
  for (uint32_t redirects = 0;; ++redirects) {
    const std::string where =
        "upload location " + origin + (redirects == 0 ? "" : " (redirected to " + hop.display + ")");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      return unavailable(where + ": did not finish within uploads.total_timeout_ms (" +
                         std::to_string(policy.total_timeout_ms) + " ms)");
    }
    std::unique_ptr<FILE, FileCloser> file(std::fopen(target.c_str(), "wb"));
    if (!file) return ioError("cannot create " + target + ": " + std::strerror(errno));
    std::unique_ptr<CURL, EasyDeleter> curl(curl_easy_init());
    if (!curl) return Error(ErrorCode::kInternal, "libcurl could not start");
    std::unique_ptr<curl_slist, SlistDeleter> resolve;
    for (const std::string& entry : policy.resolve) {
      curl_slist* head = curl_slist_append(resolve.get(), entry.c_str());
      if (!head) return Error(ErrorCode::kInternal, "libcurl could not allocate a list");
      if (!resolve) resolve.reset(head);  // later appends keep the same head
    }
    Transfer transfer;
    transfer.curl = curl.get();
    transfer.policy = &policy;
    transfer.file = file.get();
    transfer.limit = max_bytes;
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, hop.url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, protocols.c_str());
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, protocols.c_str());
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  // redirects are checked and followed below
    curl_easy_setopt(c, CURLOPT_PROXY, "");           // no proxy from the environment: sockets go where checked
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, openSocket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &transfer);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, writeChunk);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::min<int64_t>(policy.connect_timeout_ms, left)));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(left));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(policy.low_speed_bytes_per_s));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(policy.low_speed_time_s));
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(std::min<uint64_t>(max_bytes, INT64_MAX)));
    if (resolve) curl_easy_setopt(c, CURLOPT_RESOLVE, resolve.get());
    if (policy.cancel != nullptr) {
      curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, checkCancel);
      curl_easy_setopt(c, CURLOPT_XFERINFODATA, &transfer);
      curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    const CURLcode code = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);

    if (transfer.over_limit || code == CURLE_FILESIZE_EXCEEDED) {
      return tooLarge(where + " is larger than limits.max_upload_bytes (" + std::to_string(max_bytes) + ")");
    }
    if (transfer.write_failed) {
      return ioError("cannot write the download of " + where + " to " + target + ": " +
                     std::strerror(transfer.write_errno));
    }
    if (code == CURLE_COULDNT_CONNECT && !transfer.refusal.empty()) {
      return invalidArgument(where + " is refused: its host resolved to " + transfer.refusal +
                             " (uploads.allowed_networks can allow such a network)");
    }
    const bool answered = code == CURLE_OK || (code == CURLE_WRITE_ERROR && transfer.unwanted_body);
    if (answered && redirectStatus(status)) {
      char* next = nullptr;
      curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &next);
      if (!next || !*next) {
        return invalidArgument(where + ": the server answered HTTP " + std::to_string(status) + " without a Location");
      }
      if (redirects >= policy.max_redirects) {
        return invalidArgument(where + " is refused: more than uploads.max_redirects (" +
                               std::to_string(policy.max_redirects) + ") redirects");
      }
      auto target_check = checkUploadLocation(next, policy, /*redirect=*/true);
      if (!target_check) {
        return Error(target_check.error().code(), where + " redirects elsewhere: " + target_check.error().message());
      }
      hop = std::move(*target_check);
      continue;
    }
    if (answered && status >= 200 && status <= 299 && code == CURLE_OK) {
      if (std::fflush(file.get()) != 0) return ioError("cannot write " + target + ": " + std::strerror(errno));
      fetched.path = target;
      return fetched;
    }
    if (answered && status >= 100) {
      std::string answer = where + ": the server answered HTTP " + std::to_string(status);
      if (passingStatus(status)) {
        return unavailable(answer + " (a passing failure, or a presigned URL that expired or is not visible yet)");
      }
      return invalidArgument(answer);
    }
    switch (code) {
      case CURLE_ABORTED_BY_CALLBACK:
        return unavailable(where + ": cancelled, the worker is stopping (fetched again after its restart)");
      case CURLE_UNSUPPORTED_PROTOCOL:
        return invalidArgument(where + " is refused: protocol not allowed (" + protocols + ")");
      case CURLE_URL_MALFORMAT:
        return invalidArgument(where + " is refused: not a valid URL");
      case CURLE_OPERATION_TIMEDOUT: {
        // libcurl's clock may end the transfer a few milliseconds before ours says so.
        if (Clock::now() + std::chrono::milliseconds(100) >= deadline) {
          return unavailable(where + ": did not finish within uploads.total_timeout_ms (" +
                             std::to_string(policy.total_timeout_ms) + " ms)");
        }
        curl_off_t connected = 0;
        curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected);
        if (connected == 0) {
          return unavailable(where + ": could not connect within uploads.connect_timeout_ms (" +
                             std::to_string(policy.connect_timeout_ms) + " ms)");
        }
        return unavailable(where + ": slower than uploads.low_speed_bytes_per_s (" +
                           std::to_string(policy.low_speed_bytes_per_s) + ") for uploads.low_speed_time_s (" +
                           std::to_string(policy.low_speed_time_s) + " s)");
      }
      default:
        return unavailable(where + ": " + curl_easy_strerror(code));
    }
  }
}

}  // namespace restack::worker

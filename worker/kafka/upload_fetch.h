// Brings the content of an upload that is referenced by location (the restack.location header of
// a symbol upload) onto local disk: "file:///path" is read in place, "http(s)://…" is downloaded
// with libcurl into a temporary folder. Whoever can write the symbols topics controls that header,
// so every location passes UploadPolicy (config uploads.*, docs/operations.md "Upload
// locations"), which refuses everything by default:
// - file://: only regular files under uploads.file_roots, after resolving symbolic links;
// - http(s)://: only hosts on uploads.http_hosts, https unless uploads.allow_plain_http, redirects
//   followed by hand (each target checked again, at most uploads.max_redirects), and every socket
//   checked after DNS resolution against worker/kafka/address_policy.h (no loopback, private,
//   link-local or metadata address unless inside uploads.allowed_networks), so that DNS
//   rebinding cannot get around the host check; connect, total and low-speed timeouts and a
//   byte cap bound the download.
//
// Errors: a refusal by policy is kInvalidArgument, an exceeded byte cap kTooLarge (both
// permanent); a passing failure (DNS, connect, timeout, HTTP 5xx, 408, 429, and 401/403/404 as an
// expired or not yet visible presigned URL answers) is kUnavailable. Messages never quote fetched
// content nor the URL's query string (presigned URLs carry signatures in it).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "formats/common/status.h"
#include "formats/common/temp_dir.h"
#include "worker/kafka/address_policy.h"

namespace restack::worker {

struct FetchedUpload {
  std::string path;               // a local file to ingest
  std::optional<TempDir> holder;  // owns the download, if one was made
};

struct UploadPolicy {
  std::vector<std::string> file_roots;  // absolute folders
  std::vector<std::string> http_hosts;  // lower-case names, or "*.example.com"
  bool allow_plain_http = false;
  std::vector<IpNetwork> allowed_networks;
  uint32_t max_redirects = 3;
  uint32_t connect_timeout_ms = 10000;
  uint32_t total_timeout_ms = 600000;
  uint64_t low_speed_bytes_per_s = 10240;
  uint32_t low_speed_time_s = 30;
  // Where downloads are written. Default "": TMPDIR. The worker gives a folder of its own that it
  // empties when it starts (worker/kafka/scratch.h).
  std::string scratch_dir;

  // Set by the worker (never from the configuration): once it reads true, a download in progress
  // ends as kUnavailable ("cancelled"), so that a stopping worker does not wait for a slow server.
  const std::atomic<bool>* cancel = nullptr;

  // Tests only (never set from the configuration):
  // CURLOPT_RESOLVE entries "host:port:address", which pin names to addresses without DNS.
  std::vector<std::string> resolve;
  // Asked after the address policy passed, right before a socket is opened; false refuses it.
  // Lets a test make sure that nothing but loopback is ever contacted, whatever the policy says.
  std::function<bool(const IpAddress&)> socket_guard;
};

// The policy of the configuration's uploads section. The config loader has validated every
// entry; one that would not parse here is dropped, which only narrows what is allowed.
UploadPolicy uploadPolicyFrom(const config::Config& config);

// What a location resolves to once the policy has accepted it (no network, no reading).
struct CheckedLocation {
  bool is_file = false;
  std::string path;     // file://: the canonical path of a regular file under a root
  std::string url;      // http(s)://: the URL to request, as libcurl parsed it
  std::string display;  // scheme://host[:port]/path, without user info, query or fragment
};
// Applies the policy to `location` (a redirect target when `redirect`: http(s) only). file://
// locations are resolved on the file system; nothing is fetched.
Expected<CheckedLocation> checkUploadLocation(const std::string& location, const UploadPolicy& policy,
                                              bool redirect = false);

// Percent-decodes `text`; a '%' not followed by two hex digits, or a NUL byte (encoded or not), is
// an error.
Expected<std::string> percentDecode(std::string_view text);

// `location` as it may appear in a message: cut before any query or fragment, user info dropped,
// control bytes replaced, at most 200 characters.
std::string redactLocation(std::string_view location);

Expected<FetchedUpload> fetchUpload(const std::string& location, const UploadPolicy& policy, uint64_t max_bytes);

}  // namespace restack::worker

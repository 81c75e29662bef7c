#include "tests/worker/upload_location_fuzz_entry.h"

#include <cstdlib>
#include <string>

#include "worker/kafka/address_policy.h"
#include "worker/kafka/upload_fetch.h"

namespace restack::worker_test {

using namespace restack::worker;

namespace {

void require(bool property) {
  if (!property) std::abort();
}

const UploadPolicy& closedPolicy() {
  static const UploadPolicy policy;
  return policy;
}

const UploadPolicy& openPolicy() {
  static const UploadPolicy policy = [] {
    UploadPolicy p;
    // A root that does not exist: file:// paths under it are looked up (and not found), nothing
    // else on the file system is.
    p.file_roots = {"/nonexistent/restack-fuzz-root"};
    p.http_hosts = {"allowed.example", "*.storage.example"};
    p.allow_plain_http = true;
    auto networks = parseIpNetworks("10.1.0.0/16,fd00::/8");
    if (networks) p.allowed_networks = *networks;
    return p;
  }();
  return policy;
}

}  // namespace

void fuzzUploadLocation(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  auto decoded = percentDecode(text);
  if (decoded) require(decoded->size() <= text.size() && decoded->find('\0') == std::string::npos);

  const std::string redacted = redactLocation(text);
  require(redacted.find_first_of("?#") == std::string::npos && redacted.size() <= 203);

  if (auto address = parseIpAddress(text)) {
    const std::string formatted = formatIpAddress(*address);
    auto again = parseIpAddress(formatted);
    require(again && *again == *address);
    AddressClass address_class = classifyIpAddress(*address);
    require(addressRefusal(*address, {}).empty() == (address_class == AddressClass::kGlobal));
    require(classifyIpAddress(unmapIpv4(*address)) == address_class);
  }
  if (auto networks = parseIpNetworks(text)) {
    for (const IpNetwork& network : *networks) {
      require(network.prefix <= (network.base.v6 ? 128u : 32u));
      require(networkContains(network, network.base));
      require(addressRefusal(network.base, *networks).empty());
    }
  }

  require(!checkUploadLocation(text, closedPolicy()));
  for (bool redirect : {false, true}) {
    auto checked = checkUploadLocation(text, openPolicy(), redirect);
    if (!checked) {
      require(checked.error().code() != ErrorCode::kInternal);
      continue;
    }
    require(checked->display.find_first_of("?#") == std::string::npos);
    if (checked->is_file) {
      require(!redirect && checked->path.starts_with("/nonexistent/restack-fuzz-root/"));
    } else {
      require(!checked->url.empty() && (checked->url.starts_with("http://") || checked->url.starts_with("https://")));
    }
  }
}

}  // namespace restack::worker_test

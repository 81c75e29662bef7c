// Upload locations (worker/kafka/upload_fetch.h, worker/kafka/address_policy.h): the address
// classification, the uploads.* configuration, file:// and http(s):// policy decisions, and real
// downloads from a loopback server (tests/support/test_http_server.h) that counts every request,
// so that "refused" also means "never contacted". Names other than 127.0.0.1 are pinned with
// CURLOPT_RESOLVE; a socket guard refuses every non-loopback socket, so that even a broken policy
// never connects off this machine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "config/config.h"
#include "formats/common/temp_dir.h"
#include "tests/support/test_http_server.h"
#include "tests/worker/upload_location_fuzz_entry.h"
#include "worker/kafka/address_policy.h"
#include "worker/kafka/scratch.h"
#include "worker/kafka/upload_fetch.h"

namespace restack {
namespace {

namespace fs = std::filesystem;
using worker::AddressClass;
using worker::CheckedLocation;
using worker::FetchedUpload;
using worker::IpAddress;
using worker::UploadPolicy;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

IpAddress address(const std::string& text) {
  auto parsed = worker::parseIpAddress(text);
  EXPECT_TRUE(parsed) << text;
  return parsed.value_or(IpAddress{});
}

// ---------------------------------------------------------------------------------------------
// Address classification

TEST(AddressPolicy, ClassifiesEveryRangeAtItsEdges) {
  struct Case {
    const char* address;
    AddressClass expected;
  };
  const Case cases[] = {
      // IPv4
      {"0.0.0.0", AddressClass::kUnspecified},
      {"0.255.255.255", AddressClass::kUnspecified},
      {"1.0.0.0", AddressClass::kGlobal},
      {"8.8.8.8", AddressClass::kGlobal},
      {"9.255.255.255", AddressClass::kGlobal},
      {"10.0.0.0", AddressClass::kPrivate},
      {"10.255.255.255", AddressClass::kPrivate},
      {"11.0.0.0", AddressClass::kGlobal},
      {"100.63.255.255", AddressClass::kGlobal},
      {"100.64.0.0", AddressClass::kSharedCgnat},
      {"100.127.255.255", AddressClass::kSharedCgnat},
      {"100.128.0.0", AddressClass::kGlobal},
      {"126.255.255.255", AddressClass::kGlobal},
      {"127.0.0.0", AddressClass::kLoopback},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.255.255", AddressClass::kLoopback},
      {"128.0.0.0", AddressClass::kGlobal},
      {"169.253.255.255", AddressClass::kGlobal},
      {"169.254.0.0", AddressClass::kLinkLocal},
      {"169.254.169.254", AddressClass::kLinkLocal},  // cloud metadata
      {"169.254.255.255", AddressClass::kLinkLocal},
      {"169.255.0.0", AddressClass::kGlobal},
      {"172.15.255.255", AddressClass::kGlobal},
      {"172.16.0.0", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"172.32.0.0", AddressClass::kGlobal},
      {"192.0.0.8", AddressClass::kReserved},
      {"192.0.1.255", AddressClass::kGlobal},
      {"192.0.2.1", AddressClass::kDocumentation},
      {"192.88.99.1", AddressClass::kReserved},
      {"192.167.255.255", AddressClass::kGlobal},
      {"192.168.0.0", AddressClass::kPrivate},
      {"192.168.255.255", AddressClass::kPrivate},
      {"192.169.0.0", AddressClass::kGlobal},
      {"198.17.255.255", AddressClass::kGlobal},
      {"198.18.0.0", AddressClass::kReserved},
      {"198.19.255.255", AddressClass::kReserved},
      {"198.20.0.0", AddressClass::kGlobal},
      {"198.51.100.7", AddressClass::kDocumentation},
      {"203.0.113.9", AddressClass::kDocumentation},
      {"223.255.255.255", AddressClass::kGlobal},
      {"224.0.0.0", AddressClass::kMulticast},
      {"239.255.255.255", AddressClass::kMulticast},
      {"240.0.0.0", AddressClass::kReserved},
      {"255.255.255.255", AddressClass::kReserved},
      // IPv6
      {"::", AddressClass::kUnspecified},
      {"::1", AddressClass::kLoopback},
      {"::2", AddressClass::kReserved},
      {"::a9fe:a9fe", AddressClass::kReserved},  // IPv4-compatible
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"::ffff:169.254.169.254", AddressClass::kLinkLocal},
      {"::ffff:10.0.0.1", AddressClass::kPrivate},
      {"::ffff:100.64.0.1", AddressClass::kSharedCgnat},
      {"::ffff:0.0.0.0", AddressClass::kUnspecified},
      {"::ffff:8.8.8.8", AddressClass::kGlobal},
      {"64:ff9b::a9fe:a9fe", AddressClass::kLinkLocal},  // NAT64 of 169.254.169.254
      {"64:ff9b::7f00:1", AddressClass::kLoopback},
      {"64:ff9b::808:808", AddressClass::kGlobal},
      {"64:ff9b:1::1", AddressClass::kReserved},
      {"100::1", AddressClass::kReserved},
      {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kReserved},
      {"2000::", AddressClass::kGlobal},
      {"2001::1", AddressClass::kReserved},  // Teredo
      {"2001:1ff:ffff::", AddressClass::kReserved},
      {"2001:200::", AddressClass::kGlobal},
      {"2001:db8::1", AddressClass::kDocumentation},
      {"2002::1", AddressClass::kReserved},  // 6to4
      {"2606:4700::1111", AddressClass::kGlobal},
      {"3fff::1", AddressClass::kDocumentation},
      {"3fff:1000::", AddressClass::kGlobal},
      {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kGlobal},
      {"4000::", AddressClass::kReserved},
      {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kReserved},
      {"fc00::", AddressClass::kUniqueLocal},
      {"fd12:3456::1", AddressClass::kUniqueLocal},
      {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kUniqueLocal},
      {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kReserved},
      {"fe80::", AddressClass::kLinkLocal},
      {"fe80::1", AddressClass::kLinkLocal},
      {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kLinkLocal},
      {"fec0::1", AddressClass::kReserved},  // site-local
      {"ff02::1", AddressClass::kMulticast},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(worker::classifyIpAddress(address(c.address)), c.expected)
        << c.address << " classified as " << worker::addressClassName(worker::classifyIpAddress(address(c.address)))
        << ", expected " << worker::addressClassName(c.expected);
  }
}

TEST(AddressPolicy, AllowedNetworksOpenExactlyTheirRanges) {
  auto allowed = worker::parseIpNetworks(" 127.0.0.0/8, 10.1.0.0/16 ,fd00::/8,192.168.7.7");
  ASSERT_TRUE(allowed) << allowed.error().message();
  ASSERT_EQ(allowed->size(), 4u);
  auto refusal = [&](const std::string& text) { return worker::addressRefusal(address(text), *allowed); };
  EXPECT_EQ(refusal("127.0.0.1"), "");
  EXPECT_EQ(refusal("127.255.255.255"), "");
  EXPECT_EQ(refusal("::ffff:127.0.0.1"), "");  // the mapped form of an allowed address
  EXPECT_EQ(refusal("10.1.0.0"), "");
  EXPECT_EQ(refusal("10.1.255.255"), "");
  EXPECT_EQ(refusal("10.0.255.255"), "10.0.255.255 is a private address");
  EXPECT_EQ(refusal("10.2.0.0"), "10.2.0.0 is a private address");
  EXPECT_EQ(refusal("fd00::1"), "");
  EXPECT_EQ(refusal("fc00::1"), "fc00::1 is a unique-local address");
  EXPECT_EQ(refusal("192.168.7.7"), "");  // a bare address is one host
  EXPECT_EQ(refusal("192.168.7.8"), "192.168.7.8 is a private address");
  EXPECT_EQ(refusal("169.254.169.254"), "169.254.169.254 is a link-local address");
  EXPECT_EQ(refusal("::1"), "::1 is a loopback address");  // 127.0.0.0/8 does not open ::1
  EXPECT_EQ(refusal("8.8.8.8"), "");
  EXPECT_EQ(worker::addressRefusal(address("127.0.0.1"), {}), "127.0.0.1 is a loopback address");

  auto host_bits = worker::parseIpNetwork("10.1.2.3/16");
  ASSERT_TRUE(host_bits);
  EXPECT_EQ(worker::formatIpAddress(host_bits->base), "10.1.0.0");
  auto everything = worker::parseIpNetwork("0.0.0.0/0");
  ASSERT_TRUE(everything);
  EXPECT_TRUE(worker::networkContains(*everything, address("169.254.169.254")));
  EXPECT_FALSE(worker::networkContains(*everything, address("::1")));  // families never mix

  for (const char* bad : {"10.0.0.0/33", "::/129", "banana", "10.0.0.1/", "1.2.3.4/-1", "1.2.3.4/+8", "10.0.0/8",
                          "1.2.3.4/8/8", "fe80::1%eth0"}) {
    EXPECT_FALSE(worker::parseIpNetwork(bad)) << bad;
  }
  auto bad_list = worker::parseIpNetworks("10.0.0.0/8,nope/3");
  ASSERT_FALSE(bad_list);
  EXPECT_TRUE(contains(bad_list.error().message(), "'nope/3'")) << bad_list.error().message();
}

// ---------------------------------------------------------------------------------------------
// Configuration

constexpr const char* kBrokers = "kafka:\n  brokers: b:9092\n";

TEST(UploadsConfig, DefaultsRefuseEveryLocation) {
  auto config = config::parseConfig(kBrokers, "restack.yaml", {});
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->uploads.file_roots, "");
  EXPECT_EQ(config->uploads.http_hosts, "");
  EXPECT_FALSE(config->uploads.allow_plain_http);
  EXPECT_EQ(config->uploads.allowed_networks, "");
  EXPECT_EQ(config->uploads.max_redirects, 3u);
  EXPECT_EQ(config->uploads.connect_timeout_ms, 10000u);
  EXPECT_EQ(config->uploads.total_timeout_ms, 600000u);
  EXPECT_EQ(config->uploads.low_speed_bytes_per_s, 10240u);
  EXPECT_EQ(config->uploads.low_speed_time_s, 30u);
  EXPECT_EQ(config->uploads.fetch_threads, 2u);
  EXPECT_EQ(config->uploads.fetch_wait_ms, 5000u);
  UploadPolicy policy = worker::uploadPolicyFrom(*config);
  for (const char* location : {"file:///etc/passwd", "https://symbols.example.com/a.zip", "http://127.0.0.1/"}) {
    auto checked = worker::checkUploadLocation(location, policy);
    ASSERT_FALSE(checked) << location;
    EXPECT_EQ(checked.error().code(), ErrorCode::kInvalidArgument) << location;
  }
  EXPECT_TRUE(contains(worker::checkUploadLocation("file:///etc/passwd", policy).error().message(),
                       "uploads.file_roots is empty"));
  EXPECT_TRUE(contains(worker::checkUploadLocation("https://a.example/x", policy).error().message(),
                       "uploads.http_hosts is empty"));
}

TEST(UploadsConfig, KeysFromTheFileAndTheEnvironmentMakeThePolicy) {
  const std::string yaml = std::string(kBrokers) +
                           "uploads:\n"
                           "  file_roots: \"/mnt/symbols, /srv/uploads\"\n"
                           "  http_hosts: \"Symbols.Example.com,*.storage.example.com\"\n"
                           "  allow_plain_http: true\n"
                           "  allowed_networks: \"10.1.0.0/16, fd00::/8\"\n"
                           "  max_redirects: 0\n"
                           "  connect_timeout_ms: 500\n"
                           "  total_timeout_ms: 2000\n"
                           "  low_speed_bytes_per_s: 100\n"
                           "  low_speed_time_s: 2\n"
                           "  fetch_threads: 4\n"
                           "  fetch_wait_ms: 0\n";
  auto config = config::parseConfig(yaml, "restack.yaml", {"RESTACK_UPLOADS__MAX_REDIRECTS=5"});
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->uploads.fetch_threads, 4u);
  EXPECT_EQ(config->uploads.fetch_wait_ms, 0u);
  UploadPolicy policy = worker::uploadPolicyFrom(*config);
  EXPECT_EQ(policy.file_roots, (std::vector<std::string>{"/mnt/symbols", "/srv/uploads"}));
  EXPECT_EQ(policy.http_hosts, (std::vector<std::string>{"symbols.example.com", "*.storage.example.com"}));
  EXPECT_TRUE(policy.allow_plain_http);
  ASSERT_EQ(policy.allowed_networks.size(), 2u);
  EXPECT_EQ(worker::formatIpAddress(policy.allowed_networks[1].base), "fd00::");
  EXPECT_EQ(policy.allowed_networks[1].prefix, 8u);
  EXPECT_EQ(policy.max_redirects, 5u);
  EXPECT_EQ(policy.connect_timeout_ms, 500u);
  EXPECT_EQ(policy.total_timeout_ms, 2000u);
  EXPECT_EQ(policy.low_speed_bytes_per_s, 100u);
  EXPECT_EQ(policy.low_speed_time_s, 2u);
}

TEST(UploadsConfig, BadValuesAndTheRemovedUploadRootAreRefusedAtLoad) {
  struct Case {
    std::string yaml;
    std::string message;
  };
  const Case cases[] = {
      {"worker:\n  upload_root: /data\n", "worker.upload_root was removed: use uploads.file_roots"},
      {"uploads:\n  file_roots: \"/ok,relative/path\"\n", "'relative/path' is not an absolute path"},
      {"uploads:\n  allowed_networks: \"10.0.0.0/33\"\n", "uploads.allowed_networks: '10.0.0.0/33'"},
      {"uploads:\n  allowed_networks: \"intranet\"\n", "'intranet' is not an IPv4 or IPv6 network"},
      {"uploads:\n  http_hosts: \"https://a.example\"\n", "is not a host name"},
      {"uploads:\n  allow_plain_http: yes\n", "uploads.allow_plain_http must be true or false"},
      {"uploads:\n  max_redirects: 50\n", "uploads.max_redirects must be a whole number from 0 to 20"},
      {"uploads:\n  file_roots: [/a, /b]\n", "must be a single value"},
      {"uploads:\n  fetch_threads: 0\n", "uploads.fetch_threads must be a whole number from 1 to 64"},
  };
  for (const Case& c : cases) {
    auto config = config::parseConfig(std::string(kBrokers) + c.yaml, "restack.yaml", {});
    ASSERT_FALSE(config) << c.yaml;
    EXPECT_TRUE(contains(config.error().message(), c.message)) << config.error().message();
  }
  auto from_environment = config::parseConfig(kBrokers, "restack.yaml", {"RESTACK_WORKER__UPLOAD_ROOT=/data"});
  ASSERT_FALSE(from_environment);
  EXPECT_TRUE(contains(from_environment.error().message(), "uploads.file_roots"));
}

TEST(UploadsConfig, SplitListTrimsAndDropsEmptyEntries) {
  EXPECT_EQ(config::splitList(""), std::vector<std::string>{});
  EXPECT_EQ(config::splitList(" , ,"), std::vector<std::string>{});
  EXPECT_EQ(config::splitList(" a ,b,, c\t"), (std::vector<std::string>{"a", "b", "c"}));
}

// ---------------------------------------------------------------------------------------------
// file:// locations

TEST(PercentDecode, DecodesOrRefusesWithoutThrowing) {
  EXPECT_EQ(worker::percentDecode("/a%20b%2Fc%41").value(), "/a b/cA");
  for (const std::string& bad :
       std::vector<std::string>{"%zz", "%", "%4", "/x%g1", "%00", "a%0", std::string("/a\0b", 4)}) {
    auto decoded = worker::percentDecode(bad);
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error().code(), ErrorCode::kInvalidArgument);
  }
}

class FileLocations : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("restack-upload-roots-");
    ASSERT_TRUE(dir);
    holder_.emplace(std::move(*dir));
    base_ = fs::canonical(holder_->path());
    root_ = base_ / "root";
    fs::create_directories(root_ / "sub");
    fs::create_directories(base_ / "outside");
    std::ofstream(root_ / "sub" / "app.sym") << "symbols";
    std::ofstream(root_ / "a b.sym") << "symbols";
    std::ofstream(base_ / "outside" / "secret") << "secret";
    fs::create_symlink("/etc/passwd", root_ / "passwd-link");
    fs::create_symlink(base_ / "outside", root_ / "outside-link");
    fs::create_symlink(root_ / "sub" / "app.sym", root_ / "inside-link");
    fs::create_symlink(root_, base_ / "root-alias");
    policy_.file_roots = {root_.string()};
  }
  Expected<CheckedLocation> check(const std::string& location) {
    return worker::checkUploadLocation(location, policy_);
  }
  void expectRefused(const std::string& location, ErrorCode code, const std::string& message) {
    auto checked = check(location);
    ASSERT_FALSE(checked) << location << " was accepted as " << checked->path;
    EXPECT_EQ(checked.error().code(), code) << checked.error().describe();
    EXPECT_TRUE(contains(checked.error().message(), message)) << checked.error().message();
    // The reading path refuses the same way (and fetchUpload never throws).
    auto fetched = worker::fetchUpload(location, policy_, 1 << 20);
    ASSERT_FALSE(fetched);
    EXPECT_EQ(fetched.error().code(), code);
  }

  std::optional<TempDir> holder_;
  fs::path base_;
  fs::path root_;
  UploadPolicy policy_;
};

TEST_F(FileLocations, RegularFilesUnderARootAreReadInPlace) {
  auto checked = check("file://" + (root_ / "sub" / "app.sym").string());
  ASSERT_TRUE(checked) << checked.error().message();
  EXPECT_TRUE(checked->is_file);
  EXPECT_EQ(checked->path, (root_ / "sub" / "app.sym").string());
  auto localhost = check("file://localhost" + (root_ / "a%20b.sym").string());
  ASSERT_TRUE(localhost) << localhost.error().message();
  EXPECT_EQ(localhost->path, (root_ / "a b.sym").string());
  // A symbolic link that stays inside the root, and the root named through a link to it.
  auto inside = check("file://" + (root_ / "inside-link").string());
  ASSERT_TRUE(inside) << inside.error().message();
  EXPECT_EQ(inside->path, (root_ / "sub" / "app.sym").string());
  auto alias = check("file://" + (base_ / "root-alias" / "sub" / "app.sym").string());
  ASSERT_FALSE(alias);  // the alias is not a configured root
  policy_.file_roots = {(base_ / "root-alias").string() + "/"};
  auto via_alias_root = check("file://" + (root_ / "sub" / "app.sym").string());
  ASSERT_TRUE(via_alias_root) << via_alias_root.error().message();

  auto fetched = worker::fetchUpload("file://" + (root_ / "sub" / "app.sym").string(), policy_, 1 << 20);
  ASSERT_TRUE(fetched) << fetched.error().message();
  EXPECT_FALSE(fetched->holder);
  EXPECT_EQ(fetched->path, (root_ / "sub" / "app.sym").string());
}

TEST_F(FileLocations, EverythingElseIsRefused) {
  expectRefused("file:///etc/passwd", ErrorCode::kInvalidArgument, "outside uploads.file_roots");
  expectRefused("file://" + (base_ / "outside" / "secret").string(), ErrorCode::kInvalidArgument,
                "outside uploads.file_roots");
  expectRefused("file://" + (root_ / ".." / "outside" / "secret").string(), ErrorCode::kInvalidArgument,
                "contains '..'");
  expectRefused("file://" + (root_ / "sub" / "%2E%2E" / "%2e%2e" / "outside" / "secret").string(),
                ErrorCode::kInvalidArgument, "contains '..'");
  expectRefused("file://" + (root_ / "passwd-link").string(), ErrorCode::kInvalidArgument,
                "through a symbolic link to a path outside");
  expectRefused("file://" + (root_ / "outside-link" / "secret").string(), ErrorCode::kInvalidArgument,
                "through a symbolic link to a path outside");
  expectRefused("file://" + root_.string(), ErrorCode::kInvalidArgument, "outside uploads.file_roots");
  expectRefused("file://" + (root_ / "sub").string(), ErrorCode::kInvalidArgument, "not a regular file");
  expectRefused("file://" + (root_ / "missing.sym").string(), ErrorCode::kUnavailable, "does not exist");
  expectRefused("file:///%zz", ErrorCode::kInvalidArgument, "bad percent escape");
  expectRefused("file://" + root_.string() + "/%zz", ErrorCode::kInvalidArgument, "bad percent escape");
  expectRefused("file://" + root_.string() + "/a%00b", ErrorCode::kInvalidArgument, "NUL");
  expectRefused("file://" + root_.string() + "/x?y", ErrorCode::kInvalidArgument, "percent-encoded");
  expectRefused("file://" + (root_ / "sub" / "app.sym").string() + std::string("\0/../x", 6),
                ErrorCode::kInvalidArgument, "NUL byte");
  expectRefused("file://otherhost" + root_.string() + "/a.sym", ErrorCode::kInvalidArgument, "absolute path");
  expectRefused("file://relative/path", ErrorCode::kInvalidArgument, "absolute path");
  expectRefused("ftp://example.com/x", ErrorCode::kInvalidArgument, "file://, http:// or https://");
  expectRefused("file://" + (root_ / "outside-link" / "no-such-file").string(), ErrorCode::kInvalidArgument,
                "through a symbolic link to a path outside");
  // Outside the roots, whether the file exists is not revealed.
  auto missing_outside = check("file:///etc/no-such-file");
  ASSERT_FALSE(missing_outside);
  EXPECT_EQ(missing_outside.error().code(), ErrorCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// http(s):// decisions without a network

UploadPolicy hostsPolicy() {
  UploadPolicy policy;
  policy.http_hosts = {"symbols.example.com", "*.storage.example.com", "[2001:db8::5]"};
  return policy;
}

TEST(HttpLocations, OnlyAllowlistedHostsOverHttpsPass) {
  UploadPolicy policy = hostsPolicy();
  for (const char* ok :
       {"https://symbols.example.com/a.zip", "HTTPS://SYMBOLS.Example.COM/a.zip", "https://symbols.example.com./a.zip",
        "https://a.storage.example.com/x", "https://a.b.storage.example.com:8443/x?sig=1",
        "https://user:pw@symbols.example.com/a", "https://[2001:db8::5]/a"}) {
    auto checked = worker::checkUploadLocation(ok, policy);
    EXPECT_TRUE(checked) << ok << ": " << checked.error().message();
  }
  for (const char* refused :
       {"https://storage.example.com/x", "https://badstorage.example.com/x", "https://symbols.example.com.evil/x",
        "https://evil.example/x", "https://127.0.0.1/x", "https://symbols.example.com@evil.example/x",
        "https://evil.example#@symbols.example.com/", "https://%65vil.example/x", "https:///x",
        "https://[2001:db8::6]/a", "http://symbols.example.com/x"}) {
    auto checked = worker::checkUploadLocation(refused, policy);
    ASSERT_FALSE(checked) << refused << " was accepted as " << checked->url;
    EXPECT_EQ(checked.error().code(), ErrorCode::kInvalidArgument) << refused;
  }
  auto with_nul = worker::checkUploadLocation(std::string("https://symbols.example.com\0.evil.example/", 42), policy);
  ASSERT_FALSE(with_nul);
  EXPECT_TRUE(contains(with_nul.error().message(), "NUL byte")) << with_nul.error().message();
  // libcurl decodes a percent-encoded host; what is checked is the name that is requested.
  auto encoded = worker::checkUploadLocation("https://sym%62ols.example.com/x", policy);
  ASSERT_TRUE(encoded) << encoded.error().message();
  EXPECT_EQ(encoded->url, "https://symbols.example.com/x");
  EXPECT_TRUE(contains(worker::checkUploadLocation("http://symbols.example.com/x", policy).error().message(),
                       "uploads.allow_plain_http is false"));
  policy.allow_plain_http = true;
  EXPECT_TRUE(worker::checkUploadLocation("http://symbols.example.com/x", policy));
}

TEST(HttpLocations, MessagesNeverCarryTheQueryOrUserInfo) {
  UploadPolicy policy = hostsPolicy();
  auto refused = worker::checkUploadLocation(
      "https://user:hunter2@evil.example/bucket/a.zip?X-Amz-Signature=SIGSECRET&X-Amz-Credential=CREDSECRET#frag",
      policy);
  ASSERT_FALSE(refused);
  const std::string& message = refused.error().message();
  EXPECT_TRUE(contains(message, "https://evil.example/bucket/a.zip")) << message;
  for (const char* secret : {"SIGSECRET", "CREDSECRET", "hunter2", "frag", "?"}) {
    EXPECT_FALSE(contains(message, secret)) << secret << " in: " << message;
  }
  auto accepted = worker::checkUploadLocation("https://symbols.example.com/a.zip?sig=SIGSECRET", policy);
  ASSERT_TRUE(accepted);
  EXPECT_EQ(accepted->display, "https://symbols.example.com/a.zip");
  EXPECT_TRUE(contains(accepted->url, "sig=SIGSECRET"));  // the request itself keeps it
  EXPECT_EQ(worker::redactLocation("not a url?token=SECRET"), "not a url");
  EXPECT_EQ(worker::redactLocation("https://u:p@h/p\n?x"), "https://h/p_");
}

// ---------------------------------------------------------------------------------------------
// Sockets: the address check on what the resolver answered, before any connection.

// A socket guard that records what passed the policy and lets only loopback through.
struct GuardLog {
  std::mutex mutex;
  std::vector<std::string> addresses;
};
std::function<bool(const IpAddress&)> loopbackOnlyGuard(std::shared_ptr<GuardLog> log) {
  return [log](const IpAddress& ip) {
    std::lock_guard lock(log->mutex);
    log->addresses.push_back(worker::formatIpAddress(ip));
    return worker::classifyIpAddress(ip) == AddressClass::kLoopback;
  };
}

TEST(UploadSockets, PrivateLinkLocalAndMetadataAnswersAreRefusedBeforeConnecting) {
  auto log = std::make_shared<GuardLog>();
  UploadPolicy policy;
  policy.http_hosts = {"*.test"};
  policy.allow_plain_http = true;
  policy.connect_timeout_ms = 2000;
  policy.total_timeout_ms = 5000;
  policy.socket_guard = loopbackOnlyGuard(log);
  struct Case {
    std::string name;
    std::string address;
    std::string refusal;
  };
  const Case cases[] = {
      {"metadata.test", "169.254.169.254", "169.254.169.254 is a link-local address"},
      {"private.test", "10.0.0.1", "10.0.0.1 is a private address"},
      {"private172.test", "172.16.5.4", "172.16.5.4 is a private address"},
      {"cgnat.test", "100.64.0.1", "100.64.0.1 is a shared (CGNAT) address"},
      {"unspecified.test", "0.0.0.0", "0.0.0.0 is an unspecified address"},
      {"loopback.test", "127.0.0.1", "127.0.0.1 is a loopback address"},
      {"ula.test", "[fd00::1]", "fd00::1 is a unique-local address"},
      {"linklocal6.test", "[fe80::1]", "fe80::1 is a link-local address"},
      {"mapped.test", "[::ffff:169.254.169.254]", "::ffff:169.254.169.254 is a link-local address"},
  };
  for (const Case& c : cases) {
    for (const char* scheme : {"http", "https"}) {
      const int port = std::string(scheme) == "http" ? 80 : 443;
      policy.resolve = {c.name + ":" + std::to_string(port) + ":" + c.address};
      const auto start = std::chrono::steady_clock::now();
      auto fetched = worker::fetchUpload(std::string(scheme) + "://" + c.name + "/latest/meta-data/", policy, 1 << 20);
      const auto took = std::chrono::steady_clock::now() - start;
      ASSERT_FALSE(fetched) << c.name;
      EXPECT_EQ(fetched.error().code(), ErrorCode::kInvalidArgument) << fetched.error().describe();
      EXPECT_TRUE(contains(fetched.error().message(), c.refusal)) << fetched.error().message();
      EXPECT_TRUE(contains(fetched.error().message(), "uploads.allowed_networks")) << fetched.error().message();
      EXPECT_LT(took, std::chrono::seconds(2)) << c.name;
    }
  }
  EXPECT_TRUE(log->addresses.empty()) << "passed the policy: " << log->addresses.front();

  // Opening a network lets the socket through the policy, to the guard, which keeps this test on
  // loopback: the guard saw the address, so the policy would have connected.
  policy.allowed_networks = worker::parseIpNetworks("10.0.0.0/8").value();
  policy.resolve = {"private.test:80:10.0.0.1"};
  auto fetched = worker::fetchUpload("http://private.test/x", policy, 1 << 20);
  ASSERT_FALSE(fetched);
  EXPECT_TRUE(contains(fetched.error().message(), "socket guard")) << fetched.error().message();
  ASSERT_EQ(log->addresses.size(), 1u);
  EXPECT_EQ(log->addresses[0], "10.0.0.1");
}

// ---------------------------------------------------------------------------------------------
// Real downloads from a loopback server

class LoopbackDownloads : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.started());
    const std::string port = std::to_string(server_.port());
    policy_.http_hosts = {"allowed.test"};
    policy_.allow_plain_http = true;
    policy_.allowed_networks = worker::parseIpNetworks("127.0.0.0/8").value();
    policy_.resolve = {"allowed.test:" + port + ":127.0.0.1", "other.test:" + port + ":127.0.0.1"};
    policy_.socket_guard = loopbackOnlyGuard(log_);
    policy_.connect_timeout_ms = 2000;
    policy_.total_timeout_ms = 20000;
    policy_.low_speed_bytes_per_s = 1;
    policy_.low_speed_time_s = 10;
  }
  std::string url(const std::string& path, const std::string& host = "allowed.test") { return server_.url(host, path); }
  Expected<FetchedUpload> fetch(const std::string& path, uint64_t max_bytes = 1 << 20) {
    return worker::fetchUpload(url(path), policy_, max_bytes);
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  test::TestHttpServer server_;
  std::shared_ptr<GuardLog> log_ = std::make_shared<GuardLog>();
  UploadPolicy policy_;
};

TEST_F(LoopbackDownloads, AnAllowedHostIsDownloadedIntoATemporaryFolder) {
  server_.serveBody("/a.zip", "PK symbol bytes");
  std::string folder;
  {
    auto fetched = worker::fetchUpload(url("/a.zip") + "?X-Amz-Signature=abc", policy_, 1 << 20);
    ASSERT_TRUE(fetched) << fetched.error().message();
    ASSERT_TRUE(fetched->holder);
    EXPECT_EQ(read(fetched->path), "PK symbol bytes");
    folder = fetched->holder->path();
    EXPECT_TRUE(fs::exists(folder));
  }
  EXPECT_FALSE(fs::exists(folder));  // the download goes with its holder
  EXPECT_EQ(server_.hits("/a.zip"), 1u);
  EXPECT_EQ(server_.hostHeaders().back(), "allowed.test:" + std::to_string(server_.port()));
}

// The worker's policy downloads into its scratch folder, which its next start empties: a download
// a killed worker left half written is not left for good.
TEST_F(LoopbackDownloads, TheWorkersDownloadsGoIntoItsScratchFolder) {
  auto base = TempDir::create("restack-scratch-test-");
  ASSERT_TRUE(base);
  policy_.scratch_dir = base->path() + "/scratch";
  ASSERT_TRUE(worker::resetScratchDir(policy_.scratch_dir));
  server_.serveBody("/a.zip", "PK symbol bytes");
  auto fetched = fetch("/a.zip");
  ASSERT_TRUE(fetched) << fetched.error().message();
  ASSERT_TRUE(fetched->holder);
  EXPECT_EQ(fs::path(fetched->holder->path()).parent_path(), fs::path(policy_.scratch_dir));
  EXPECT_EQ(read(fetched->path), "PK symbol bytes");
}

TEST(ScratchFolder, OnePerStoreUnderTmpdirAndAResetEmptiesIt) {
  config::Config a;
  a.store.path = "/var/lib/restack/store";
  config::Config same = a;
  same.store.path = "/var/lib/restack/../restack/store";
  config::Config other = a;
  other.store.path = "/var/lib/restack/store-2";
  const std::string dir = worker::scratchDirFor(a);
  EXPECT_EQ(dir, worker::scratchDirFor(same));
  EXPECT_NE(dir, worker::scratchDirFor(other));
  EXPECT_EQ(fs::path(dir).parent_path(), fs::temp_directory_path());
  EXPECT_TRUE(fs::path(dir).filename().string().starts_with("restack-scratch-")) << dir;

  auto base = TempDir::create("restack-scratch-test-");
  ASSERT_TRUE(base);
  const std::string scratch = base->path() + "/nested/scratch";
  auto created = worker::resetScratchDir(scratch);
  ASSERT_TRUE(created) << created.error().message();
  EXPECT_EQ(*created, 0u);
  EXPECT_TRUE(fs::is_directory(scratch));
  // What a killed run leaves: a download folder with its partial file, and a loose file.
  fs::create_directories(scratch + "/restack-download-x1y2z3");
  std::ofstream(scratch + "/restack-download-x1y2z3/upload") << "half an upl";
  std::ofstream(scratch + "/stray") << "x";
  auto emptied = worker::resetScratchDir(scratch);
  ASSERT_TRUE(emptied) << emptied.error().message();
  EXPECT_EQ(*emptied, 2u);
  EXPECT_TRUE(fs::is_directory(scratch));
  EXPECT_TRUE(fs::is_empty(scratch));
  // A path that cannot be a folder is an error, not a crash.
  std::ofstream(base->path() + "/file") << "x";
  auto refused = worker::resetScratchDir(base->path() + "/file/scratch");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("scratch folder"), std::string::npos) << refused.error().message();
}

TEST_F(LoopbackDownloads, ProxiesFromTheEnvironmentAreNotUsed) {
  // A proxy would be a socket to somewhere other than the checked host.
  test::TestHttpServer proxy;
  ASSERT_TRUE(proxy.started());
  server_.serveBody("/a.zip", "direct");
  const std::string proxy_url = proxy.url("");
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"}) {
    setenv(name, proxy_url.c_str(), 1);
  }
  auto fetched = fetch("/a.zip");
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"}) unsetenv(name);
  ASSERT_TRUE(fetched) << fetched.error().message();
  EXPECT_EQ(read(fetched->path), "direct");
  EXPECT_EQ(proxy.totalHits(), 0u);
  EXPECT_EQ(server_.hits("/a.zip"), 1u);
}

TEST_F(LoopbackDownloads, RefusedLocationsAreNeverContacted) {
  server_.serveBody("/a.zip", "content");
  struct Case {
    std::string location;
    std::string message;
  };
  const Case cases[] = {
      {url("/a.zip", "127.0.0.1"), "127.0.0.1 is not on uploads.http_hosts"},
      {url("/a.zip", "other.test"), "other.test is not on uploads.http_hosts"},
      {url("/a.zip", "localhost"), "localhost is not on uploads.http_hosts"},
  };
  for (const Case& c : cases) {
    auto fetched = worker::fetchUpload(c.location, policy_, 1 << 20);
    ASSERT_FALSE(fetched) << c.location;
    EXPECT_EQ(fetched.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(fetched.error().message(), c.message)) << fetched.error().message();
  }
  // On the allowlist, but loopback is not an allowed network.
  UploadPolicy closed = policy_;
  closed.allowed_networks.clear();
  auto loopback = worker::fetchUpload(url("/a.zip"), closed, 1 << 20);
  ASSERT_FALSE(loopback);
  EXPECT_EQ(loopback.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(loopback.error().message(), "127.0.0.1 is a loopback address")) << loopback.error().message();
  // Plain http when it is off.
  closed = policy_;
  closed.allow_plain_http = false;
  auto plain = worker::fetchUpload(url("/a.zip"), closed, 1 << 20);
  ASSERT_FALSE(plain);
  EXPECT_TRUE(contains(plain.error().message(), "uploads.allow_plain_http")) << plain.error().message();
  EXPECT_EQ(server_.totalHits(), 0u);
}

TEST_F(LoopbackDownloads, RedirectsAreFollowedOnlyToAllowedTargets) {
  server_.serveBody("/final.zip", "final bytes");
  server_.serveRedirect("/one", url("/two"), 301);
  server_.serveRedirect("/two", "/final.zip", 307);  // relative
  auto fetched = fetch("/one");
  ASSERT_TRUE(fetched) << fetched.error().message();
  EXPECT_EQ(read(fetched->path), "final bytes");

  server_.serveBody("/secret", "internal");
  server_.serveRedirect("/to-other", url("/secret", "other.test"));
  auto other = fetch("/to-other");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(other.error().message(), "other.test is not on uploads.http_hosts")) << other.error().message();
  EXPECT_EQ(server_.hits("/to-other"), 1u);

  server_.serveRedirect("/to-file", "file:///etc/passwd");
  auto file = fetch("/to-file");
  ASSERT_FALSE(file);
  EXPECT_TRUE(contains(file.error().message(), "must be http:// or https://")) << file.error().message();

  server_.serveRedirect("/to-metadata", "http://169.254.169.254/latest/meta-data/");
  auto metadata = fetch("/to-metadata");
  ASSERT_FALSE(metadata);
  EXPECT_EQ(metadata.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(server_.hits("/secret"), 0u);
  EXPECT_EQ(log_->addresses, std::vector<std::string>(log_->addresses.size(), "127.0.0.1"));
}

TEST_F(LoopbackDownloads, ARedirectLoopEndsAtMaxRedirects) {
  server_.serveRedirect("/a", "/b");
  server_.serveRedirect("/b", "/a");
  policy_.max_redirects = 3;
  auto fetched = fetch("/a");
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(fetched.error().message(), "more than uploads.max_redirects (3)")) << fetched.error().message();
  EXPECT_EQ(server_.hits("/a") + server_.hits("/b"), 4u);  // the first request and three redirects

  policy_.max_redirects = 0;
  auto none = fetch("/a");
  ASSERT_FALSE(none);
  EXPECT_EQ(server_.hits("/a") + server_.hits("/b"), 5u);
}

TEST_F(LoopbackDownloads, ATricklingServerHitsTheLowSpeedLimit) {
  server_.serveTrickle("/slow", 1 << 20, 200);
  policy_.low_speed_bytes_per_s = 2000;
  policy_.low_speed_time_s = 1;
  const auto start = std::chrono::steady_clock::now();
  auto fetched = fetch("/slow", 8 << 20);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().code(), ErrorCode::kUnavailable) << fetched.error().describe();
  EXPECT_TRUE(contains(fetched.error().message(), "uploads.low_speed_bytes_per_s")) << fetched.error().message();
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(LoopbackDownloads, ASteadyButEndlessDownloadHitsTheTotalTimeout) {
  server_.serveTrickle("/long", 1 << 30, 20000);
  policy_.low_speed_bytes_per_s = 100;
  policy_.low_speed_time_s = 1;
  policy_.total_timeout_ms = 1500;
  const auto start = std::chrono::steady_clock::now();
  auto fetched = fetch("/long", 2ull << 30);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().code(), ErrorCode::kUnavailable) << fetched.error().describe();
  EXPECT_TRUE(contains(fetched.error().message(), "uploads.total_timeout_ms (1500 ms)")) << fetched.error().message();
  EXPECT_GE(took, std::chrono::milliseconds(1400));
  EXPECT_LT(took, std::chrono::seconds(5));
}

// A stopping worker cancels the downloads under way (UploadPolicy::cancel): a slow but steady one,
// which no timeout of its own would end for minutes, ends within about a second.
TEST_F(LoopbackDownloads, ACancelledDownloadEndsAtOnce) {
  server_.serveTrickle("/steady", 1 << 30, 20000);
  policy_.low_speed_bytes_per_s = 100;
  std::atomic<bool> cancel{false};
  policy_.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  auto fetched = fetch("/steady", 2ull << 30);
  const auto took = std::chrono::steady_clock::now() - start;
  stopper.join();
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().code(), ErrorCode::kUnavailable) << fetched.error().describe();
  EXPECT_TRUE(contains(fetched.error().message(), "cancelled")) << fetched.error().message();
  EXPECT_GE(took, std::chrono::milliseconds(450));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(LoopbackDownloads, StatusCodesMapToPassingOrPermanentFailures) {
  for (int status : {500, 502, 503, 504, 408, 429, 401, 403, 404}) {
    const std::string path = "/status-" + std::to_string(status);
    server_.serveBody(path, "BODY-SECRET-" + std::to_string(status), status);
    auto fetched = fetch(path);
    ASSERT_FALSE(fetched) << status;
    EXPECT_EQ(fetched.error().code(), ErrorCode::kUnavailable) << status << ": " << fetched.error().describe();
    EXPECT_TRUE(contains(fetched.error().message(), "HTTP " + std::to_string(status))) << fetched.error().message();
    EXPECT_FALSE(contains(fetched.error().message(), "BODY-SECRET")) << fetched.error().message();
  }
  for (int status : {400, 405, 410}) {
    const std::string path = "/status-" + std::to_string(status);
    server_.serveBody(path, "BODY-SECRET", status);
    auto fetched = fetch(path);
    ASSERT_FALSE(fetched) << status;
    EXPECT_EQ(fetched.error().code(), ErrorCode::kInvalidArgument) << status;
    EXPECT_FALSE(contains(fetched.error().message(), "BODY-SECRET")) << fetched.error().message();
  }
}

TEST_F(LoopbackDownloads, APassingFailureSucceedsOnALaterTry) {
  server_.serveSequence("/flaky", {{500, "oops", {}}, {503, "busy", {}}, {200, "the symbols", {}}});
  auto first = fetch("/flaky");
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code(), ErrorCode::kUnavailable);
  auto second = fetch("/flaky");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), ErrorCode::kUnavailable);
  auto third = fetch("/flaky");
  ASSERT_TRUE(third) << third.error().message();
  EXPECT_EQ(read(third->path), "the symbols");
  EXPECT_EQ(server_.hits("/flaky"), 3u);
}

TEST_F(LoopbackDownloads, TheByteCapIsPermanent) {
  server_.serveBody("/big", std::string(5000, 'B'));
  auto announced = fetch("/big", 1000);  // Content-Length says too much
  ASSERT_FALSE(announced);
  EXPECT_EQ(announced.error().code(), ErrorCode::kTooLarge) << announced.error().describe();
  EXPECT_TRUE(contains(announced.error().message(), "limits.max_upload_bytes (1000)"));

  server_.serveChunked("/big-chunked", std::string(50000, 'C'));  // learnt only while reading
  auto streamed = fetch("/big-chunked", 10000);
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().code(), ErrorCode::kTooLarge) << streamed.error().describe();
  EXPECT_FALSE(contains(streamed.error().message(), "CCCC"));

  auto exact = fetch("/big", 5000);
  ASSERT_TRUE(exact) << exact.error().message();
  EXPECT_EQ(fs::file_size(exact->path), 5000u);
}

TEST_F(LoopbackDownloads, ConnectionFailuresArePassing) {
  // A port on loopback where nothing listens: bind one, note it, close it.
  int port = 0;
  {
    test::TestHttpServer gone;
    port = gone.port();
  }
  policy_.resolve = {"allowed.test:" + std::to_string(port) + ":127.0.0.1"};
  auto refused = worker::fetchUpload("http://allowed.test:" + std::to_string(port) + "/x", policy_, 1 << 20);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnavailable) << refused.error().describe();
}

// ---------------------------------------------------------------------------------------------
// The fuzz entry point on its checked-in inputs and on deterministic mutations of them.

TEST(UploadLocationFuzz, CheckedInInputsAndMutationsPass) {
  std::vector<std::string> inputs;
  for (const auto& entry :
       fs::directory_iterator(std::string(RESTACK_SOURCE_DIR) + "/tests/worker/upload_location_fuzz_inputs")) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    inputs.push_back(bytes.str());
  }
  ASSERT_GE(inputs.size(), 10u);
  std::mt19937 random(20261123);
  const std::string alphabet = "%/.:@?#[]0123456789abcdefxyzAF\\-_ \x01\xff";
  for (const std::string& input : inputs) {
    worker_test::fuzzUploadLocation(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    for (int round = 0; round < 200; ++round) {
      std::string mutated = input;
      for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
        const size_t at = mutated.empty() ? 0 : random() % mutated.size();
        const char ch = alphabet[random() % alphabet.size()];
        switch (random() % 3) {
          case 0:
            mutated.insert(mutated.begin() + static_cast<long>(at), ch);
            break;
          case 1:
            if (!mutated.empty()) mutated.erase(at, 1);
            break;
          default:
            if (!mutated.empty()) mutated[at] = ch;
        }
      }
      worker_test::fuzzUploadLocation(reinterpret_cast<const uint8_t*>(mutated.data()), mutated.size());
    }
  }
}

}  // namespace
}  // namespace restack

// Which IP addresses an upload download may connect to. Pure functions, no libcurl, so that the
// classification can be tested address by address (tests/worker/upload_fetch_test.cc) and reused
// wherever a socket is about to be opened on behalf of an untrusted URL.
//
// Only globally routable unicast addresses are contacted by default. Refused: loopback,
// unspecified, link-local (169.254.0.0/16 holds the cloud metadata service 169.254.169.254),
// RFC 1918 private, CGNAT 100.64.0.0/10, benchmarking, documentation, multicast, reserved, IPv6
// unique-local fc00::/7, link-local fe80::/10, site-local, everything outside 2000::/3, and the
// IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96,
// IPv4-compatible, 6to4, Teredo). An operator opens ranges with uploads.allowed_networks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"

struct sockaddr;

namespace restack::worker {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 uses the first 4
  bool operator==(const IpAddress&) const = default;
};

struct IpNetwork {
  IpAddress base;  // host bits cleared
  unsigned prefix = 0;
};

enum class AddressClass {
  kGlobal,         // may be contacted
  kUnspecified,    // 0.0.0.0/8, ::
  kLoopback,       // 127.0.0.0/8, ::1
  kPrivate,        // 10/8, 172.16/12, 192.168/16
  kSharedCgnat,    // 100.64.0.0/10
  kLinkLocal,      // 169.254.0.0/16 (cloud metadata), fe80::/10
  kUniqueLocal,    // fc00::/7
  kMulticast,      // 224.0.0.0/4, ff00::/8
  kDocumentation,  // TEST-NETs, 2001:db8::/32, 3fff::/20
  kReserved,       // every other special-purpose range
};

// "127.0.0.1", "::1", "::ffff:10.0.0.1"; nullopt if `text` is not a numeric address.
std::optional<IpAddress> parseIpAddress(std::string_view text);
// "10.0.0.0/8", "fd00::/8"; a bare address is a single host. Host bits are cleared.
std::optional<IpNetwork> parseIpNetwork(std::string_view text);
// A comma-separated list of networks (uploads.allowed_networks); names the first bad entry.
Expected<std::vector<IpNetwork>> parseIpNetworks(std::string_view list);
// From a socket address (AF_INET or AF_INET6); nullopt for other families or short lengths.
std::optional<IpAddress> ipAddressFromSockaddr(const sockaddr* address, size_t length);
std::string formatIpAddress(const IpAddress& address);

// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it stands for; else unchanged.
IpAddress unmapIpv4(const IpAddress& address);
bool networkContains(const IpNetwork& network, const IpAddress& address);

AddressClass classifyIpAddress(const IpAddress& address);
const char* addressClassName(AddressClass address_class);  // "link-local", "private" …

// Empty when `address` may be contacted (global, or inside one of `allowed`); otherwise why not,
// e.g. "169.254.169.254 is a link-local address".
std::string addressRefusal(const IpAddress& address, const std::vector<IpNetwork>& allowed);

}  // namespace restack::worker

#include "worker/kafka/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>

namespace restack::worker {
namespace {

IpAddress ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  IpAddress address;
  address.bytes[0] = a;
  address.bytes[1] = b;
  address.bytes[2] = c;
  address.bytes[3] = d;
  return address;
}

bool isMapped(const IpAddress& address) {
  if (!address.v6) return false;
  for (int i = 0; i < 10; ++i) {
    if (address.bytes[i] != 0) return false;
  }
  return address.bytes[10] == 0xff && address.bytes[11] == 0xff;
}

AddressClass classifyIpv4(const std::array<uint8_t, 16>& b) {
  if (b[0] == 0) return AddressClass::kUnspecified;  // "this network"
  if (b[0] == 10) return AddressClass::kPrivate;
  if (b[0] == 100 && (b[1] & 0xc0) == 64) return AddressClass::kSharedCgnat;
  if (b[0] == 127) return AddressClass::kLoopback;
  if (b[0] == 169 && b[1] == 254) return AddressClass::kLinkLocal;
  if (b[0] == 172 && (b[1] & 0xf0) == 16) return AddressClass::kPrivate;
  if (b[0] == 192 && b[1] == 0 && b[2] == 0) return AddressClass::kReserved;  // IETF protocol assignments
  if (b[0] == 192 && b[1] == 0 && b[2] == 2) return AddressClass::kDocumentation;
  if (b[0] == 192 && b[1] == 88 && b[2] == 99) return AddressClass::kReserved;  // 6to4 relay anycast
  if (b[0] == 192 && b[1] == 168) return AddressClass::kPrivate;
  if (b[0] == 198 && (b[1] & 0xfe) == 18) return AddressClass::kReserved;  // benchmarking
  if (b[0] == 198 && b[1] == 51 && b[2] == 100) return AddressClass::kDocumentation;
  if (b[0] == 203 && b[1] == 0 && b[2] == 113) return AddressClass::kDocumentation;
  if ((b[0] & 0xf0) == 224) return AddressClass::kMulticast;
  if ((b[0] & 0xf0) == 240) return AddressClass::kReserved;  // incl. 255.255.255.255
  return AddressClass::kGlobal;
}

}  // namespace

std::optional<IpAddress> parseIpAddress(std::string_view text) {
  if (text.size() > 64) return std::nullopt;
  std::string copy(text);
  IpAddress address;
  if (inet_pton(AF_INET, copy.c_str(), address.bytes.data()) == 1) return address;
  if (inet_pton(AF_INET6, copy.c_str(), address.bytes.data()) == 1) {
    address.v6 = true;
    return address;
  }
  return std::nullopt;
}

std::optional<IpNetwork> parseIpNetwork(std::string_view text) {
  size_t slash = text.find('/');
  auto address = parseIpAddress(text.substr(0, slash));
  if (!address) return std::nullopt;
  const unsigned bits = address->v6 ? 128 : 32;
  unsigned prefix = bits;
  if (slash != std::string_view::npos) {
    std::string_view digits = text.substr(slash + 1);
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || prefix > bits) {
      return std::nullopt;
    }
  }
  IpNetwork network{*address, prefix};
  for (unsigned bit = prefix; bit < bits; ++bit) {
    network.base.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
  }
  return network;
}

Expected<std::vector<IpNetwork>> parseIpNetworks(std::string_view list) {
  std::vector<IpNetwork> networks;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view entry = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!entry.empty() && (entry.front() == ' ' || entry.front() == '\t')) entry.remove_prefix(1);
    while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t')) entry.remove_suffix(1);
    if (entry.empty()) continue;
    auto network = parseIpNetwork(entry);
    if (!network) {
      return invalidArgument("'" + std::string(entry.substr(0, 64)) +
                             "' is not an IPv4 or IPv6 network (e.g. 10.1.0.0/16, fd00::/8)");
    }
    networks.push_back(*network);
  }
  return networks;
}

std::optional<IpAddress> ipAddressFromSockaddr(const sockaddr* address, size_t length) {
  if (!address) return std::nullopt;
  IpAddress out;
  if (address->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof in);
    std::memcpy(out.bytes.data(), &in.sin_addr, 4);
    return out;
  }
  if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof in6);
    std::memcpy(out.bytes.data(), &in6.sin6_addr, 16);
    out.v6 = true;
    return out;
  }
  return std::nullopt;
}

std::string formatIpAddress(const IpAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(address.v6 ? AF_INET6 : AF_INET, address.bytes.data(), text, sizeof text);
  return text;
}

IpAddress unmapIpv4(const IpAddress& address) {
  if (!isMapped(address)) return address;
  return ipv4(address.bytes[12], address.bytes[13], address.bytes[14], address.bytes[15]);
}

bool networkContains(const IpNetwork& network, const IpAddress& address) {
  if (network.base.v6 != address.v6) return false;
  unsigned full = network.prefix / 8;
  if (std::memcmp(network.base.bytes.data(), address.bytes.data(), full) != 0) return false;
  unsigned rest = network.prefix % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xffu << (8 - rest));
  return (network.base.bytes[full] & mask) == (address.bytes[full] & mask);
}

AddressClass classifyIpAddress(const IpAddress& input) {
  const IpAddress address = unmapIpv4(input);
  const auto& b = address.bytes;
  if (!address.v6) return classifyIpv4(b);

  bool first12_zero = true;
  for (int i = 0; i < 12; ++i) first12_zero = first12_zero && b[i] == 0;
  if (first12_zero) {
    bool last3_zero = b[12] == 0 && b[13] == 0 && b[14] == 0;
    if (last3_zero && b[15] == 0) return AddressClass::kUnspecified;
    if (last3_zero && b[15] == 1) return AddressClass::kLoopback;
    return AddressClass::kReserved;  // IPv4-compatible ::a.b.c.d (deprecated)
  }
  // NAT64 well-known prefix 64:ff9b::/96: the IPv4 address it reaches decides.
  static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b.data(), kNat64, 12) == 0) {
    std::array<uint8_t, 16> v4{};
    std::memcpy(v4.data(), b.data() + 12, 4);
    return classifyIpv4(v4);
  }
  if ((b[0] & 0xfe) == 0xfc) return AddressClass::kUniqueLocal;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::kLinkLocal;
  if (b[0] == 0xff) return AddressClass::kMulticast;
  if ((b[0] & 0xe0) != 0x20) return AddressClass::kReserved;  // outside global unicast 2000::/3
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return AddressClass::kDocumentation;
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] < 0x02) return AddressClass::kReserved;              // 2001::/23, Teredo
  if (b[0] == 0x20 && b[1] == 0x02) return AddressClass::kReserved;                             // 6to4 2002::/16
  if (b[0] == 0x3f && b[1] == 0xff && (b[2] & 0xf0) == 0) return AddressClass::kDocumentation;  // 3fff::/20
  return AddressClass::kGlobal;
}

const char* addressClassName(AddressClass address_class) {
  switch (address_class) {
    case AddressClass::kGlobal:
      return "global";
    case AddressClass::kUnspecified:
      return "unspecified";
    case AddressClass::kLoopback:
      return "loopback";
    case AddressClass::kPrivate:
      return "private";
    case AddressClass::kSharedCgnat:
      return "shared (CGNAT)";
    case AddressClass::kLinkLocal:
      return "link-local";
    case AddressClass::kUniqueLocal:
      return "unique-local";
    case AddressClass::kMulticast:
      return "multicast";
    case AddressClass::kDocumentation:
      return "documentation";
    case AddressClass::kReserved:
      return "reserved";
  }
  return "reserved";
}

std::string addressRefusal(const IpAddress& address, const std::vector<IpNetwork>& allowed) {
  const IpAddress unmapped = unmapIpv4(address);
  for (const IpNetwork& network : allowed) {
    if (networkContains(network, address) || networkContains(network, unmapped)) return "";
  }
  AddressClass address_class = classifyIpAddress(address);
  if (address_class == AddressClass::kGlobal) return "";
  const char* article = address_class == AddressClass::kUnspecified ? " is an " : " is a ";
  return formatIpAddress(address) + article + addressClassName(address_class) + " address";
}

}  // namespace restack::worker

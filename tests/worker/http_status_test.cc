// The /healthz, /readyz, /metrics server on loopback: routes and their answers, many idle
// connections that must not hold up a probe, the bind address, port 0.
#include "worker/kafka/http_status.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace restack::worker {
namespace {

using Clock = std::chrono::steady_clock;

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// A connected TCP socket to `address`:`port`, or -1.
int connectTo(const std::string& address, int port) {
  sockaddr_in v4{};
  sockaddr_in6 v6{};
  int fd = -1;
  int rc = -1;
  if (::inet_pton(AF_INET, address.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(static_cast<uint16_t>(port));
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) rc = ::connect(fd, reinterpret_cast<sockaddr*>(&v4), sizeof v4);
  } else if (::inet_pton(AF_INET6, address.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(static_cast<uint16_t>(port));
    fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) rc = ::connect(fd, reinterpret_cast<sockaddr*>(&v6), sizeof v6);
  }
  if (rc != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

struct Reply {
  int status = 0;  // 0: no answer
  std::string body;
};

// One GET over a fresh connection; gives up after `timeout_ms`.
Reply get(const std::string& address, int port, const std::string& path, int timeout_ms = 5000) {
  Reply reply;
  int fd = connectTo(address, port);
  if (fd < 0) return reply;
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return reply;
  }
  std::string response;
  const int64_t deadline = nowMs() + timeout_ms;
  while (nowMs() < deadline) {
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, static_cast<int>(deadline - nowMs())) <= 0) break;
    char buffer[4096];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (response.starts_with("HTTP/1.1 ") && response.size() >= 12) reply.status = std::stoi(response.substr(9, 3));
  size_t body = response.find("\r\n\r\n");
  if (body != std::string::npos) reply.body = response.substr(body + 4);
  return reply;
}

TEST(HttpStatusServer, AnswersTheProbesAndMetricsAndRefusesTheRest) {
  Metrics metrics;
  metrics.last_loop_ms = nowMs();
  metrics.events_published = 42;
  auto server = HttpStatusServer::start(0, metrics, "127.0.0.1");
  ASSERT_TRUE(server) << server.error().message();
  const int port = (*server)->port();
  EXPECT_GT(port, 0);  // port 0 picked a free port

  EXPECT_EQ(get("127.0.0.1", port, "/healthz").status, 200);
  Reply not_ready = get("127.0.0.1", port, "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.body, "starting\n");
  metrics.ready = true;
  EXPECT_EQ(get("127.0.0.1", port, "/readyz").status, 200);
  Reply scraped = get("127.0.0.1", port, "/metrics");
  EXPECT_EQ(scraped.status, 200);
  EXPECT_EQ(scraped.body, metrics.prometheusText());
  EXPECT_NE(scraped.body.find("42"), std::string::npos) << scraped.body;
  EXPECT_EQ(get("127.0.0.1", port, "/").status, 404);
  EXPECT_EQ(get("127.0.0.1", port, "/healthz/extra").status, 404);

  // A loop that stopped turning fails liveness.
  metrics.last_loop_ms = nowMs() - 16 * 60 * 1000;
  Reply stalled = get("127.0.0.1", port, "/healthz");
  EXPECT_EQ(stalled.status, 503);
  EXPECT_EQ(stalled.body, "worker loop stalled\n");
}

TEST(HttpStatusServer, IdleConnectionsDoNotHoldUpTheProbes) {
  Metrics metrics;
  metrics.last_loop_ms = nowMs();
  auto server = HttpStatusServer::start(0, metrics, "127.0.0.1");
  ASSERT_TRUE(server) << server.error().message();
  const int port = (*server)->port();
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i) {
    int fd = connectTo("127.0.0.1", port);
    ASSERT_GE(fd, 0) << "idle connection " << i;
    idle.push_back(fd);
  }
  // And a few that sent half a request and stopped.
  for (int i = 0; i < 5; ++i) {
    int fd = connectTo("127.0.0.1", port);
    ASSERT_GE(fd, 0);
    ASSERT_GT(::send(fd, "GET /hea", 8, MSG_NOSIGNAL), 0);
    idle.push_back(fd);
  }
  for (int round = 0; round < 3; ++round) {
    const int64_t started = nowMs();
    Reply reply = get("127.0.0.1", port, "/healthz", 1000);
    EXPECT_EQ(reply.status, 200) << "round " << round;
    EXPECT_LT(nowMs() - started, 1000) << "round " << round;
  }
  for (int fd : idle) ::close(fd);
}

TEST(HttpStatusServer, ListensOnlyOnTheBindAddress) {
  Metrics metrics;
  metrics.last_loop_ms = nowMs();
  // Every 127/8 address reaches the loopback interface; a socket bound to one answers only there.
  auto on_two = HttpStatusServer::start(0, metrics, "127.0.0.2");
  ASSERT_TRUE(on_two) << on_two.error().message();
  const int port = (*on_two)->port();
  EXPECT_EQ(get("127.0.0.2", port, "/healthz").status, 200);
  EXPECT_LT(connectTo("127.0.0.1", port), 0);

  auto everywhere = HttpStatusServer::start(0, metrics, "0.0.0.0");
  ASSERT_TRUE(everywhere) << everywhere.error().message();
  EXPECT_EQ(get("127.0.0.1", (*everywhere)->port(), "/healthz").status, 200);
  EXPECT_EQ(get("127.0.0.3", (*everywhere)->port(), "/healthz").status, 200);

  // IPv6 loopback, where the machine has it.
  int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 loopback6{};
  loopback6.sin6_family = AF_INET6;
  loopback6.sin6_addr = in6addr_loopback;
  const bool has_v6 = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&loopback6), sizeof loopback6) == 0;
  if (probe >= 0) ::close(probe);
  if (has_v6) {
    auto v6 = HttpStatusServer::start(0, metrics, "::1");
    ASSERT_TRUE(v6) << v6.error().message();
    EXPECT_EQ(get("::1", (*v6)->port(), "/healthz").status, 200);
    EXPECT_LT(connectTo("127.0.0.1", (*v6)->port()), 0);
    // "::" is every interface, IPv4 included.
    auto any6 = HttpStatusServer::start(0, metrics, "::");
    ASSERT_TRUE(any6) << any6.error().message();
    EXPECT_EQ(get("::1", (*any6)->port(), "/healthz").status, 200);
    EXPECT_EQ(get("127.0.0.1", (*any6)->port(), "/healthz").status, 200);
  }
}

TEST(HttpStatusServer, ErrorsNameTheAddressAndPort) {
  Metrics metrics;
  auto bad_address = HttpStatusServer::start(0, metrics, "localhost");
  ASSERT_FALSE(bad_address);
  EXPECT_NE(bad_address.error().message().find("observability.bind_address localhost"), std::string::npos);

  auto first = HttpStatusServer::start(0, metrics, "127.0.0.1");
  ASSERT_TRUE(first) << first.error().message();
  auto taken = HttpStatusServer::start((*first)->port(), metrics, "127.0.0.1");
  ASSERT_FALSE(taken);
  EXPECT_NE(taken.error().message().find("observability.http_port " + std::to_string((*first)->port())),
            std::string::npos)
      << taken.error().message();
}

}  // namespace
}  // namespace restack::worker

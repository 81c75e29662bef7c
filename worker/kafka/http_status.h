// The HTTP endpoint for Kubernetes probes and Prometheus: GET /healthz, /readyz, /metrics (404
// otherwise), served by GNU libmicrohttpd. Connections are multiplexed with epoll by a small
// thread pool, so idle or slow clients (a port scanner, a load balancer's keep-alive) take no
// thread and never hold up a probe; a connection idle for kIdleTimeoutSeconds is closed.
#pragma once

#include <memory>
#include <string>

#include "formats/common/status.h"
#include "worker/kafka/metrics.h"

namespace restack::worker {

class HttpStatusServer {
 public:
  static constexpr unsigned kIdleTimeoutSeconds = 10;
  static constexpr unsigned kThreads = 2;
  static constexpr unsigned kMaxConnections = 512;

  // Listens on `bind_address` (an IPv4 or IPv6 literal, observability.bind_address) and `port`
  // (observability.http_port; 0 picks a free port, see port()).
  static Expected<std::unique_ptr<HttpStatusServer>> start(int port, const Metrics& metrics,
                                                           const std::string& bind_address = "0.0.0.0");
  ~HttpStatusServer();
  int port() const { return port_; }

 private:
  struct Daemon;
  HttpStatusServer(std::unique_ptr<Daemon> daemon, int port);
  std::unique_ptr<Daemon> daemon_;
  int port_;
};

}  // namespace restack::worker

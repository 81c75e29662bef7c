// A tiny HTTP endpoint for Kubernetes probes and Prometheus: GET /healthz, /readyz, /metrics.
// One background thread, one connection at a time: probes and scrapes are rare and small.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "formats/common/status.h"
#include "worker/kafka/metrics.h"

namespace restack::worker {

class HttpStatusServer {
 public:
  static Expected<std::unique_ptr<HttpStatusServer>> start(int port, const Metrics& metrics);
  ~HttpStatusServer();
  int port() const { return port_; }

 private:
  HttpStatusServer(int fd, int port, const Metrics& metrics);
  void serve();
  int fd_;
  int port_;
  const Metrics& metrics_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace restack::worker

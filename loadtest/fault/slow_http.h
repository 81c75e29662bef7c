// A symbol location that answers slowly: an HTTP/1.1 server on 127.0.0.1 that sends each file
// in small pieces spread over `trickle` (a presigned object-store URL behind a congested link).
// Each connection gets its own thread; GET only; unknown paths get 404.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "formats/common/status.h"

namespace restack::fault {

class SlowHttpServer {
 public:
  static Expected<std::unique_ptr<SlowHttpServer>> start(std::chrono::milliseconds trickle);
  ~SlowHttpServer();
  SlowHttpServer(const SlowHttpServer&) = delete;
  SlowHttpServer& operator=(const SlowHttpServer&) = delete;

  // Serves `body` at `path` (starting with '/') from now on.
  void serve(const std::string& path, std::string body);
  // "http://127.0.0.1:<port>"
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  uint64_t requests() const { return requests_; }
  uint64_t completed() const { return completed_; }

 private:
  SlowHttpServer(int fd, int port, std::chrono::milliseconds trickle);
  void acceptLoop();
  void answer(int client);

  int fd_ = -1;
  int port_ = 0;
  std::chrono::milliseconds trickle_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> completed_{0};
  std::mutex mutex_;
  std::map<std::string, std::string> files_;
  std::vector<std::thread> clients_;
  std::thread acceptor_;
};

}  // namespace restack::fault

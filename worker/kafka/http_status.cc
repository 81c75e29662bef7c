#include "worker/kafka/http_status.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

namespace restack::worker {
namespace {

int64_t steadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string response(int code, const char* reason, const std::string& body, const char* type = "text/plain") {
  return "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

Expected<std::unique_ptr<HttpStatusServer>> HttpStatusServer::start(int port, const Metrics& metrics) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ioError(std::string("cannot open the status socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 16) != 0) {
    int saved = errno;
    ::close(fd);
    return ioError("cannot listen on observability.http_port " + std::to_string(port) + ": " + std::strerror(saved));
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  return std::unique_ptr<HttpStatusServer>(new HttpStatusServer(fd, ntohs(address.sin_port), metrics));
}

HttpStatusServer::HttpStatusServer(int fd, int port, const Metrics& metrics)
    : fd_(fd), port_(port), metrics_(metrics), thread_([this] { serve(); }) {}

HttpStatusServer::~HttpStatusServer() {
  stopping_ = true;
  thread_.join();
  ::close(fd_);
}

void HttpStatusServer::serve() {
  while (!stopping_) {
    pollfd waiting{fd_, POLLIN, 0};
    if (::poll(&waiting, 1, 200) <= 0) continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    timeval timeout{2, 0};
    ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    char buffer[2048];
    ssize_t n = ::recv(client, buffer, sizeof buffer - 1, 0);
    std::string request(buffer, n > 0 ? static_cast<size_t>(n) : 0);
    std::string reply;
    if (request.starts_with("GET /metrics")) {
      reply = response(200, "OK", metrics_.prometheusText(), "text/plain; version=0.0.4");
    } else if (request.starts_with("GET /readyz")) {
      reply = metrics_.ready ? response(200, "OK", "ready\n") : response(503, "Service Unavailable", "starting\n");
    } else if (request.starts_with("GET /healthz")) {
      // Alive while the loop turns; a symbol ingest may hold it for minutes, hence the slack.
      bool alive = steadyMs() - metrics_.last_loop_ms < 15 * 60 * 1000;
      reply = alive ? response(200, "OK", "ok\n") : response(503, "Service Unavailable", "worker loop stalled\n");
    } else {
      reply = response(404, "Not Found", "try /healthz, /readyz or /metrics\n");
    }
    ::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(client);
  }
}

}  // namespace restack::worker

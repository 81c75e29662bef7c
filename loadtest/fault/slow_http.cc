#include "loadtest/fault/slow_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace restack::fault {

Expected<std::unique_ptr<SlowHttpServer>> SlowHttpServer::start(std::chrono::milliseconds trickle) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ioError(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    return ioError(std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno));
  }
  return std::unique_ptr<SlowHttpServer>(new SlowHttpServer(fd, ntohs(address.sin_port), trickle));
}

SlowHttpServer::SlowHttpServer(int fd, int port, std::chrono::milliseconds trickle)
    : fd_(fd), port_(port), trickle_(trickle) {
  acceptor_ = std::thread([this] { acceptLoop(); });
}

SlowHttpServer::~SlowHttpServer() {
  stop_ = true;
  ::shutdown(fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(fd_);
  for (auto& client : clients_) client.join();
}

void SlowHttpServer::serve(const std::string& path, std::string body) {
  std::lock_guard lock(mutex_);
  files_[path] = std::move(body);
}

void SlowHttpServer::acceptLoop() {
  while (!stop_) {
    pollfd waiting{fd_, POLLIN, 0};
    if (::poll(&waiting, 1, 200) <= 0) continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard lock(mutex_);
    clients_.emplace_back([this, client] { answer(client); });
  }
}

namespace {

bool sendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace

void SlowHttpServer::answer(int client) {
  ++requests_;
  std::string request;
  char buffer[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
    pollfd waiting{client, POLLIN, 0};
    if (::poll(&waiting, 1, 10000) <= 0) break;
    ssize_t got = ::recv(client, buffer, sizeof buffer, 0);
    if (got <= 0) break;
    request.append(buffer, static_cast<size_t>(got));
  }
  std::string path;
  if (request.starts_with("GET ")) {
    const size_t end = request.find(' ', 4);
    if (end != std::string::npos) path = request.substr(4, end - 4);
  }
  std::string body;
  bool found = false;
  {
    std::lock_guard lock(mutex_);
    auto it = files_.find(path);
    if (it != files_.end()) {
      body = it->second;
      found = true;
    }
  }
  if (!found) {
    const std::string missing = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    sendAll(client, missing.data(), missing.size());
    ::close(client);
    return;
  }
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n";
  bool ok = sendAll(client, head.data(), head.size());
  // Forty pieces over the trickle time: slow, yet faster than any low-speed abort a fetcher
  // should apply to a file this small.
  constexpr size_t kPieces = 40;
  const size_t piece = std::max<size_t>(1, (body.size() + kPieces - 1) / kPieces);
  for (size_t at = 0; ok && at < body.size() && !stop_; at += piece) {
    std::this_thread::sleep_for(trickle_ / kPieces);
    ok = sendAll(client, body.data() + at, std::min(piece, body.size() - at));
  }
  if (ok && !stop_) ++completed_;
  ::close(client);
}

}  // namespace restack::fault

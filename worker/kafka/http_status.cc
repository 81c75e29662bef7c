#include "worker/kafka/http_status.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

namespace restack::worker {
namespace {

int64_t steadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

MHD_Result reply(MHD_Connection* connection, unsigned code, const std::string& body, const char* type = "text/plain") {
  MHD_Response* response =
      MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (!response) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_Result queued = MHD_queue_response(connection, code, response);
  MHD_destroy_response(response);
  return queued;
}

// Called by libmicrohttpd for each request, first when its headers arrived (`*state` null) and
// again once any body was read; the answer goes out on the second call.
MHD_Result handle(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*, const char*,
                  size_t* upload_size, void** state) {
  static int headers_seen;
  if (*state == nullptr) {
    *state = &headers_seen;
    return MHD_YES;
  }
  if (*upload_size != 0) {  // a body nobody asked for: read and ignore it
    *upload_size = 0;
    return MHD_YES;
  }
  const Metrics& metrics = *static_cast<const Metrics*>(cls);
  const std::string_view path(url);
  if (std::string_view(method) != MHD_HTTP_METHOD_GET) {
    return reply(connection, MHD_HTTP_NOT_FOUND, "try GET /healthz, /readyz or /metrics\n");
  }
  if (path == "/metrics") {
    return reply(connection, MHD_HTTP_OK, metrics.prometheusText(), "text/plain; version=0.0.4");
  }
  if (path == "/readyz") {
    return metrics.ready ? reply(connection, MHD_HTTP_OK, "ready\n")
                         : reply(connection, MHD_HTTP_SERVICE_UNAVAILABLE, "starting\n");
  }
  if (path == "/healthz") {
    // Alive while the loop turns; a symbol ingest may hold it for minutes, hence the slack.
    const bool alive = steadyMs() - metrics.last_loop_ms < 15 * 60 * 1000;
    return alive ? reply(connection, MHD_HTTP_OK, "ok\n")
                 : reply(connection, MHD_HTTP_SERVICE_UNAVAILABLE, "worker loop stalled\n");
  }
  return reply(connection, MHD_HTTP_NOT_FOUND, "try /healthz, /readyz or /metrics\n");
}

}  // namespace

struct HttpStatusServer::Daemon {
  MHD_Daemon* daemon = nullptr;
  ~Daemon() {
    if (daemon) MHD_stop_daemon(daemon);
  }
};

Expected<std::unique_ptr<HttpStatusServer>> HttpStatusServer::start(int port, const Metrics& metrics,
                                                                    const std::string& bind_address) {
  const std::string where =
      "observability.bind_address " + bind_address + ", observability.http_port " + std::to_string(port);
  if (port < 0 || port > 65535) return invalidArgument("cannot listen on " + where + ": not a port");
  sockaddr_storage address{};
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (::inet_pton(AF_INET, bind_address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
  } else if (::inet_pton(AF_INET6, bind_address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    flags |= MHD_USE_DUAL_STACK;  // "::" also answers IPv4 clients, like "0.0.0.0" does not IPv6
  } else {
    return invalidArgument("cannot listen on " + where + ": not an IPv4 or IPv6 address");
  }
  errno = 0;
  auto daemon = std::make_unique<Daemon>();
  daemon->daemon = MHD_start_daemon(
      flags, static_cast<uint16_t>(port), nullptr, nullptr, &handle, const_cast<Metrics*>(&metrics),
      MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&address), MHD_OPTION_THREAD_POOL_SIZE, kThreads,
      MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutSeconds, MHD_OPTION_CONNECTION_LIMIT, kMaxConnections, MHD_OPTION_END);
  if (!daemon->daemon) {
    const int saved = errno;
    return ioError("cannot listen on " + where + (saved ? std::string(": ") + std::strerror(saved) : std::string()));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon->daemon, MHD_DAEMON_INFO_BIND_PORT);
  const int bound = info ? info->port : port;
  return std::unique_ptr<HttpStatusServer>(new HttpStatusServer(std::move(daemon), bound));
}

HttpStatusServer::HttpStatusServer(std::unique_ptr<Daemon> daemon, int port)
    : daemon_(std::move(daemon)), port_(port) {}

HttpStatusServer::~HttpStatusServer() = default;

}  // namespace restack::worker

#include "tests/support/test_http_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace restack::test {

namespace {

struct Route {
  enum class Kind { kSequence, kTrickle, kChunked } kind = Kind::kSequence;
  std::vector<HttpResponse> responses;  // kSequence
  size_t next = 0;
  size_t total_bytes = 0;  // kTrickle
  size_t bytes_per_second = 0;
  std::string chunked_body;  // kChunked
};

}  // namespace

struct TestHttpServer::Impl {
  httplib::Server server;
  std::thread thread;
  int port = -1;
  std::atomic<bool> stopping{false};
  mutable std::mutex mutex;
  std::map<std::string, Route> routes;
  std::map<std::string, size_t> hits;
  std::vector<std::string> hosts;

  void handle(const httplib::Request& request, httplib::Response& response) {
    std::unique_lock lock(mutex);
    ++hits[request.path];
    hosts.push_back(request.get_header_value("Host"));
    auto found = routes.find(request.path);
    if (found == routes.end()) {
      response.status = 404;
      response.set_content("no route", "text/plain");
      return;
    }
    Route& route = found->second;
    if (route.kind == Route::Kind::kTrickle) {
      const size_t slice = std::max<size_t>(1, route.bytes_per_second / 10);
      response.status = 200;
      response.set_content_provider(route.total_bytes, "application/octet-stream",
                                    [this, slice](size_t offset, size_t length, httplib::DataSink& sink) {
                                      (void)offset;
                                      for (int i = 0; i < 10 && !stopping; ++i) {
                                        std::this_thread::sleep_for(std::chrono::milliseconds(10));
                                      }
                                      if (stopping) return false;
                                      std::string chunk(std::min(slice, length), 'x');
                                      return sink.write(chunk.data(), chunk.size());
                                    });
      return;
    }
    if (route.kind == Route::Kind::kChunked) {
      response.status = 200;
      response.set_chunked_content_provider("application/octet-stream",
                                            [body = route.chunked_body](size_t offset, httplib::DataSink& sink) {
                                              if (offset >= body.size()) {
                                                sink.done();
                                                return true;
                                              }
                                              size_t size = std::min<size_t>(4096, body.size() - offset);
                                              return sink.write(body.data() + offset, size);
                                            });
      return;
    }
    const HttpResponse& answer = route.responses[std::min(route.next, route.responses.size() - 1)];
    ++route.next;
    response.status = answer.status;
    for (const auto& [name, value] : answer.headers) response.set_header(name, value);
    response.set_content(answer.body, "application/octet-stream");
  }
};

TestHttpServer::TestHttpServer() : impl_(std::make_unique<Impl>()) {
  Impl* impl = impl_.get();
  impl->server.Get(
      ".*", [impl](const httplib::Request& request, httplib::Response& response) { impl->handle(request, response); });
  impl->port = impl->server.bind_to_any_port("127.0.0.1");
  if (impl->port <= 0) return;
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
  for (int i = 0; i < 500 && !impl->server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TestHttpServer::~TestHttpServer() {
  impl_->stopping = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

bool TestHttpServer::started() const {
  return impl_->port > 0 && impl_->server.is_running();
}
int TestHttpServer::port() const {
  return impl_->port;
}
std::string TestHttpServer::url(const std::string& path) const {
  return url("127.0.0.1", path);
}
std::string TestHttpServer::url(const std::string& host, const std::string& path) const {
  return "http://" + host + ":" + std::to_string(impl_->port) + path;
}

void TestHttpServer::serveBody(const std::string& path, std::string body, int status) {
  serveSequence(path, {HttpResponse{status, std::move(body), {}}});
}

void TestHttpServer::serveSequence(const std::string& path, std::vector<HttpResponse> responses) {
  if (responses.empty()) responses.push_back(HttpResponse{404, "", {}});
  std::lock_guard lock(impl_->mutex);
  Route route;
  route.responses = std::move(responses);
  impl_->routes[path] = std::move(route);
}

void TestHttpServer::serveRedirect(const std::string& path, std::string location, int status) {
  serveSequence(path, {HttpResponse{status, "", {{"Location", std::move(location)}}}});
}

void TestHttpServer::serveTrickle(const std::string& path, size_t total_bytes, size_t bytes_per_second) {
  std::lock_guard lock(impl_->mutex);
  Route route;
  route.kind = Route::Kind::kTrickle;
  route.total_bytes = total_bytes;
  route.bytes_per_second = bytes_per_second;
  impl_->routes[path] = std::move(route);
}

void TestHttpServer::serveChunked(const std::string& path, std::string body) {
  std::lock_guard lock(impl_->mutex);
  Route route;
  route.kind = Route::Kind::kChunked;
  route.chunked_body = std::move(body);
  impl_->routes[path] = std::move(route);
}

size_t TestHttpServer::hits(const std::string& path) const {
  std::lock_guard lock(impl_->mutex);
  auto found = impl_->hits.find(path);
  return found == impl_->hits.end() ? 0 : found->second;
}

size_t TestHttpServer::totalHits() const {
  std::lock_guard lock(impl_->mutex);
  size_t total = 0;
  for (const auto& [path, count] : impl_->hits) total += count;
  return total;
}

std::vector<std::string> TestHttpServer::hostHeaders() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->hosts;
}

}  // namespace restack::test

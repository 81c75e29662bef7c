// A small HTTP/1.1 server on 127.0.0.1 for tests of code that downloads from URLs (upload
// locations, tests/worker/upload_fetch_test.cc). Routes are set per path and may be changed while
// it runs; every request is counted, so a test can prove that a refused URL was never contacted.
// Serves until destroyed. Built on cpp-httplib (Debian libcpp-httplib-dev), kept out of this
// header.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace restack::test {

struct HttpResponse {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
};

class TestHttpServer {
 public:
  // Binds 127.0.0.1 on a free port and starts serving; check started().
  TestHttpServer();
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  bool started() const;
  int port() const;
  // "http://127.0.0.1:<port><path>"; with `host`, "http://<host>:<port><path>" (for names pinned
  // to 127.0.0.1 by the client, e.g. libcurl's CURLOPT_RESOLVE).
  std::string url(const std::string& path) const;
  std::string url(const std::string& host, const std::string& path) const;

  // GET routes by exact path (no query); a later call for the same path replaces the route.
  // Unknown paths answer 404 (and are counted too).
  void serveBody(const std::string& path, std::string body, int status = 200);
  // The responses in turn, one per request; the last one repeats ("500, 500, then 200 + body").
  void serveSequence(const std::string& path, std::vector<HttpResponse> responses);
  // A redirect to `location` (absolute or relative, passed through as the Location header).
  void serveRedirect(const std::string& path, std::string location, int status = 302);
  // `total_bytes` of 'x' announced with Content-Length, sent at about `bytes_per_second`
  // (in tenth-of-a-second slices); stops early when the client goes away or the server stops.
  void serveTrickle(const std::string& path, size_t total_bytes, size_t bytes_per_second);

  // `body` with chunked transfer encoding: no Content-Length, so the client learns the size only
  // while reading.
  void serveChunked(const std::string& path, std::string body);

  size_t hits(const std::string& path) const;
  size_t totalHits() const;
  // The Host header of every request so far, in order.
  std::vector<std::string> hostHeaders() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restack::test

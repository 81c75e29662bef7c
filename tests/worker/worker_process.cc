#include "tests/worker/worker_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#ifndef RESTACK_BINARY
#error "RESTACK_BINARY (the path of the built restack program) must be defined by CMake"
#endif

extern char** environ;

namespace restack::worker_test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string lastLines(const std::string& text, int lines) {
  size_t at = text.size();
  for (int n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = text.rfind('\n', at - 1);
  return at == std::string::npos || at == 0 ? text : text.substr(at + 1);
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

WorkerProcess::WorkerProcess(std::string name, std::string config_path, std::string log_path)
    : name_(std::move(name)), config_path_(std::move(config_path)), log_path_(std::move(log_path)) {}

WorkerProcess::~WorkerProcess() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  // RESTACK_KAFKAINT_LOGS=1 shows the logs of passing tests too.
  if (::testing::Test::HasFailure() || std::getenv("RESTACK_KAFKAINT_LOGS") != nullptr) {
    std::fprintf(stderr, "---- %s (%s), last lines of its log ----\n%s\n", name_.c_str(), log_path_.c_str(),
                 lastLines(readText(log_path_), 60).c_str());
  }
}

bool WorkerProcess::start() {
  const std::string binary = RESTACK_BINARY;
  if (::access(binary.c_str(), X_OK) != 0) {
    ADD_FAILURE() << binary << " is not an executable (build the restack target)";
    return false;
  }
  std::vector<std::string> arguments = {binary, "run", "--config", config_path_};
  // The child sees this process's environment minus RESTACK_* overrides, so only the YAML
  // file configures it.
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "RESTACK_", 8) != 0) environment.emplace_back(*e);
  }
  std::vector<char*> argv, envp;
  for (auto& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    ADD_FAILURE() << "cannot open " << log_path_ << ": " << std::strerror(errno);
    return false;
  }
  const pid_t parent = ::getpid();
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int cpu : cpus_) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      ADD_FAILURE() << "CPU " << cpu << " is out of range";
      return false;
    }
    CPU_SET(cpu, &cpus);
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::syscall(SYS_close_range, 3u, ~0u, 0u);
    if (CPU_COUNT(&cpus) > 0 && ::sched_setaffinity(0, sizeof cpus, &cpus) != 0) ::_exit(125);
    ::execve(binary.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log);
  if (pid < 0) {
    ADD_FAILURE() << "fork failed: " << std::strerror(errno);
    return false;
  }
  pid_ = pid;
  reaped_ = false;
  return true;
}

bool WorkerProcess::running() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = status;
    return false;
  }
  return true;
}

void WorkerProcess::signal(int number) {
  if (running()) ::kill(pid_, number);
}

std::optional<int> WorkerProcess::waitForExit(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
  return reaped_ ? std::optional<int>(status_) : std::nullopt;
}

std::optional<int> WorkerProcess::terminate(std::chrono::milliseconds timeout) {
  signal(SIGTERM);
  auto status = waitForExit(timeout);
  if (!status) {
    ADD_FAILURE() << name_ << " did not stop within " << timeout.count() << " ms of SIGTERM";
    signal(SIGKILL);
    waitForExit(10s);
  }
  return status;
}

std::string WorkerProcess::log() const {
  return readText(log_path_);
}

uint64_t peakRssBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;  // "VmHWM: 123 kB"
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The status port.

int freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

HttpReply httpGet(int port, const std::string& path) {
  HttpReply reply;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return reply;
  }
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) response.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  if (!response.starts_with("HTTP/1.1 ")) return reply;
  reply.status = std::atoi(response.c_str() + 9);
  const size_t end = response.find("\r\n\r\n");
  reply.headers = response.substr(0, end);
  if (end != std::string::npos) reply.body = response.substr(end + 4);
  return reply;
}

// The value of `restack_<name>` on /metrics, nullopt when the worker does not answer.
std::optional<uint64_t> metric(int port, const std::string& name) {
  HttpReply reply = httpGet(port, "/metrics");
  if (reply.status != 200) return std::nullopt;
  std::istringstream lines(reply.body);
  std::string line;
  const std::string prefix = "restack_" + name + " ";
  while (std::getline(lines, line)) {
    if (line.starts_with(prefix)) return std::stoull(line.substr(prefix.size()));
  }
  return std::nullopt;
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout, std::chrono::milliseconds step) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace restack::worker_test

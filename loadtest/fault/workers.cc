#include "loadtest/fault/workers.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace restack::fault {
namespace {

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

}  // namespace

WorkerSet::WorkerSet(std::string binary, std::vector<std::string> folders)
    : binary_(std::move(binary)), folders_(std::move(folders)), workers_(folders_.size()) {}

WorkerSet::~WorkerSet() {
  stop_ = true;
  if (supervisor_.joinable()) supervisor_.join();
  for (Worker& w : workers_) {
    if (w.pid > 0) {
      ::kill(w.pid, SIGKILL);
      ::kill(w.pid, SIGCONT);
      int status = 0;
      ::waitpid(w.pid, &status, 0);
    }
  }
}

bool WorkerSet::spawn(size_t i) {
  const std::string config = folders_[i] + "/config.yaml";
  const std::string log_path = logPath(i);
  std::vector<std::string> arguments = {binary_, "run", "--config", config};
  // Only the YAML file configures the worker: RESTACK_* overrides of this environment are dropped.
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "RESTACK_", 8) != 0) environment.emplace_back(*e);
  }
  std::vector<char*> argv, envp;
  for (auto& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return false;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only. The worker dies with this driver (PR_SET_PDEATHSIG).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::syscall(SYS_close_range, 3u, ~0u, 0u);
    ::execve(binary_.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log);
  if (pid < 0) return false;
  workers_[i].pid = pid;
  workers_[i].started_ms = nowMs();
  return true;
}

bool WorkerSet::startAll() {
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < workers_.size(); ++i) {
      if (!spawn(i)) return false;
    }
  }
  supervisor_ = std::thread([this] { supervise(); });
  return true;
}

void WorkerSet::supervise() {
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < workers_.size(); ++i) {
      Worker& w = workers_[i];
      if (w.pid > 0) {
        int status = 0;
        if (::waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
        w.pid = -1;
        if (terminating_) continue;
        if (!w.planned_down) {
          ++unplanned_exits_;
          last_unplanned_exit_ = "worker " + std::to_string(i) + " " + describe(status);
          std::fprintf(stdout, "[fault] worker %zu %s on its own; restarting it in 2 s (as a pod restart would)\n", i,
                       describe(status).c_str());
          std::fflush(stdout);
          if (WIFEXITED(status) && WEXITSTATUS(status) == 2 && nowMs() - w.started_ms < 10000) config_rejected_ = true;
          w.restart_at_ms = nowMs() + 2000;
        }
      }
      if (w.pid < 0 && !terminating_ && nowMs() >= w.restart_at_ms) {
        w.planned_down = false;
        spawn(i);
      }
    }
  }
}

void WorkerSet::kill(size_t i, int down_ms) {
  std::lock_guard lock(mutex_);
  Worker& w = workers_[i];
  w.planned_down = true;
  w.restart_at_ms = nowMs() + down_ms;
  if (w.pid > 0) {
    ::kill(w.pid, SIGKILL);
    ::kill(w.pid, SIGCONT);  // a stopped process dies only once continued
  }
}

void WorkerSet::stop(size_t i) {
  std::lock_guard lock(mutex_);
  if (workers_[i].pid > 0) ::kill(workers_[i].pid, SIGSTOP);
}

void WorkerSet::resume(size_t i) {
  std::lock_guard lock(mutex_);
  if (workers_[i].pid > 0) ::kill(workers_[i].pid, SIGCONT);
}

void WorkerSet::terminateAll(int timeout_s) {
  terminating_ = true;
  std::vector<pid_t> pids;
  {
    std::lock_guard lock(mutex_);
    for (Worker& w : workers_) {
      if (w.pid > 0) {
        ::kill(w.pid, SIGCONT);
        ::kill(w.pid, SIGTERM);
      }
    }
  }
  const int64_t deadline = nowMs() + timeout_s * 1000LL;
  while (nowMs() < deadline) {
    bool any = false;
    {
      std::lock_guard lock(mutex_);
      for (Worker& w : workers_) any = any || w.pid > 0;
    }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::lock_guard lock(mutex_);
  for (Worker& w : workers_) {
    if (w.pid > 0) {
      std::fprintf(stdout, "[fault] worker pid %d ignored SIGTERM for %d s; killing it\n", w.pid, timeout_s);
      ::kill(w.pid, SIGKILL);
    }
  }
}

std::string WorkerSet::lastUnplannedExit() const {
  std::lock_guard lock(mutex_);
  return last_unplanned_exit_;
}

}  // namespace restack::fault

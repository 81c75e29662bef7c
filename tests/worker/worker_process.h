// `restack run` as a real child process, and the small probes tests use on it: its status port
// (/healthz, /readyz, /metrics), its log, its exit status and its peak memory.
//
//   WorkerProcess worker("worker", "/tmp/x/restack.yaml", "/tmp/x/worker.log");
//   ASSERT_TRUE(worker.start());
//   waitUntil([&] { return metric(port, "events_published_total") >= 10; }, 60s);
//   auto status = worker.terminate();  // SIGTERM, then the wait status
//
// The child is SIGKILLed by the destructor and, should the test process die first, by the kernel
// (PR_SET_PDEATHSIG), so none is ever left behind. A failing test prints the child's last log
// lines (RESTACK_KAFKAINT_LOGS=1 prints them for passing tests too).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace restack::worker_test {

std::string readText(const std::string& path);
// The last `lines` lines of `text`.
std::string lastLines(const std::string& text, int lines);
// "exited with code 0", "killed by signal Killed", …
std::string describeWaitStatus(int status);

class WorkerProcess {
 public:
  // `binary` defaults to the restack program this build produced (RESTACK_BINARY).
  WorkerProcess(std::string name, std::string config_path, std::string log_path);
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();

  // fork/exec `restack run --config FILE`, stdout and stderr appended to the log file. The child
  // sees this process's environment minus RESTACK_* overrides, so only the YAML file configures it.
  bool start();
  // CPUs the child is confined to (sched_setaffinity before exec; its threads inherit it), set
  // before start(). Empty (the default): the CPUs this process may use.
  void pinTo(std::vector<int> cpus) { cpus_ = std::move(cpus); }
  bool running();
  void signal(int number);
  // The wait status once the process ended, nullopt when it still runs after `timeout`.
  std::optional<int> waitForExit(std::chrono::milliseconds timeout);
  // SIGTERM and the exit status; SIGKILL after `timeout`.
  std::optional<int> terminate(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  std::string log() const;
  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }

 private:
  std::string name_;
  std::string config_path_;
  std::string log_path_;
  std::vector<int> cpus_;
  pid_t pid_ = -1;
  bool reaped_ = true;
  int status_ = 0;
};

// The peak resident set size (VmHWM) of a running process, 0 when it cannot be read.
uint64_t peakRssBytes(pid_t pid);

// A loopback port that was free a moment ago.
int freeLoopbackPort();

struct HttpReply {
  int status = 0;  // 0: no answer
  std::string headers;
  std::string body;
};
// GET http://127.0.0.1:<port><path>, 3 s timeout.
HttpReply httpGet(int port, const std::string& path);

// The value of `restack_<name>` on /metrics, nullopt when the worker does not answer.
std::optional<uint64_t> metric(int port, const std::string& name);

// Polls `done` every `step` until it returns true (true) or `timeout` passes (false).
bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds step = std::chrono::milliseconds(200));

}  // namespace restack::worker_test

// `restack run` child processes for the fault test: started, killed, stopped and continued on
// purpose, and restarted when they exit on their own (as a pod would be), each with its own
// config, store and log under its folder.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace restack::fault {

class WorkerSet {
 public:
  // `folders[i]` holds worker i's config.yaml and receives its worker.log.
  WorkerSet(std::string binary, std::vector<std::string> folders);
  ~WorkerSet();  // SIGKILLs whatever still runs
  WorkerSet(const WorkerSet&) = delete;
  WorkerSet& operator=(const WorkerSet&) = delete;

  bool startAll();
  size_t size() const { return workers_.size(); }
  // SIGKILL now; the supervisor restarts it after `down_ms`.
  void kill(size_t i, int down_ms);
  void stop(size_t i);    // SIGSTOP
  void resume(size_t i);  // SIGCONT
  // SIGTERM every worker, wait up to `timeout_s` for clean exits, then SIGKILL.
  void terminateAll(int timeout_s);
  // Exits nobody asked for (the supervisor restarted them), and the last such exit.
  uint64_t unplannedExits() const { return unplanned_exits_; }
  std::string lastUnplannedExit() const;
  // True when a worker exited with the config error status (2) before ever running 10 s:
  // nothing will improve by restarting it.
  bool configRejected() const { return config_rejected_; }
  std::string logPath(size_t i) const { return folders_[i] + "/worker.log"; }

 private:
  struct Worker {
    pid_t pid = -1;
    bool planned_down = false;  // killed on purpose; restart at restart_at_ms
    int64_t restart_at_ms = 0;
    int64_t started_ms = 0;
  };
  bool spawn(size_t i);
  void supervise();

  std::string binary_;
  std::vector<std::string> folders_;
  std::vector<Worker> workers_;
  mutable std::mutex mutex_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> terminating_{false};
  std::atomic<uint64_t> unplanned_exits_{0};
  std::atomic<bool> config_rejected_{false};
  std::string last_unplanned_exit_;
  std::thread supervisor_;
};

}  // namespace restack::fault

// RestoreThreads: the worker's fixed set of threads that restore the events of a batch.
//
// They live as long as the worker. What a thread keeps for itself between events (its JSON
// parsers, the native resolver's demangling cache, the source-map resolver's last route, the
// allocator's thread cache) therefore outlives a batch, where threads started per batch built all
// of it again for every batch: with small batches (worker/kafka/worker.cc cuts a batch as soon as
// nothing is committing) that was most of a batch's cost.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace restack::worker {

class RestoreThreads {
 public:
  // `threads` >= 1 (worker.threads).
  explicit RestoreThreads(size_t threads);
  ~RestoreThreads();
  RestoreThreads(const RestoreThreads&) = delete;
  RestoreThreads& operator=(const RestoreThreads&) = delete;

  // Calls task(i) once for every i in [0, count), spread over the threads (each takes the next
  // index when it is free), and returns once every call returned. `task` must not throw. Callers
  // take turns: a second run waits for the first.
  void run(size_t count, const std::function<void(size_t)>& task);

  size_t size() const { return threads_.size(); }

 private:
  void serve();

  std::mutex caller_;  // one run at a time
  std::mutex mutex_;
  std::condition_variable wake_;  // a new run, or stopping
  std::condition_variable done_;  // the last index of a run finished
  const std::function<void(size_t)>* task_ = nullptr;
  size_t count_ = 0;
  size_t next_ = 0;      // the next index to hand out
  size_t finished_ = 0;  // indexes whose call returned
  uint64_t run_id_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace restack::worker

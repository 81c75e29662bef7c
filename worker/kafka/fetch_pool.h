// FetchPool: the threads that download symbol uploads referenced by location (the
// restack.location header), beside the worker loop.
//
// Why: a download is paced by a server the worker does not control. Run on the loop thread, one
// slow or trickling location (up to uploads.total_timeout_ms, 10 minutes by default) held back
// every event of the worker, and one on the shared symbols topic held back every worker of the
// fleet. The loop now hands each location to this pool and goes on; it collects what finished
// (takeFinished) and ingests it itself, so the store, the readers' caches and the applied offsets
// are still written by one thread only.
//
// Every job ends: the fetch function's own timeouts bound it, and its owner cancels transfers in
// progress (UploadPolicy::cancel) before destroying the pool, whose destructor drops the jobs not
// started and joins the threads. A job that throws finishes with ErrorCode::kInternal and a
// message that does not quote the exception (it may hold fetched bytes).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "formats/common/status.h"
#include "worker/kafka/upload_fetch.h"

namespace restack::worker {

class FetchPool {
 public:
  using FetchFunction = std::function<Expected<FetchedUpload>(const std::string& location)>;

  struct Finished {
    std::string id;  // as submitted
    Expected<FetchedUpload> fetched;
  };

  // `threads` >= 1 (uploads.fetch_threads).
  FetchPool(size_t threads, FetchFunction fetch);
  ~FetchPool();
  FetchPool(const FetchPool&) = delete;
  FetchPool& operator=(const FetchPool&) = delete;

  // Queues the download of `location`; its result comes back from takeFinished() under `id`.
  void submit(std::string id, std::string location);
  // The jobs finished since the last call, in the order they finished. Never waits.
  std::vector<Finished> takeFinished();
  // Waits until a job finishes or `timeout` passes (whichever comes first).
  void waitForFinished(std::chrono::milliseconds timeout);
  // Jobs submitted whose result has not been taken yet (queued, running or finished).
  size_t outstanding() const;
  // Jobs queued or running (not finished yet).
  size_t busy() const;
  size_t threads() const { return threads_.size(); }

 private:
  struct Job {
    std::string id;
    std::string location;
  };
  void serve();

  FetchFunction fetch_;
  mutable std::mutex mutex_;
  std::condition_variable work_;      // a job queued, or stopping
  std::condition_variable finished_;  // a job finished
  std::deque<Job> queue_;
  std::vector<Finished> done_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace restack::worker

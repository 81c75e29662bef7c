#include "worker/kafka/fetch_pool.h"

#include <utility>

namespace restack::worker {

FetchPool::FetchPool(size_t threads, FetchFunction fetch) : fetch_(std::move(fetch)) {
  if (threads == 0) threads = 1;
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { serve(); });
}

FetchPool::~FetchPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();  // never started: still recorded in the store, fetched again after a restart
  }
  work_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void FetchPool::submit(std::string id, std::string location) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Job{std::move(id), std::move(location)});
  }
  work_.notify_one();
}

std::vector<FetchPool::Finished> FetchPool::takeFinished() {
  std::lock_guard lock(mutex_);
  return std::exchange(done_, {});
}

void FetchPool::waitForFinished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  finished_.wait_for(lock, timeout, [this] { return !done_.empty() || (queue_.empty() && running_ == 0); });
}

size_t FetchPool::outstanding() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + running_ + done_.size();
}

size_t FetchPool::busy() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + running_;
}

void FetchPool::serve() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    Expected<FetchedUpload> fetched = [&]() -> Expected<FetchedUpload> {
      try {
        return fetch_(job.location);
      } catch (...) {
        // The exception's text may quote what was fetched; the DLQ record and the log do not.
        return Error(ErrorCode::kInternal,
                     "fetching the upload threw an exception (a defect in restack; the upload's content is in "
                     "this DLQ record)");
      }
    }();
    {
      std::lock_guard lock(mutex_);
      --running_;
      done_.push_back(Finished{std::move(job.id), std::move(fetched)});
    }
    finished_.notify_all();
  }
}

}  // namespace restack::worker

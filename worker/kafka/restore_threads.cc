#include "worker/kafka/restore_threads.h"

#include <algorithm>

namespace restack::worker {

RestoreThreads::RestoreThreads(size_t threads) {
  threads_.reserve(std::max<size_t>(1, threads));
  for (size_t t = 0; t < std::max<size_t>(1, threads); ++t) threads_.emplace_back([this] { serve(); });
}

RestoreThreads::~RestoreThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void RestoreThreads::run(size_t count, const std::function<void(size_t)>& task) {
  if (count == 0) return;
  std::lock_guard<std::mutex> turn(caller_);
  std::unique_lock<std::mutex> lock(mutex_);
  task_ = &task;
  count_ = count;
  next_ = 0;
  finished_ = 0;
  ++run_id_;
  wake_.notify_all();
  done_.wait(lock, [&] { return finished_ == count_; });
  task_ = nullptr;
}

void RestoreThreads::serve() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || (run_id_ != seen && task_ != nullptr); });
    if (stopping_) return;
    seen = run_id_;
    // Events are handed out one at a time: they differ in cost by far more than the lock does.
    while (next_ < count_) {
      const size_t index = next_++;
      const std::function<void(size_t)>& task = *task_;
      lock.unlock();
      task(index);
      lock.lock();
      if (++finished_ == count_) done_.notify_one();
    }
  }
}

}  // namespace restack::worker

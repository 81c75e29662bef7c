#include "loadtest/worker/idle_work.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace restack::loadtest {

bool runAtIdlePriority() {
  sched_param param{};
  param.sched_priority = 0;
  return pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0;
}

EventsAhead::EventsAhead(const EventGenerator& generator, size_t count, size_t max_ahead)
    : generator_(generator), count_(count), ring_(std::max<size_t>(1, max_ahead)) {
  thread_ = std::thread([this] { make(); });
}

EventsAhead::~EventsAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  room_.notify_all();
  thread_.join();
}

GeneratedEvent EventsAhead::take(size_t index) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken_ = index + 1;
    if (index < made_) {
      GeneratedEvent event = std::move(ring_[index % ring_.size()]);
      ++taken_ready_;
      room_.notify_one();
      return event;
    }
  }
  return generator_.make(index);
}

void EventsAhead::make() {
  runAtIdlePriority();
  while (true) {
    size_t next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // The producer may have made events itself while this thread waited for the CPU.
      room_.wait(lock, [&] { return stopping_ || std::max(made_, taken_) < taken_ + ring_.size(); });
      next = std::max(made_, taken_);
      if (stopping_ || next >= count_) return;
    }
    GeneratedEvent event = generator_.make(next);
    std::lock_guard<std::mutex> lock(mutex_);
    if (next >= taken_) {
      ring_[next % ring_.size()] = std::move(event);
      made_ = next + 1;
    }
  }
}

std::string outputProblem(const GeneratedEvent& expected, const ArrivedOutput& output) {
  if (output.dead_lettered) return expected.malformed ? std::string() : "a readable event went to the DLQ";
  if (expected.malformed) return "an unreadable event was restored";
  const std::string_view value(static_cast<const char*>(output.message->payload()), output.message->len());
  return checkRestored(value, expected);
}

OutputChecker::OutputChecker(const EventGenerator& generator, size_t max_waiting, Report report)
    : generator_(generator), max_waiting_(std::max<size_t>(1, max_waiting)), report_(std::move(report)) {
  thread_ = std::thread([this] { serve(); });
}

OutputChecker::~OutputChecker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void OutputChecker::add(ArrivedOutput output) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiting_.size() < max_waiting_) {
      waiting_.push_back(std::move(output));
      most_waiting_ = std::max(most_waiting_, waiting_.size());
      changed_.notify_all();
      return;
    }
  }
  check(output);
}

void OutputChecker::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return waiting_.empty() && in_check_ == 0; });
}

void OutputChecker::check(const ArrivedOutput& output) {
  const GeneratedEvent expected = generator_.expect(output.index);
  const std::string problem = outputProblem(expected, output);
  std::lock_guard<std::mutex> lock(report_mutex_);
  report_(output.index, expected, problem);
}

void OutputChecker::serve() {
  runAtIdlePriority();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping, nothing left
    ArrivedOutput output = std::move(waiting_.front());
    waiting_.pop_front();
    ++in_check_;
    lock.unlock();
    check(output);
    output.message.reset();
    lock.lock();
    --in_check_;
    changed_.notify_all();
  }
}

}  // namespace restack::loadtest

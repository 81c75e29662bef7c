// The load tool's own work that is not on the path a rate run measures (produce -> the output
// read back), done on threads at the lowest CPU priority: making the events ahead of their
// produce time, and checking the outputs after their arrival was timed.
//
// Why: on the machine the figures come from, the broker, the worker and this tool share two
// cores. At 10,000 events/s the tool's making and checking took about 0.3 of a core at the same
// priority as the worker and the broker, so the worker's events queued behind the tool's
// bookkeeping. At SCHED_IDLE the kernel runs these threads only on CPU time no other thread
// wants; each output is still checked, later. The report still counts their CPU as the tool's.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loadtest/worker/events.h"

namespace restack::loadtest {

// Puts the calling thread in the SCHED_IDLE class; false (and the thread unchanged) when the
// kernel refuses.
bool runAtIdlePriority();

// Events made by a thread at idle priority, at most `max_ahead` beyond the last one taken. The
// producer takes them in order; one the maker has not reached yet is made on the producer's
// thread then (the maker skips it).
class EventsAhead {
 public:
  EventsAhead(const EventGenerator& generator, size_t count, size_t max_ahead);
  ~EventsAhead();
  EventsAhead(const EventsAhead&) = delete;
  EventsAhead& operator=(const EventsAhead&) = delete;

  // Event `index`; indexes come in order from 0, from one thread.
  GeneratedEvent take(size_t index);
  // How many take() found made ahead.
  size_t takenReady() const { return taken_ready_; }

 private:
  void make();

  const EventGenerator& generator_;
  const size_t count_;
  std::vector<GeneratedEvent> ring_;  // event i in ring_[i % ring_.size()] while i is in [taken_, made_)
  std::mutex mutex_;
  std::condition_variable room_;
  size_t made_ = 0, taken_ = 0;
  bool stopping_ = false;
  size_t taken_ready_ = 0;
  std::thread thread_;
};

// One output to check: which event it restores, whether it came from the dead-letter topic, and
// the message (its payload stays in librdkafka's buffer until checked).
struct ArrivedOutput {
  size_t index = 0;
  bool dead_lettered = false;
  std::unique_ptr<RdKafka::Message> message;
};

// What was found wrong with an output against its event; empty when it checks out.
std::string outputProblem(const GeneratedEvent& expected, const ArrivedOutput& output);

// Checks outputs on a thread at idle priority, in arrival order. When `max_waiting` outputs wait,
// add() checks the new one on the caller's thread instead, so that a machine with no idle time
// holds no more than that many outputs.
class OutputChecker {
 public:
  // `report(index, expected, problem)` is called once per output, from either thread (one at a
  // time): the event's expectation and the problem (empty when none).
  using Report = std::function<void(size_t index, const GeneratedEvent& expected, const std::string& problem)>;
  OutputChecker(const EventGenerator& generator, size_t max_waiting, Report report);
  ~OutputChecker();
  OutputChecker(const OutputChecker&) = delete;
  OutputChecker& operator=(const OutputChecker&) = delete;

  void add(ArrivedOutput output);
  // Returns once every output added was checked.
  void finish();
  // The most outputs that waited at once.
  size_t mostWaiting() const { return most_waiting_; }

 private:
  void check(const ArrivedOutput& output);
  void serve();

  const EventGenerator& generator_;
  const size_t max_waiting_;
  Report report_;
  std::mutex mutex_;
  std::mutex report_mutex_;
  std::condition_variable changed_;
  std::deque<ArrivedOutput> waiting_;
  size_t in_check_ = 0;
  size_t most_waiting_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace restack::loadtest

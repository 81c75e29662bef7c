// Events for the load test: raw events (docs/design.md §3) of every stack kind generated from the
// symbol corpus with a known restoration, and the check of each output against it.
//
// Generation is a pure function of (options, index): the reader regenerates an event's
// expectation from the index in its event id instead of keeping every event in memory.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "loadtest/worker/corpus.h"

namespace restack::loadtest {

// Relative weights of the event shapes (--mix ios=1,native=2,...).
struct Mix {
  double ios = 1;     // iOS crash, CodecKit frames
  double native = 2;  // Android native crash, libcodec.so frames
  double java = 2;    // Android Java crash (printStackTrace text)
  double anr = 1;     // Android ANR, several Java threads
  double lag = 1;     // Android lag, samples of the main thread
  double web = 2;     // Web error, V8 frames
  double rn = 1;      // React Native crash, JavaScriptCore frames
};
// Parses "ios=1,native=2,..." into `mix`; false with a message in `error` on a bad entry.
bool parseMix(const std::string& text, Mix& mix, std::string& error);

struct EventOptions {
  Mix mix;
  int min_frames = 20;  // frames per stack: 20 + 40 * u^2, u uniform (median 30, range 20-60)
  int max_frames = 60;
  int anr_threads = 3;             // threads of an ANR event
  int lag_samples = 4;             // samples of a lag event
  double missing_share = 0.02;     // native frames of an image nobody uploaded
  double malformed_share = 0.002;  // events that cannot be read (to the DLQ)
  uint64_t seed = 1;
  std::string run_id = "r";  // event ids are "lt<index>-<run_id>"
};

// What one stack (a thread, or one lag sample) must restore to: per raw frame, the functions
// innermost first; an empty list means the frame must be reported missing_symbols.
using ExpectedStack = std::vector<std::vector<std::string>>;

struct GeneratedEvent {
  std::string key;  // <app>:<build_id>
  std::string json;
  bool malformed = false;
  std::vector<ExpectedStack> stacks;  // in output order: threads, and a lag thread's samples
  size_t raw_frames = 0;
};

class EventGenerator {
 public:
  EventGenerator(const Corpus& corpus, EventOptions options);
  GeneratedEvent make(size_t index) const;
  const EventOptions& options() const { return options_; }

 private:
  const Corpus& corpus_;
  EventOptions options_;
  std::vector<double> cumulative_;
};

// The index of an output whose event id is "lt<index>-...", or npos.
size_t eventIndex(std::string_view value);

// Checks a restored event (§5) against its expectation; empty when it matches, else the first
// difference, for a person to read.
std::string checkRestored(std::string_view output, const GeneratedEvent& expected);

}  // namespace restack::loadtest

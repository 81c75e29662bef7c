// Events for the load test: raw events (docs/design.md §3) of every stack kind generated from the
// symbol corpus with a known restoration, and the check of each output against it.
//
// Generation is a pure function of (options, index): the reader regenerates an event's
// expectation from the index in its event id instead of keeping every event in memory.
#pragma once

#include <cstdint>
#include <random>
#include <span>
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

// What one raw frame must restore to: the functions innermost first, pointing into the corpus
// (which outlives every event); empty means the frame must be reported missing_symbols.
using ExpectedFrame = std::span<const std::string>;

struct GeneratedEvent {
  std::string key;   // <app>:<build_id>; empty from EventGenerator::expect
  std::string json;  // empty from EventGenerator::expect
  bool malformed = false;
  // Every stack's raw frames one after the other, in output order (threads, and a lag thread's
  // samples); stack_sizes[s] of them are stack s's.
  std::vector<ExpectedFrame> frames;
  std::vector<uint32_t> stack_sizes;
  size_t raw_frames = 0;
};

class EventGenerator {
 public:
  // Keeps a reference to `corpus`, which must outlive the generator and its events.
  EventGenerator(const Corpus& corpus, EventOptions options);
  // The event to produce: its key, its text and what it must restore to.
  GeneratedEvent make(size_t index) const;
  // The same event's expectation alone (no key, no text), for the reader: the same random draws
  // as make, without writing what only the producer needs.
  GeneratedEvent expect(size_t index) const;
  const EventOptions& options() const { return options_; }

 private:
  // Per build, each pool frame's line as it appears (JSON-escaped) inside an event's "stack"
  // string: built once here rather than per frame of every event.
  struct BuildText {
    std::string ios_image;      // " [<uuid>]"
    std::string android_image;  // " libcodec.so [arm64-v8a::<build id>]"
    std::vector<std::string> java, web, rn;
  };
  GeneratedEvent generate(size_t index, bool text) const;

  const Corpus& corpus_;
  EventOptions options_;
  std::vector<double> cumulative_;
  std::vector<BuildText> text_;
};

// The index of an output whose event id is "lt<index>-...", or npos.
size_t eventIndex(std::string_view value);

// Checks a restored event (§5) against its expectation; empty when it matches, else the first
// difference, for a person to read.
std::string checkRestored(std::string_view output, const GeneratedEvent& expected);

}  // namespace restack::loadtest

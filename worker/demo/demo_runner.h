// `restack demo`: the whole pipeline on librdkafka's mock cluster, with the embedded samples.
#pragma once

namespace restack::demo {

struct DemoOptions {
  int timeout_seconds = 120;  // give up waiting for the restored events after this long
  bool verbose = false;       // show the worker's log
};

// Returns the process exit code: 0 when every sample event came back restored or dead-lettered.
int runDemo(const DemoOptions& options);

}  // namespace restack::demo

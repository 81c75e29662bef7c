// Measures of a load-test run: latency percentiles, the worker processes' CPU time and peak
// memory from /proc, and the once-a-second progress line.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace restack::loadtest {

// user + system CPU seconds of a process (/proc/PID/stat), 0 when it cannot be read.
double cpuSeconds(pid_t pid);

// The whole machine's CPU time from /proc/stat: busy and idle (with iowait) seconds over all cores.
struct MachineCpu {
  double busy_s = 0, idle_s = 0;
};
MachineCpu machineCpu();

// The pid in a pid file (e.g. the broker's, scripts/kafka-broker.sh), 0 when it cannot be read.
pid_t pidFromFile(const std::string& path);

// Percentile p (0..1) of sorted latencies in microseconds, in milliseconds.
double percentileMs(const std::vector<int64_t>& sorted_us, double p);

// A worker process's figures at the end of a run.
struct WorkerFigures {
  pid_t pid = 0;
  double cpu_s = 0;
  uint64_t peak_rss = 0;  // VmHWM, bytes
};

struct RunFigures {
  std::string title;
  size_t events = 0, restored = 0, dlq = 0, mismatches = 0, raw_frames = 0;
  double first_output_s = 0;  // worker start -> first output read back
  double full_rate_s = 0;     // worker start -> the first second at 90 % of the steady rate
  double steady_s = 0;        // first -> last output
  // Restart runs (RunOptions::restart_at): worker 0 stopped and started again on its store.
  bool restarted = false;
  double restart_down_s = 0;          // SIGTERM -> the process exited (its graceful shutdown)
  double restart_first_output_s = 0;  // started again -> its first new output read back
  double restart_full_rate_s = 0;     // started again -> the first second at 90 % of the rate before
  std::vector<int64_t> latencies_us;  // sorted; empty for a flat-out run
  // RunOptions::upload_during: the latencies of the events produced from the upload on (sorted),
  // and when the upload was produced, seconds after producing began.
  std::vector<int64_t> during_upload_us;
  double upload_at_s = 0;
  uint64_t uploads_ingested = 0;  // by the workers at the end of the run, all uploads included
  std::vector<WorkerFigures> workers;
  // Where the machine's CPU went from the first output to the last: the workers, this tool
  // (producing, reading back and checking every output), the Kafka broker it started, everything
  // else (other processes on the machine) and idle. All zero when not measured.
  double window_workers_s = 0, window_tool_s = 0, window_broker_s = 0, window_rest_s = 0, window_idle_s = 0;
  size_t window_outputs = 0;  // outputs read back in that window (the first one excluded)
  // Flat-out runs: this tool's CPU seconds producing the events before the workers start.
  double produce_tool_s = 0;
  double load_average = 0;  // 1-minute load average at the end
};

// The report, as printed and as pasted into docs/benchmarks.md.
std::string formatReport(const RunFigures& figures);

double loadAverage();

}  // namespace restack::loadtest

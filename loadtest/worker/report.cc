#include "loadtest/worker/report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace restack::loadtest {

double cpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces, so start after its closing parenthesis):
  // state is field 3; utime and stime are fields 14 and 15.
  size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::strtod(field.c_str(), nullptr);
    if (i == 15) stime = std::strtod(field.c_str(), nullptr);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

MachineCpu machineCpu() {
  std::ifstream in("/proc/stat");
  std::string label;
  in >> label;  // "cpu": the sum over all cores
  MachineCpu cpu;
  if (label != "cpu") return cpu;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  // user nice system idle iowait irq softirq steal
  for (int i = 0; i < 8; ++i) {
    double jiffies = 0;
    if (!(in >> jiffies)) break;
    (i == 3 || i == 4 ? cpu.idle_s : cpu.busy_s) += jiffies / tick;
  }
  return cpu;
}

pid_t pidFromFile(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  return in >> pid && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

double percentileMs(const std::vector<int64_t>& sorted_us, double p) {
  if (sorted_us.empty()) return 0;
  size_t at = std::min(sorted_us.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted_us.size())));
  return static_cast<double>(sorted_us[at]) / 1000.0;
}

double loadAverage() {
  double load = 0;
  std::ifstream in("/proc/loadavg");
  in >> load;
  return load;
}

std::string formatReport(const RunFigures& f) {
  char line[512];
  std::string out = f.title + "\n";
  const double rate = f.steady_s > 0 ? static_cast<double>(f.restored + f.dlq) / f.steady_s : 0;
  const double frame_rate = f.steady_s > 0 ? static_cast<double>(f.raw_frames) / f.steady_s : 0;
  std::snprintf(line, sizeof line,
                "  outputs: %zu of %zu events (%zu restored, %zu DLQ), %zu mismatches\n"
                "  throughput: %.0f events/s, %.0f raw frames/s over %.2f s (first to last output)\n"
                "  cold start: first output %.2f s after the workers started, full rate at %.2f s\n",
                f.restored + f.dlq, f.events, f.restored, f.dlq, f.mismatches, rate, frame_rate, f.steady_s,
                f.first_output_s, f.full_rate_s);
  out += line;
  if (f.restarted) {
    std::snprintf(line, sizeof line,
                  "  restart on the same store: stopped in %.2f s, first output %.2f s after it started again, full "
                  "rate at %.2f s\n",
                  f.restart_down_s, f.restart_first_output_s, f.restart_full_rate_s);
    out += line;
  }
  if (!f.latencies_us.empty()) {
    std::snprintf(
        line, sizeof line,
        "  latency produce -> output read back (%zu events): p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f "
        "ms\n",
        f.latencies_us.size(), percentileMs(f.latencies_us, 0.5), percentileMs(f.latencies_us, 0.99),
        percentileMs(f.latencies_us, 0.999), percentileMs(f.latencies_us, 1.0));
    out += line;
  }
  if (!f.during_upload_us.empty()) {
    std::snprintf(line, sizeof line,
                  "  latency of the %zu events produced after the upload (at %.1f s; the workers applied %llu "
                  "uploads in all): p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f ms\n",
                  f.during_upload_us.size(), f.upload_at_s, static_cast<unsigned long long>(f.uploads_ingested),
                  percentileMs(f.during_upload_us, 0.5), percentileMs(f.during_upload_us, 0.99),
                  percentileMs(f.during_upload_us, 0.999), percentileMs(f.during_upload_us, 1.0));
    out += line;
  }
  double cpu = 0;
  uint64_t peak = 0;
  for (const auto& w : f.workers) {
    cpu += w.cpu_s;
    peak = std::max(peak, w.peak_rss);
    std::snprintf(line, sizeof line, "  worker pid %d: CPU %.2f s (user+sys), peak RSS %.1f MiB\n", w.pid, w.cpu_s,
                  static_cast<double>(w.peak_rss) / (1 << 20));
    out += line;
  }
  std::snprintf(line, sizeof line, "  workers: CPU %.2f s, %.0f events per CPU second; load average %.2f at the end\n",
                cpu, cpu > 0 ? static_cast<double>(f.restored + f.dlq) / cpu : 0, f.load_average);
  out += line;
  const double window = f.window_workers_s + f.window_tool_s + f.window_broker_s + f.window_rest_s + f.window_idle_s;
  if (window > 0) {
    std::snprintf(line, sizeof line,
                  "  machine CPU from first to last output, %.2f core-seconds: workers %.0f %%, this tool %.0f %%, the "
                  "broker %.0f %%, other processes %.0f %%, idle %.0f %%\n",
                  window, 100 * f.window_workers_s / window, 100 * f.window_tool_s / window,
                  100 * f.window_broker_s / window, 100 * f.window_rest_s / window, 100 * f.window_idle_s / window);
    out += line;
    // Per output, so that runs of different lengths and rates compare: what producing (rate runs
    // only), reading back and checking one event costs this tool.
    std::snprintf(line, sizeof line, "  this tool: CPU %.2f s from first to last output, %.1f ms per 1,000 outputs%s\n",
                  f.window_tool_s,
                  f.window_outputs > 0 ? 1e6 * f.window_tool_s / static_cast<double>(f.window_outputs) : 0,
                  f.latencies_us.empty() ? " (reading and checking)" : " (producing, reading and checking)");
    out += line;
    // The workers' own figure at full rate: their start-up (opening the store, catching up the
    // symbol topics) is outside the window, where the whole-run figure above counts it.
    std::snprintf(
        line, sizeof line, "  workers: CPU %.2f s from first to last output, %.0f events per CPU second at full rate\n",
        f.window_workers_s, f.window_workers_s > 0 ? static_cast<double>(f.window_outputs) / f.window_workers_s : 0);
    out += line;
    std::snprintf(line, sizeof line, "  the broker: CPU %.2f s from first to last output, %.1f ms per 1,000 outputs\n",
                  f.window_broker_s,
                  f.window_outputs > 0 ? 1e6 * f.window_broker_s / static_cast<double>(f.window_outputs) : 0);
    out += line;
  }
  if (f.produce_tool_s > 0) {
    std::snprintf(line, sizeof line, "  this tool: CPU %.2f s producing the events, %.1f ms per 1,000 events\n",
                  f.produce_tool_s, f.events > 0 ? 1e6 * f.produce_tool_s / static_cast<double>(f.events) : 0);
    out += line;
  }
  return out;
}

}  // namespace restack::loadtest

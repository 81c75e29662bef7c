// The chart's Grafana dashboard (helm/restack/dashboards/restack.json) is checked by
// tests/helm/validate_dashboard.js against Grafana's published types, Prometheus' PromQL grammar
// and the metrics this build of the worker exports; then the ConfigMap the chart renders for
// Grafana's dashboard sidecar carries that same JSON. Needs .deps/helm from scripts/setup.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "formats/common/temp_dir.h"
#include "tests/support/run_command.h"
#include "worker/kafka/metrics.h"

namespace restack {
namespace {

namespace fs = std::filesystem;
using test_support::CommandOutput;
using test_support::runCommand;
using test_support::shellQuote;
using test_support::writeTextFile;

const fs::path kModules = fs::path(RESTACK_DEPS_DIR) / "helm" / "node_modules";
const fs::path kHelm = fs::path(RESTACK_DEPS_DIR) / "helm" / "bin" / "helm";
const fs::path kChart = fs::path(RESTACK_SOURCE_DIR) / "helm" / "restack";
const fs::path kDashboard = kChart / "dashboards" / "restack.json";
const fs::path kValidator = fs::path(RESTACK_SOURCE_DIR) / "tests" / "helm" / "validate_dashboard.js";

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class Dashboard : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kModules / "@grafana" / "schema")) << kModules << ": run scripts/setup.sh";
    auto dir = TempDir::create("restack-dashboard-test-");
    ASSERT_TRUE(dir);
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    metrics_path_ = (fs::path(dir_->path()) / "metrics.txt").string();
    worker::Metrics metrics;
    ASSERT_TRUE(writeTextFile(metrics_path_, metrics.prometheusText()));
  }

  CommandOutput validate(const fs::path& dashboard) {
    return runCommand("node " + shellQuote(kValidator.string()) + " " + shellQuote(kModules.string()) + " " +
                      shellQuote(dashboard.string()) + " " + shellQuote(metrics_path_));
  }

  // The dashboard with `from` replaced by `to` once.
  fs::path mutated(const std::string& from, const std::string& to) {
    std::string text = readFile(kDashboard);
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    const fs::path path = fs::path(dir_->path()) / ("mutated-" + std::to_string(++mutations_) + ".json");
    EXPECT_TRUE(writeTextFile(path.string(), text));
    return path;
  }

  std::unique_ptr<TempDir> dir_;
  std::string metrics_path_;
  int mutations_ = 0;
};

TEST_F(Dashboard, MatchesGrafanasTypesPromqlAndTheWorkersMetrics) {
  const CommandOutput result = validate(kDashboard);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("dashboard ok"), std::string::npos) << result.output;
}

// The checks can fail: each of these mistakes is caught, with a message that names it.
TEST_F(Dashboard, RefusesAMisspeltKeyABadQueryAndAMetricTheWorkerDoesNotExport) {
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      {"\"gridPos\"", "\"gridPosition\"", "gridPosition"},
      {"\"displayMode\": \"table\"", "\"displayMode\": 42", "Type 'number' is not assignable"},
      {"sum by (platform) (rate(", "sum by (platform) (rate((", "PromQL syntax error"},
      {"restack_store_bytes", "restack_store_size", "exports no restack_store_size"},
      {"\"uid\": \"${datasource}\"", "\"uid\": \"prometheus\"", "not on the $datasource variable"},
  };
  for (const Case& c : cases) {
    const CommandOutput result = validate(mutated(c.from, c.to));
    EXPECT_NE(result.exit_code, 0) << c.to << "\n" << result.output;
    EXPECT_NE(result.output.find(c.message), std::string::npos) << c.to << "\n" << result.output;
  }
}

TEST_F(Dashboard, TheChartShipsItAsAConfigMapForGrafanasSidecar) {
  ASSERT_TRUE(fs::exists(kHelm)) << kHelm << ": run scripts/setup.sh";
  const fs::path rendered = fs::path(dir_->path()) / "rendered.yaml";
  const CommandOutput result =
      runCommand(shellQuote(kHelm.string()) + " template restack " + shellQuote(kChart.string()) +
                 " --set config.kafka.brokers=k:9092 --set grafanaDashboard.enabled=true --show-only "
                 "templates/grafana-dashboard.yaml");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("kind: ConfigMap"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("grafana_dashboard: \"1\""), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("restack.json: |-"), std::string::npos) << result.output;
  // The JSON inside is the file's, line for line (indented by the YAML block).
  std::istringstream lines(readFile(kDashboard));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    ASSERT_NE(result.output.find("    " + line + "\n"), std::string::npos) << line;
  }
  const CommandOutput off = runCommand(shellQuote(kHelm.string()) + " template restack " + shellQuote(kChart.string()) +
                                       " --set config.kafka.brokers=k:9092");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(off.output.find("restack.json"), std::string::npos) << "off by default";
}

}  // namespace
}  // namespace restack

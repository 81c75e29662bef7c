// The exit statuses scripts rely on (docs/design.md §7): 0 for help and version, 2 for a usage
// error whatever the parser's own code for it, 1 for work that failed.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/run_command.h"

namespace restack {
namespace {

struct Ran {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Ran runRestack(const std::string& arguments) {
  auto ran = test_support::runCommand(test_support::shellQuote(RESTACK_BINARY) + " " + arguments);
  return {ran.exit_code, ran.output};
}

TEST(Cli, HelpListsEverySubcommandAndExitsZero) {
  const Ran ran = runRestack("--help");
  EXPECT_EQ(ran.status, 0) << ran.output;
  for (const char* subcommand : {"run", "demo", "ingest", "symbolicate"}) {
    EXPECT_NE(ran.output.find(subcommand), std::string::npos) << subcommand << "\n" << ran.output;
  }
}

TEST(Cli, VersionExitsZero) {
  const Ran ran = runRestack("--version");
  EXPECT_EQ(ran.status, 0) << ran.output;
  EXPECT_NE(ran.output.find("restack "), std::string::npos) << ran.output;
}

TEST(Cli, AnUnknownFlagIsAUsageErrorThatNamesIt) {
  const Ran ran = runRestack("symbolicate --no-such-flag");
  EXPECT_EQ(ran.status, 2) << ran.output;
  EXPECT_NE(ran.output.find("--no-such-flag"), std::string::npos) << ran.output;
}

TEST(Cli, AMissingRequiredFlagIsAUsageError) {
  const Ran ran = runRestack("run");
  EXPECT_EQ(ran.status, 2) << ran.output;
  EXPECT_NE(ran.output.find("--config"), std::string::npos) << ran.output;
}

TEST(Cli, NoSubcommandIsAUsageError) {
  const Ran ran = runRestack("");
  EXPECT_EQ(ran.status, 2) << ran.output;
}

TEST(Cli, WorkThatFailsExitsOne) {
  const Ran ran = runRestack("symbolicate --symbols /nonexistent/restack-cli-test.map");
  EXPECT_EQ(ran.status, 1) << ran.output;
  EXPECT_NE(ran.output.find("/nonexistent/restack-cli-test.map"), std::string::npos) << ran.output;
}

TEST(Cli, HelpPointsToTheDesignInTheRepository) {
  const Ran ran = runRestack("symbolicate --help");
  EXPECT_EQ(ran.status, 0) << ran.output;
  EXPECT_EQ(ran.output.find("DESIGN.md"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("docs/design.md"), std::string::npos) << ran.output;
}

}  // namespace
}  // namespace restack

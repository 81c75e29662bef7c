// The Prometheus text of the worker's histograms (worker/kafka/metrics.h): cumulative buckets,
// +Inf equal to _count, and the sum in seconds.
#include <gtest/gtest.h>

#include <sstream>

#include "worker/kafka/metrics.h"
#include "worker/pipeline/kinds/java_kind.h"
#include "worker/pipeline/kinds/native_kind.h"

namespace restack::worker {
namespace {

std::string lineOf(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix)) return line;
  }
  return "<missing " + prefix + ">";
}

TEST(Histogram, BucketsAreCumulativeAndCountEqualsInf) {
  Histogram histogram;
  for (double seconds : {0.0005, 0.001, 0.003, 0.2, 0.2, 7.0, 120.0}) histogram.observe(seconds);
  histogram.observe(-1);  // a clock step back counts as 0
  std::string text;
  histogram.write(text, "restore_seconds", "help");
  EXPECT_EQ(lineOf(text, "# TYPE "), "# TYPE restack_restore_seconds histogram");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_bucket{le=\"0.001\"}"),
            "restack_restore_seconds_bucket{le=\"0.001\"} 3");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_bucket{le=\"0.005\"}"),
            "restack_restore_seconds_bucket{le=\"0.005\"} 4");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_bucket{le=\"0.25\"}"),
            "restack_restore_seconds_bucket{le=\"0.25\"} 6");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_bucket{le=\"10\"}"), "restack_restore_seconds_bucket{le=\"10\"} 7");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_bucket{le=\"60\"}"), "restack_restore_seconds_bucket{le=\"60\"} 7");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_bucket{le=\"+Inf\"}"),
            "restack_restore_seconds_bucket{le=\"+Inf\"} 8");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_count"), "restack_restore_seconds_count 8");
  EXPECT_EQ(lineOf(text, "restack_restore_seconds_sum"), "restack_restore_seconds_sum 127.404500");
}

TEST(Metrics, EventsByPlatformHaveALineEachAndUnknownPlatformsCountAsOther) {
  Metrics metrics;
  ++metrics.events_by_platform[platformIndex("android")];
  ++metrics.events_by_platform[platformIndex("flutter")];
  const std::string text = metrics.prometheusText();
  EXPECT_EQ(lineOf(text, "restack_events_by_platform_total{platform=\"android\"}"),
            "restack_events_by_platform_total{platform=\"android\"} 1");
  EXPECT_EQ(lineOf(text, "restack_events_by_platform_total{platform=\"other\"}"),
            "restack_events_by_platform_total{platform=\"other\"} 1");
  EXPECT_EQ(lineOf(text, "restack_events_by_platform_total{platform=\"ios\"}"),
            "restack_events_by_platform_total{platform=\"ios\"} 0");
  EXPECT_NE(text.find("# TYPE restack_end_to_end_latency_seconds histogram\n"), std::string::npos);
}

TEST(Metrics, FramesByKindAndStatusAndTheOnesNotRestoredByReason) {
  Metrics metrics;
  metrics.frames_by_kind[pipeline::frameTallyIndex(&pipeline::javaKind(), FrameStatus::kSymbolicated)] = 7;
  metrics.frames_by_kind[pipeline::frameTallyIndex(&pipeline::nativeKind(), FrameStatus::kMissingSymbols)] = 3;
  const std::string text = metrics.prometheusText();
  EXPECT_EQ(lineOf(text, "restack_frames_by_kind_total{kind=\"java\",status=\"symbolicated\"}"),
            "restack_frames_by_kind_total{kind=\"java\",status=\"symbolicated\"} 7");
  EXPECT_EQ(lineOf(text, "restack_frames_not_restored_total{kind=\"native\",reason=\"missing_symbols\"}"),
            "restack_frames_not_restored_total{kind=\"native\",reason=\"missing_symbols\"} 3");
  EXPECT_EQ(lineOf(text, "restack_frames_not_restored_total{kind=\"java\",reason=\"symbolicated\"}"),
            "<missing restack_frames_not_restored_total{kind=\"java\",reason=\"symbolicated\"}>");
}

// The reason label is FrameReason's name; a status counts every reason of that status, and
// frames restored with something missing are counted apart from those not restored.
TEST(Metrics, FramesNotFullyRestoredAreCountedByTheirReason) {
  Metrics metrics;
  metrics.frames_by_kind[pipeline::frameTallyIndex(&pipeline::nativeKind(), FrameReason::kNone)] = 5;
  metrics.frames_by_kind[pipeline::frameTallyIndex(&pipeline::nativeKind(), FrameReason::kNoLineInfo)] = 2;
  metrics.frames_by_kind[pipeline::frameTallyIndex(&pipeline::nativeKind(), FrameReason::kAddressOutsideModule)] = 4;
  metrics.frames_by_kind[pipeline::frameTallyIndex(&pipeline::nativeKind(), FrameReason::kMalformedSymbols)] = 1;
  metrics.frames_by_kind[pipeline::frameTallyIndex(nullptr, FrameReason::kFrameLimit)] = 9;
  const std::string text = metrics.prometheusText();
  EXPECT_EQ(lineOf(text, "restack_frames_by_kind_total{kind=\"native\",status=\"symbolicated\"}"),
            "restack_frames_by_kind_total{kind=\"native\",status=\"symbolicated\"} 7");
  EXPECT_EQ(lineOf(text, "restack_frames_by_kind_total{kind=\"native\",status=\"not_found\"}"),
            "restack_frames_by_kind_total{kind=\"native\",status=\"not_found\"} 5");
  EXPECT_EQ(lineOf(text, "restack_frames_not_restored_total{kind=\"native\",reason=\"address_outside_module\"}"),
            "restack_frames_not_restored_total{kind=\"native\",reason=\"address_outside_module\"} 4");
  EXPECT_EQ(lineOf(text, "restack_frames_not_restored_total{kind=\"native\",reason=\"malformed_symbols\"}"),
            "restack_frames_not_restored_total{kind=\"native\",reason=\"malformed_symbols\"} 1");
  EXPECT_EQ(lineOf(text, "restack_frames_not_restored_total{kind=\"unknown\",reason=\"frame_limit\"}"),
            "restack_frames_not_restored_total{kind=\"unknown\",reason=\"frame_limit\"} 9");
  EXPECT_EQ(lineOf(text, "restack_frames_partly_restored_total{kind=\"native\",reason=\"no_line_info\"}"),
            "restack_frames_partly_restored_total{kind=\"native\",reason=\"no_line_info\"} 2");
  EXPECT_EQ(lineOf(text, "restack_frames_partly_restored_total{kind=\"java\",reason=\"ambiguous\"}"),
            "restack_frames_partly_restored_total{kind=\"java\",reason=\"ambiguous\"} 0");
  // Partly restored reasons are not "not restored", and the other way round.
  EXPECT_EQ(lineOf(text, "restack_frames_not_restored_total{kind=\"native\",reason=\"no_line_info\"}"),
            "<missing restack_frames_not_restored_total{kind=\"native\",reason=\"no_line_info\"}>");
  EXPECT_EQ(lineOf(text, "restack_frames_partly_restored_total{kind=\"native\",reason=\"unparsed\"}"),
            "<missing restack_frames_partly_restored_total{kind=\"native\",reason=\"unparsed\"}>");
}

TEST(Metrics, DeadLettersAreCountedByTheCodeOfTheirReason) {
  Metrics metrics;
  metrics.countDeadLetter(ErrorCode::kMalformedInput);
  metrics.countDeadLetter(ErrorCode::kMalformedInput);
  metrics.countDeadLetter(ErrorCode::kTooLarge);
  const std::string text = metrics.prometheusText();
  EXPECT_EQ(lineOf(text, "restack_events_dead_lettered_by_code_total{code=\"malformed_input\"}"),
            "restack_events_dead_lettered_by_code_total{code=\"malformed_input\"} 2");
  EXPECT_EQ(lineOf(text, "restack_events_dead_lettered_by_code_total{code=\"too_large\"}"),
            "restack_events_dead_lettered_by_code_total{code=\"too_large\"} 1");
  EXPECT_EQ(lineOf(text, "restack_events_dead_lettered_by_code_total{code=\"internal\"}"),
            "restack_events_dead_lettered_by_code_total{code=\"internal\"} 0");
}

}  // namespace
}  // namespace restack::worker

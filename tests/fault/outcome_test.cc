// The fault test's counting rules (loadtest/fault/outcome.h) on hand-made outputs: provisional
// then final is one restored event, repeats are duplicates, a differing final output is wrong, an
// event with only a provisional output is lost.
#include "loadtest/fault/outcome.h"

#include <gtest/gtest.h>

namespace restack::fault {
namespace {

std::string restoredJson(const std::string& id, const std::string& status, const std::string& function,
                         const std::string& replaces = "") {
  return R"({"event_id":")" + id + R"(","app":"a","threads":[{"frames":[{"function":")" + function +
         R"("}]}],"symbolication":{"status":")" + status + R"("},"fingerprint":{"fingerprint":"f1","event_id":")" + id +
         R"(")" + (replaces.empty() ? "" : R"(,"replaces":")" + replaces + R"(")") + "}}";
}

RestoredRecord record(const std::string& json) {
  auto parsed = canonicalRestored(json);
  EXPECT_TRUE(parsed) << parsed.error().message();
  return parsed ? *parsed : RestoredRecord{};
}

TEST(FaultOutcome, CanonicalFormIgnoresEventIdsAndReplaces) {
  RestoredRecord offline = record(restoredJson("template", "complete", "main"));
  RestoredRecord late = record(restoredJson("a/1/template/7", "complete", "main", "f0"));
  EXPECT_EQ(late.event_id, "a/1/template/7");
  EXPECT_FALSE(late.pending);
  EXPECT_EQ(offline.canonical, late.canonical);
  EXPECT_NE(offline.canonical, record(restoredJson("template", "complete", "other")).canonical);
  EXPECT_TRUE(record(restoredJson("x", "pending", "main")).pending);
  EXPECT_FALSE(canonicalRestored("[1,2]"));
  EXPECT_FALSE(canonicalRestored(R"({"app":"a"})"));
}

TEST(FaultOutcome, CountsRestoredLostDuplicatedWrong) {
  EventExpectation complete{false, false, record(restoredJson("t", "complete", "main")).canonical};
  EventExpectation stays_pending{false, true, record(restoredJson("t", "pending", "main")).canonical};
  EventExpectation unreadable{true, false, ""};
  std::map<std::string, const EventExpectation*> expected = {
      {"late", &complete},   {"twice", &complete},       {"stuck", &complete},
      {"silent", &complete}, {"bad", &complete},         {"ios", &stays_pending},
      {"dlq", &unreadable},  {"dlq-twice", &unreadable}, {"dlq-restored", &unreadable}};
  std::vector<RestoredRecord> outputs = {
      record(restoredJson("late", "pending", "0x1")),  // provisional, then final: restored, no duplicate
      record(restoredJson("late", "complete", "main", "f0")),
      record(restoredJson("twice", "complete", "main")),  // final twice: one duplicate
      record(restoredJson("twice", "complete", "main")),
      record(restoredJson("stuck", "pending", "0x1")),  // only provisional (twice): lost + duplicate
      record(restoredJson("stuck", "pending", "0x1")),
      record(restoredJson("bad", "complete", "wrong_function")),  // differs: wrong
      record(restoredJson("ios", "pending", "main")),             // pending for good: final
      record(restoredJson("dlq-restored", "complete", "main")),   // must go to the DLQ: wrong
      record(restoredJson("stranger", "complete", "main")),       // never produced
  };
  std::map<std::string, uint64_t> dead_letters = {{"dlq", 1}, {"dlq-twice", 2}, {"dlq-restored", 1}};
  Tally t = tally(expected, outputs, dead_letters);
  EXPECT_EQ(t.events, 9u);
  EXPECT_EQ(t.restored, 5u);  // late, twice, ios, dlq, dlq-twice
  EXPECT_EQ(t.lost, 2u);      // stuck, silent
  EXPECT_EQ(t.stuck_pending, 1u);
  EXPECT_EQ(t.wrong, 2u);       // bad, dlq-restored
  EXPECT_EQ(t.duplicated, 3u);  // twice, stuck, dlq-twice
  EXPECT_EQ(t.restored_late, 1u);
  EXPECT_EQ(t.unknown_records, 1u);
  EXPECT_EQ(t.restored + t.lost + t.wrong, t.events);
}

TEST(FaultOutcome, ReadableEventOnTheDlqIsWrong) {
  EventExpectation complete{false, false, record(restoredJson("t", "complete", "main")).canonical};
  std::map<std::string, const EventExpectation*> expected = {{"e", &complete}};
  Tally t = tally(expected, {record(restoredJson("e", "complete", "main"))}, {{"e", 1}});
  EXPECT_EQ(t.wrong, 1u);
  EXPECT_EQ(t.restored, 0u);
}

}  // namespace
}  // namespace restack::fault

// The fault test's verdict: every event produced, what `restack symbolicate` gives offline for
// it, and every output record read back (read_committed) -> restored, lost, duplicated, wrong.
//
// Counting rules (scripts/fault-test.sh repeats them for operators):
//   - A restored event whose symbolication.status is "pending" is PROVISIONAL when the offline
//     restoration of the same event with all its build's symbols is not pending: the worker
//     published it before the symbols arrived and owes a FINAL one (any other status) later.
//     A provisional output followed by a final one is not a duplicate.
//   - When the offline restoration itself is pending (a frame of an image nobody uploads), every
//     output of that event is final.
//   - An unreadable event's final outcome is its DLQ record.
//   - restored: the event has at least one final outcome and every final outcome matches.
//   - wrong: some final outcome differs from the offline restoration (threads with their frames,
//     statuses and restored text, exception, symbolication, fingerprint without "replaces" and
//     its copy of the event id), or
//     an event expected on the DLQ was restored, or a restorable event went to the DLQ.
//   - lost: no final outcome at all (stuck_pending counts those of them that got a provisional).
//   - duplicated: final outcomes beyond the first, plus provisional outcomes beyond the first.
// restored + lost + wrong = events.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"

namespace restack::fault {

struct EventExpectation {
  bool dead_letter = false;    // unreadable on purpose: one DLQ record, no restored event
  bool final_pending = false;  // pending even with every symbol of its build uploaded
  std::string canonical;       // canonicalRestored() of the offline restoration
};

// One restored-event record as read from the output topic.
struct RestoredRecord {
  std::string event_id;
  bool pending = false;
  std::string canonical;
  // Where and when it was read ("p3@117 +52.1s": output partition, offset, seconds since the
  // test began), named in the lines about duplicates so that a failure says which outputs repeat.
  std::string where;
};

// The fields of a restored event (docs/design.md §5) that must not depend on where, when or how
// often it was restored; see the counting rules above.
Expected<RestoredRecord> canonicalRestored(std::string_view json);

struct Tally {
  uint64_t events = 0;
  uint64_t restored = 0;
  uint64_t lost = 0;
  uint64_t duplicated = 0;
  uint64_t wrong = 0;
  uint64_t stuck_pending = 0;        // lost events that only ever got a provisional output
  uint64_t restored_late = 0;        // restored events that had a provisional output first
  uint64_t unknown_records = 0;      // restored records of event ids never produced
  std::vector<std::string> samples;  // a few lines describing lost / wrong / duplicated events
  // Duplicated outputs per event id prefix up to its second '/' (the fault test's "app/build"):
  // whether repeats are spread or come from a few builds' partitions.
  std::map<std::string, uint64_t> duplicated_by_group;
};

// `expected`: event id -> what it must become; `restored`: every restored record read;
// `dead_letters`: event id -> number of DLQ records carrying it.
Tally tally(const std::map<std::string, const EventExpectation*>& expected, const std::vector<RestoredRecord>& restored,
            const std::map<std::string, uint64_t>& dead_letters, size_t max_samples = 12);

}  // namespace restack::fault

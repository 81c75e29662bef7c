#include "loadtest/fault/outcome.h"

#include <simdjson.h>

#include <algorithm>

namespace restack::fault {

Expected<RestoredRecord> canonicalRestored(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json.data(), json.size(), true).get(root) != simdjson::SUCCESS || !root.is_object()) {
    return invalidArgument("a restored event that is not a JSON object: " + std::string(json.substr(0, 200)));
  }
  RestoredRecord record;
  std::string canonical;
  // The object is held in a variable: a range-for over a member of the temporary result would
  // read it after the temporary is gone (AddressSanitizer: stack-use-after-scope).
  const simdjson::dom::object fields = root.get_object().value_unsafe();
  for (auto field : fields) {
    const std::string_view key = field.key;
    if (key == "event_id") {
      std::string_view id;
      if (field.value.get_string().get(id) == simdjson::SUCCESS) record.event_id = id;
      continue;  // each copy of an event has its own id; the offline one is the template's
    }
    canonical += '"';
    canonical += key;
    canonical += "\":";
    if (key == "fingerprint" && field.value.is_object()) {
      // A final output restored later names the provisional fingerprint it replaces; offline
      // there is none to replace. The record repeats the event id.
      canonical += '{';
      bool first = true;
      const simdjson::dom::object parts = field.value.get_object().value_unsafe();
      for (auto part : parts) {
        if (part.key == "replaces" || part.key == "event_id") continue;
        if (!first) canonical += ',';
        first = false;
        canonical += '"';
        canonical += part.key;
        canonical += "\":";
        canonical += simdjson::minify(part.value);
      }
      canonical += '}';
    } else {
      canonical += simdjson::minify(field.value);
    }
    canonical += ',';
    if (key == "symbolication") {
      std::string_view status;
      if (field.value["status"].get_string().get(status) == simdjson::SUCCESS) record.pending = status == "pending";
    }
  }
  if (record.event_id.empty()) return invalidArgument("a restored event without event_id");
  record.canonical = std::move(canonical);
  return record;
}

namespace {

// Where two canonical forms part, with some context of each.
std::string difference(const std::string& got, const std::string& expected) {
  size_t at = 0;
  while (at < got.size() && at < expected.size() && got[at] == expected[at]) ++at;
  const size_t from = at > 120 ? at - 120 : 0;
  return "differs at byte " + std::to_string(at) + ":\n    got      ..." + got.substr(from, 400) +
         "\n    expected ..." + expected.substr(from, 400);
}

}  // namespace

Tally tally(const std::map<std::string, const EventExpectation*>& expected, const std::vector<RestoredRecord>& restored,
            const std::map<std::string, uint64_t>& dead_letters, size_t max_samples) {
  struct Seen {
    uint64_t finals = 0;
    uint64_t provisionals = 0;
    uint64_t mismatched = 0;
    std::string first_mismatch;
    std::string where;  // every output's RestoredRecord::where, in reading order
  };
  Tally result;
  std::map<std::string, Seen> seen;
  for (const RestoredRecord& record : restored) {
    auto it = expected.find(record.event_id);
    if (it == expected.end()) {
      ++result.unknown_records;
      continue;
    }
    const EventExpectation& want = *it->second;
    Seen& s = seen[record.event_id];
    if (!record.where.empty())
      s.where += (s.where.empty() ? "" : ", ") + std::string(record.pending ? "pending " : "") + record.where;
    if (want.dead_letter) {
      ++s.mismatched;
      if (s.first_mismatch.empty()) s.first_mismatch = "restored although it must go to the DLQ";
      continue;
    }
    if (record.pending && !want.final_pending) {
      ++s.provisionals;
      continue;
    }
    ++s.finals;
    if (record.canonical != want.canonical) {
      ++s.mismatched;
      if (s.first_mismatch.empty()) s.first_mismatch = difference(record.canonical, want.canonical);
    }
  }
  // A few of each kind, lost and wrong first: those are what a reader of the log needs.
  std::vector<std::string> lost_samples, wrong_samples, duplicate_samples;
  const size_t per_kind = std::max<size_t>(1, max_samples / 3);
  auto sample = [&](std::vector<std::string>& samples, const std::string& line) {
    if (samples.size() < per_kind) samples.push_back(line);
  };
  for (const auto& [id, want] : expected) {
    ++result.events;
    Seen s = seen.count(id) ? seen[id] : Seen{};
    const auto dlq = dead_letters.find(id);
    const uint64_t dlq_count = dlq == dead_letters.end() ? 0 : dlq->second;
    if (want->dead_letter) {
      s.finals = dlq_count;
    } else if (dlq_count > 0) {
      ++s.mismatched;
      if (s.first_mismatch.empty()) s.first_mismatch = "sent to the DLQ although it is readable";
    }
    if (s.mismatched > 0) {
      ++result.wrong;
      sample(wrong_samples, "wrong " + id + ": " + s.first_mismatch);
    } else if (s.finals == 0) {
      ++result.lost;
      if (s.provisionals > 0) ++result.stuck_pending;
      sample(lost_samples,
             "lost " + id + (s.provisionals > 0 ? " (only a provisional pending output)" : " (no output at all)"));
    } else {
      ++result.restored;
      if (s.provisionals > 0) ++result.restored_late;
    }
    const uint64_t extra = (s.finals > 1 ? s.finals - 1 : 0) + (s.provisionals > 1 ? s.provisionals - 1 : 0);
    if (extra > 0) {
      result.duplicated += extra;
      const size_t app_end = id.find('/');
      const size_t build_end = app_end == std::string::npos ? std::string::npos : id.find('/', app_end + 1);
      result.duplicated_by_group[id.substr(0, build_end)] += extra;
      sample(duplicate_samples, "duplicated " + id + ": " + std::to_string(s.finals) + " final and " +
                                    std::to_string(s.provisionals) + " provisional output(s)" +
                                    (s.where.empty() ? "" : " (" + s.where + ")"));
    }
  }
  for (auto* samples : {&lost_samples, &wrong_samples, &duplicate_samples}) {
    result.samples.insert(result.samples.end(), samples->begin(), samples->end());
  }
  return result;
}

}  // namespace restack::fault

// Thread-dump lines about the thread (see thread_note_line.h).
#include "formats/stack/thread_note_line.h"

namespace restack::stack {

std::optional<ThreadNoteLine> parseThreadNoteLine(std::string_view trimmed) {
  if (trimmed.starts_with("- ")) {
    // A monitor the thread holds or waits for.
    const std::string_view rest = trimmed.substr(2);
    for (std::string_view verb :
         {"waiting on ", "waiting to lock ", "locked ", "sleeping on ", "parking to wait for ", "eliminated "}) {
      if (rest.starts_with(verb)) return ThreadNoteLine{};
    }
    return std::nullopt;
  }
  // ART's thread header ("main" prio=5 tid=1 Native) and jstack's ("main" #1 prio=5 os_prio=0 …).
  if (trimmed.starts_with('"') && trimmed.find("\" ", 1) != std::string_view::npos &&
      trimmed.find(" prio=") != std::string_view::npos) {
    return ThreadNoteLine{};
  }
  // ART's thread properties ("| group=… sCount=…", "| sysTid=…", "| held mutexes=").
  if (trimmed.starts_with("| ") && trimmed.find('=') != std::string_view::npos) return ThreadNoteLine{};
  if (trimmed.starts_with("java.lang.Thread.State: ") || trimmed == "(no managed stack frames)") {
    return ThreadNoteLine{};
  }
  return std::nullopt;
}

constinit const LineSyntaxOf<ThreadNoteLine> kThreadNoteLine("thread_note", false, parseThreadNoteLine);

}  // namespace restack::stack

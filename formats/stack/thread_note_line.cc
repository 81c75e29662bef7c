// Thread-dump lines about the thread (see thread_note_line.h).
#include "formats/stack/thread_note_line.h"

namespace restack::stack {

bool isThreadDumpHeader(std::string_view trimmed) {
  if (!trimmed.starts_with('"')) return false;
  const size_t close = trimmed.find("\" ", 1);
  if (close == std::string_view::npos) return false;
  const std::string_view rest = trimmed.substr(close + 1);
  return rest.find(" prio=") != std::string_view::npos || rest.find(" tid=") != std::string_view::npos;
}

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
  if (isThreadDumpHeader(trimmed)) return ThreadNoteLine{};
  // ART's thread properties ("| group=… sCount=…", "| sysTid=…", "| held mutexes=").
  if (trimmed.starts_with("| ") && trimmed.find('=') != std::string_view::npos) return ThreadNoteLine{};
  if (trimmed.starts_with("java.lang.Thread.State: ") || trimmed == "(no managed stack frames)") {
    return ThreadNoteLine{};
  }
  return std::nullopt;
}

constinit const LineSyntaxOf<ThreadNoteLine> kThreadNoteLine("thread_note", false, parseThreadNoteLine);

}  // namespace restack::stack

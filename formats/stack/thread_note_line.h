// Lines of a thread dump that are about the thread, not frames: the "thread_note" syntax. Android's
// ANR dumps (ART's traces, ApplicationExitInfo) and the JVM's jstack print them among the frames:
//   "main" prio=5 tid=1 Native                          (ART's thread header; Play Console's
//                                                        "main" tid=1 Blocked has no prio)
//   | group="main" sCount=1 ucsCount=0 flags=1 obj=0x72d6f8b8 self=0xb400007b7c810380
//   - waiting on <0x0c2d3e4f> (a java.lang.Object)
//   - waiting to lock <0x0a1b2c3d> (a com.example.Cart) held by thread 12
//   - locked <0x0a1b2c3d> (a com.example.Cart)
//   - parking to wait for <0x000000071a4c2b58> (a java.util.concurrent.CountDownLatch$Sync)
//   java.lang.Thread.State: WAITING (parking)           (jstack)
//   (no managed stack frames)
// They are kept in the restored text as they came and are neither frames nor unparsed ones.
#pragma once

#include <optional>
#include <string_view>

#include "formats/stack/stack_line.h"

namespace restack::stack {

struct ThreadNoteLine {};

// A thread's header in a thread dump: "main" prio=5 tid=1 Native, "main" tid=1 Blocked,
// "main" #1 prio=5 os_prio=0 … (jstack). The thread's name is between the quotes.
bool isThreadDumpHeader(std::string_view trimmed);

// Returns std::nullopt when the (trimmed) line is no thread note. Exposed for tests and fuzzing.
std::optional<ThreadNoteLine> parseThreadNoteLine(std::string_view trimmed);

extern const LineSyntaxOf<ThreadNoteLine> kThreadNoteLine;

inline bool isThreadNote(const StackLine& line) {
  return kThreadNoteLine.payloadOf(line) != nullptr;
}

}  // namespace restack::stack

#include "worker/pipeline/event_restorer.h"

#include <span>

#include "worker/pipeline/restored_text.h"

namespace restack::pipeline {
namespace {

bool isJavaLine(stack::LineKind kind) {
  return kind == stack::LineKind::kJavaFrame || kind == stack::LineKind::kJavaException ||
         kind == stack::LineKind::kJavaMore;
}

// Turns a resolver's answer for one raw line into output frames.
std::vector<OutputFrame> toOutputFrames(const stack::StackLine& line, FrameFamily family, FrameLookup lookup) {
  std::vector<OutputFrame> out;
  if (lookup.removed) return out;
  if (lookup.status != FrameStatus::kSymbolicated || lookup.frames.empty()) {
    OutputFrame frame;
    frame.raw = line.raw;
    frame.family = family;
    frame.status = lookup.status == FrameStatus::kSymbolicated ? FrameStatus::kNotFound : lookup.status;
    frame.tier = lookup.tier;
    frame.note = lookup.note;
    frame.missing_id = lookup.missing_id;
    out.push_back(std::move(frame));
    return out;
  }
  for (size_t i = 0; i < lookup.frames.size(); ++i) {
    OutputFrame frame;
    frame.raw = line.raw;
    frame.family = family;
    frame.status = FrameStatus::kSymbolicated;
    frame.frame = std::move(lookup.frames[i]);
    frame.tier = lookup.tier;
    frame.note = lookup.note;
    if (i == 0) frame.alternatives = std::move(lookup.alternatives);
    out.push_back(std::move(frame));
  }
  return out;
}

// Engine code ("at Array.map (<anonymous>)") is already as restored as it gets: it counts as
// restored, not as a failure, and is never the app's own code.
FrameLookup builtinFrame(const stack::JsFrameLine& frame) {
  FrameLookup lookup;
  lookup.status = FrameStatus::kSymbolicated;
  lookup.tier = "builtin";
  SymbolizedFrame out;
  out.function = frame.function;
  out.file = frame.url;
  out.in_app = false;
  lookup.frames.push_back(std::move(out));
  return lookup;
}

}  // namespace

const char* frameFamilyName(FrameFamily family) {
  switch (family) {
    case FrameFamily::kNative:
      return "native";
    case FrameFamily::kJava:
      return "java";
    case FrameFamily::kJs:
      return "js";
    case FrameFamily::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const char* symbolicationStateName(SymbolicationState state) {
  switch (state) {
    case SymbolicationState::kComplete:
      return "complete";
    case SymbolicationState::kPartial:
      return "partial";
    case SymbolicationState::kPending:
      return "pending";
  }
  return "partial";
}

Expected<RestoredStack> EventRestorer::restoreStack(const EventScope& scope, std::string_view stack_text,
                                                    RestoredEvent& summary) {
  const std::vector<stack::StackLine> lines = stack::parseStack(stack_text);
  RestoredStack out;
  std::vector<std::string> text;
  bool seen_native = false;
  uint32_t raw_frames = 0;

  auto record = [&](const stack::StackLine& line, FrameFamily family, FrameLookup lookup) {
    ++raw_frames;
    ++summary.frames_total;
    ++summary.frames_by_family[frameTallyIndex(family, lookup.status)];
    if (lookup.status == FrameStatus::kSymbolicated) ++summary.frames_symbolicated;
    if (lookup.status == FrameStatus::kMissingSymbols) {
      summary.any_missing = true;
      if (!lookup.missing_id.empty()) summary.missing_ids.insert(lookup.missing_id);
    }
    if (lookup.status == FrameStatus::kNotFound || lookup.status == FrameStatus::kUnparsed)
      summary.any_unrestored = true;
    const bool removed = lookup.removed;
    const size_t first = out.frames.size();
    for (OutputFrame& frame : toOutputFrames(line, family, std::move(lookup))) out.frames.push_back(std::move(frame));
    if (removed) return;  // synthesized / outlined frames vanish from the text too
    std::vector<const OutputFrame*> added;
    for (size_t k = first; k < out.frames.size(); ++k) added.push_back(&out.frames[k]);
    appendRestoredLines(line, added, text);
  };

  for (size_t i = 0; i < lines.size();) {
    const stack::StackLine& line = lines[i];
    if (line.kind == stack::LineKind::kBlank) {
      text.push_back(line.raw);
      ++i;
      continue;
    }
    if (raw_frames >= limits_.max_frames_per_thread) {
      FrameLookup skipped;
      skipped.status = FrameStatus::kUnparsed;
      skipped.note = "not restored: the thread has more than limits.max_frames_per_thread frames";
      record(line, FrameFamily::kUnknown, std::move(skipped));
      ++i;
      continue;
    }
    if (isJavaLine(line.kind)) {
      // A Java run goes to the retracer whole: rules such as rewriteFrame depend on the
      // exception line above a frame.
      size_t end = i;
      while (end < lines.size() && isJavaLine(lines[end].kind)) ++end;
      std::span<const stack::StackLine> run(lines.data() + i, end - i);
      auto results = symbolizer_.proguard().retrace(scope, run);
      if (!results) return results.error();
      if (results->size() != run.size()) {
        return Error(ErrorCode::kInternal, "retrace answered " + std::to_string(results->size()) + " lines for " +
                                               std::to_string(run.size()));
      }
      for (size_t k = 0; k < run.size(); ++k) {
        const stack::StackLine& java = run[k];
        JavaLineResult& result = (*results)[k];
        if (java.kind == stack::LineKind::kJavaFrame) {
          record(java, FrameFamily::kJava, std::move(result.lookup));
        } else if (java.kind == stack::LineKind::kJavaException) {
          const auto* header = java.javaException();
          const std::string& name = result.exception_class.empty() ? header->class_name : result.exception_class;
          const std::string& message = result.exception_message.empty() ? header->message : result.exception_message;
          text.push_back(formatJavaException(java, name, message));
          out.sections.push_back({header->prefix, name, message, out.frames.size()});
        } else if (java.kind == stack::LineKind::kJavaMore && result.more_count) {
          // The elided frames restore to a different number of lines (proguard_resolver.h).
          if (*result.more_count > 0)
            text.push_back(java.indent + "... " + std::to_string(*result.more_count) + " more");
        } else {
          text.push_back(java.raw);
        }
      }
      i = end;
      continue;
    }
    if (const auto* native = line.native()) {
      // Every frame but the first holds a return address: look up the call instruction before it.
      const bool is_pc = native->frame_index ? *native->frame_index == 0 : !seen_native;
      seen_native = true;
      const uint64_t address = (is_pc || native->address == 0) ? native->address : native->address - 1;
      auto lookup = symbolizer_.native().lookup(scope, *native, address);
      if (!lookup) return lookup.error();
      record(line, FrameFamily::kNative, std::move(*lookup));
    } else if (const auto* js = line.jsFrame()) {
      if (js->builtin) {
        record(line, FrameFamily::kJs, builtinFrame(*js));
      } else {
        auto lookup = symbolizer_.sourcemap().lookup(scope, *js);
        if (!lookup) return lookup.error();
        record(line, FrameFamily::kJs, std::move(*lookup));
      }
    } else {
      FrameLookup unparsed;
      unparsed.status = FrameStatus::kUnparsed;
      record(line, FrameFamily::kUnknown, std::move(unparsed));
    }
    ++i;
  }
  for (size_t k = 0; k < text.size(); ++k) {
    if (k) out.restored_text.push_back('\n');
    out.restored_text += text[k];
  }
  return out;
}

Expected<RestoredEvent> EventRestorer::restore(const RawEvent& event) {
  EventScope scope{event.app, event.build_id, event.platform, event.proguard_map_id};
  RestoredEvent restored;
  restored.exception_type = event.exception_type;
  restored.exception_message = event.exception_message;
  if (event.has_exception && event.platform == "android") {
    if (!event.exception_type.empty()) {
      auto name = symbolizer_.proguard().deobfuscateClass(scope, event.exception_type);
      if (!name) return name.error();
      if (name->has_value()) restored.exception_type = **name;
    }
    if (!event.exception_message.empty()) {
      auto message = symbolizer_.proguard().deobfuscateMessage(scope, event.exception_message);
      if (!message) return message.error();
      if (message->has_value()) restored.exception_message = **message;
    }
  }
  for (const RawThread& thread : event.threads) {
    RestoredThread out;
    if (thread.has_stack) {
      auto stack = restoreStack(scope, thread.stack, restored);
      if (!stack) return stack.error();
      out.stack = std::move(*stack);
    }
    for (const RawSample& sample : thread.samples) {
      auto stack = restoreStack(scope, sample.stack, restored);
      if (!stack) return stack.error();
      out.samples.push_back(std::move(*stack));
    }
    restored.threads.push_back(std::move(out));
  }
  restored.state = restored.any_missing      ? SymbolicationState::kPending
                   : restored.any_unrestored ? SymbolicationState::kPartial
                                             : SymbolicationState::kComplete;
  return restored;
}

}  // namespace restack::pipeline

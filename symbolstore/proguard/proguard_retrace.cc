#include "symbolstore/proguard/proguard_retrace.h"

#include <algorithm>
#include <tuple>

#include "formats/proguard/mapping_reader.h"

namespace restack::proguard {
namespace {

// An ambiguous original range is split into at most this many answers (one per line).
constexpr uint32_t kMaxSplitLines = 256;

using Chain = MethodRecord::Chain;

// A chain chosen for the frame, with the position it was chosen for.
struct Candidate {
  size_t overload = 0;  // index into MethodRecord::overloads
  Chain chain;
  std::optional<uint32_t> position;
};

// An original range that a single position cannot narrow to one line.
bool isRangeAmbiguous(const RangeRecord& range) {
  if (!range.original || range.original->span() == 1) return false;
  return !range.minified || range.minified->span() != range.original->span();
}

const Chain* chainAt(const MethodRecord& method, size_t overload, uint32_t position) {
  for (uint32_t index : method.overloads[overload]) {
    const Chain& chain = method.chains[index];
    const RangeRecord& first = method.ranges[chain.first];
    if (first.minified && first.minified->contains(position)) return &chain;
  }
  return nullptr;
}

void selectCandidates(const MethodRecord& method, std::optional<uint32_t> position,
                      std::vector<Candidate>& candidates) {
  for (size_t m = 0; m < method.overloads.size(); ++m) {
    if (position) {
      if (const Chain* chain = chainAt(method, m, *position)) {
        candidates.push_back({m, *chain, position});
      }
      continue;
    }
    if (const Chain* chain = chainAt(method, m, 0)) {
      candidates.push_back({m, *chain, position});
      continue;
    }
    for (uint32_t index : method.overloads[m]) {
      const Chain& chain = method.chains[index];
      if (!method.ranges[chain.first].minified) {
        candidates.push_back({m, chain, position});
        break;
      }
    }
  }
  if (!candidates.empty() || !position) return;
  // A position outside every minified range: the ranges without one still name the method.
  for (size_t m = 0; m < method.overloads.size(); ++m) {
    for (uint32_t index : method.overloads[m]) {
      const Chain& chain = method.chains[index];
      if (!method.ranges[chain.first].minified) candidates.push_back({m, chain, position});
    }
  }
}

std::optional<uint32_t> lookupCallsite(const OutlineCallsite& callsite, uint32_t outline_position) {
  for (auto [from, to] : callsite.positions) {
    if (from == outline_position) return to;
  }
  return std::nullopt;
}

// The line of one frame of an answer (rule 4 of the header); nullopt = "the mapping cannot tell".
std::optional<uint32_t> frameLine(const RangeRecord& range, std::optional<uint32_t> forced,
                                  std::optional<uint32_t> position, bool ambiguous) {
  if (forced) return forced;
  if (range.original && range.original->span() == 1) return range.original->from;
  if (!ambiguous && (!range.minified || !position)) {
    uint32_t line = range.original ? range.original->from : range.minified ? range.minified->from : 0;
    if (line > 0) return line;
    return std::nullopt;
  }
  if (!position || !range.minified || !range.minified->contains(*position)) return std::nullopt;
  if (!range.original) return position;
  uint64_t line = uint64_t{range.original->from} + (*position - range.minified->from);
  if (line > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(line);
}

// The outermost frame of a chain is dropped when its method is synthesized or an outline, or
// when it is a method of a class synthesized as a whole (not one moved there from elsewhere).
// (Inlined frames: retraceMethod's loop.)
bool dropsOutermost(const ClassRecord& record, const RangeRecord& outermost) {
  return outermost.synthesized || outermost.outline || (record.synthesized && record.strings[outermost.holder].empty());
}

bool throwsMatches(const RewriteRule& rule, const RetraceContext& context) {
  for (const std::string& descriptor : rule.throws_descriptors) {
    std::string name = descriptorToClassName(descriptor);
    if (name != context.thrown_obfuscated && name != context.thrown_original) return false;
  }
  return true;
}

}  // namespace

bool restoreDesugaredInterfaceMethod(std::string_view& holder, std::string_view& method) {
  static constexpr std::string_view kCompanion = "$-CC";
  static constexpr std::string_view kDefault = "$default$";
  if (!holder.ends_with(kCompanion) || holder.size() == kCompanion.size()) return false;
  holder.remove_suffix(kCompanion.size());
  if (method.starts_with(kDefault) && method.size() > kDefault.size()) method.remove_prefix(kDefault.size());
  return true;
}

std::string descriptorToClassName(std::string_view descriptor) {
  if (descriptor.size() >= 2 && descriptor.front() == 'L' && descriptor.back() == ';') {
    descriptor = descriptor.substr(1, descriptor.size() - 2);
  }
  std::string name(descriptor);
  std::replace(name.begin(), name.end(), '/', '.');
  return name;
}

std::string inferSourceFile(std::string_view original_class, std::string_view printed_file) {
  if (printed_file == "Native Method") return std::string(printed_file);
  std::string_view extension;
  if (size_t dot = printed_file.rfind('.'); dot != std::string_view::npos) {
    extension = printed_file.substr(dot + 1);
  }
  size_t package_end = original_class.rfind('.');
  std::string_view simple =
      package_end == std::string_view::npos ? original_class : original_class.substr(package_end + 1);
  if (size_t inner = simple.find('$'); inner != std::string_view::npos && inner > 0) {
    simple = simple.substr(0, inner);
  }
  if (simple.ends_with("Kt") && (extension.empty() || extension == "kt")) {
    return std::string(simple.substr(0, simple.size() - 2)) + ".kt";
  }
  return std::string(simple) + (extension == "kt" ? ".kt" : ".java");
}

void MethodRetrace::reset() {
  method_found = false;
  ambiguous = false;
  removed = false;
  next_outline_position.reset();
  note.clear();
  for (auto& answer : alternatives) {
    answer.clear();
    spare_.push_back(std::move(answer));
  }
  alternatives.clear();
}

std::vector<RetracedFrame>& MethodRetrace::newAnswer() {
  if (spare_.empty()) return alternatives.emplace_back();
  alternatives.push_back(std::move(spare_.back()));
  spare_.pop_back();
  return alternatives.back();
}

void MethodRetrace::dropAnswer(size_t index) {
  alternatives[index].clear();
  spare_.push_back(std::move(alternatives[index]));
  alternatives.erase(alternatives.begin() + static_cast<std::ptrdiff_t>(index));
}

MethodRetrace retraceMethod(const ClassRecord& record, std::string_view obfuscated_method,
                            std::optional<uint32_t> input_line, const RetraceContext& context) {
  MethodRetrace result;
  retraceMethod(record, obfuscated_method, input_line, context, result);
  return result;
}

void retraceMethod(const ClassRecord& record, std::string_view obfuscated_method, std::optional<uint32_t> input_line,
                   const RetraceContext& context, MethodRetrace& result) {
  retraceMethod(record, obfuscated_method, hashName(obfuscated_method), input_line, context, result);
}

void retraceMethod(const ClassRecord& record, std::string_view obfuscated_method, uint64_t method_hash,
                   std::optional<uint32_t> input_line, const RetraceContext& context, MethodRetrace& result) {
  result.reset();
  const MethodRecord* method = record.findMethod(obfuscated_method, method_hash);
  if (method == nullptr || method->ranges.empty()) return;
  std::optional<uint32_t> position;
  if (input_line && *input_line > 0) position = input_line;

  // Scratch reused by every call on this thread: no allocation per frame once warm.
  thread_local std::vector<Candidate> candidates;
  candidates.clear();
  selectCandidates(*method, position, candidates);
  // Rule 6: the frame above was an outline; map its position through this call site.
  if (context.outline_position) {
    std::vector<Candidate> rewritten;
    for (const Candidate& candidate : candidates) {
      const RangeRecord& outermost = method->ranges[candidate.chain.first + candidate.chain.count - 1];
      if (!outermost.callsite) {
        rewritten.push_back(candidate);
        continue;
      }
      uint32_t mapped =
          lookupCallsite(*outermost.callsite, *context.outline_position).value_or(*context.outline_position);
      if (const Chain* chain = chainAt(*method, candidate.overload, mapped)) {
        rewritten.push_back({candidate.overload, *chain, mapped});
      }
    }
    candidates = std::move(rewritten);
  }

  result.method_found = true;
  if (candidates.empty()) {
    if (position) {  // a position no range covers: restore the class, keep the method name
      result.method_found = false;
      return;
    }
    // No position and no range for "no position": every overload by its signature alone.
    result.ambiguous = method->overloads.size() > 1;
    for (const auto& overload : method->overloads) {
      const RangeRecord& outermost = method->outermost(method->chains[overload[0]]);
      if (dropsOutermost(record, outermost)) continue;
      RetracedFrame frame;
      frame.holder = record.holderOf(outermost);
      frame.method = record.strings[outermost.name];
      frame.params = record.strings[outermost.params];
      frame.return_type = record.strings[outermost.return_type];
      if (!result.ambiguous && input_line && *input_line > 0) frame.line = input_line;
      result.newAnswer().push_back(frame);
    }
  } else {
    result.ambiguous = candidates.size() > 1;
    for (const Candidate& candidate : candidates) {
      for (size_t i = 0; i < candidate.chain.count; ++i) {
        if (isRangeAmbiguous(method->ranges[candidate.chain.first + i])) result.ambiguous = true;
      }
    }
    for (const Candidate& candidate : candidates) {
      const RangeRecord* ranges = &method->ranges[candidate.chain.first];
      const size_t count = candidate.chain.count;
      // Rule 3: an ambiguous top range is split into one answer per original line.
      bool split = result.ambiguous && isRangeAmbiguous(ranges[0]);
      const uint64_t split_first = split ? ranges[0].original->from : 0;
      const uint64_t split_last =
          split ? std::min<uint64_t>(ranges[0].original->to, split_first + kMaxSplitLines - 1) : 0;
      // Rule 5: rewriteFrame rules of any frame of the chain, under an exception line.
      uint32_t remove_inner = 0;
      if (!context.thrown_obfuscated.empty() || !context.thrown_original.empty()) {
        for (size_t i = 0; i < count; ++i) {
          for (const RewriteRule& rule : ranges[i].rules) {
            if (throwsMatches(rule, context)) remove_inner += rule.remove_inner_frames;
          }
        }
      }
      if (remove_inner > count) {
        result.note = "rewriteFrame asks to remove " + std::to_string(remove_inner) + " of " + std::to_string(count) +
                      " frames; ignored";
        remove_inner = 0;
      }
      const RangeRecord& outermost = ranges[count - 1];
      for (uint64_t split_line = split_first; split_line <= split_last; ++split_line) {
        std::optional<uint32_t> top_line;
        if (split) top_line = static_cast<uint32_t>(split_line);
        std::vector<RetracedFrame>& frames = result.newAnswer();
        for (size_t i = remove_inner; i < count; ++i) {
          if (i + 1 == count && dropsOutermost(record, outermost)) break;
          const RangeRecord& range = ranges[i];
          // An inlined synthesized method (D8's "$r8$lambda$" forwarder inlined into its lambda
          // class, a backported library method) is not a frame of the program either; R8's
          // retrace visits only the frames not compiler-synthesized. Nor is a lambda class's
          // method inlined elsewhere (the class itself may be gone from the mapping).
          if (i + 1 < count && (range.synthesized || (!record.strings[range.holder].empty() &&
                                                      isDesugaredLambdaClass(record.strings[range.holder], "")))) {
            continue;
          }
          RetracedFrame frame;
          frame.holder = record.holderOf(range);
          frame.method = record.strings[range.name];
          frame.params = record.strings[range.params];
          frame.return_type = record.strings[range.return_type];
          frame.line = frameLine(range, i == 0 ? top_line : std::nullopt, candidate.position, result.ambiguous);
          if (!frame.line) frame.line = input_line;
          if (result.ambiguous && !input_line) frame.line.reset();
          if (frame.line && *frame.line == 0) frame.line.reset();
          frames.push_back(std::move(frame));
        }
        if (frames.empty()) result.dropAnswer(result.alternatives.size() - 1);
      }
      if (outermost.outline && candidate.position) result.next_outline_position = candidate.position;
    }
  }
  result.removed = result.alternatives.empty();
  if (result.alternatives.size() <= 1) return;
  // Identical answers (e.g. split lines of a frame printed without a line) are shown once.
  for (size_t i = 1; i < result.alternatives.size();) {
    auto first = result.alternatives.begin();
    if (std::find(first, first + static_cast<std::ptrdiff_t>(i), result.alternatives[i]) !=
        first + static_cast<std::ptrdiff_t>(i)) {
      result.dropAnswer(i);
    } else {
      ++i;
    }
  }
  // Sorted by class and method as R8 prints them; equal keys keep their mapping order (an
  // insertion sort: answers are few, and it is stable).
  auto before = [](const std::vector<RetracedFrame>& a, const std::vector<RetracedFrame>& b) {
    return std::tie(a[0].holder, a[0].method) < std::tie(b[0].holder, b[0].method);
  };
  auto& answers = result.alternatives;
  for (size_t i = 1; i < answers.size(); ++i) {
    for (size_t j = i; j > 0 && before(answers[j], answers[j - 1]); --j) std::swap(answers[j], answers[j - 1]);
  }
  result.removed = result.alternatives.empty();
}

}  // namespace restack::proguard

#include "worker/pipeline/kinds/native_kind.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/decimal.h"
#include "formats/stack/native_line.h"
#include "grouping/kinds/native_rules.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/native/native_resolver.h"

namespace restack::pipeline {
namespace {

std::string_view basename(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "function + offset (in module) (file:line)", appended to a line of restored text.
void appendNative(std::string& text, const SymbolizedFrame& frame, std::string_view tier) {
  const std::string_view function = frame.function.empty() ? std::string_view("???") : frame.function;
  const std::string_view file = basename(frame.file);
  text += function;
  if (tier == "symtab" && frame.symbol_offset != 0) {
    text += " + ";
    appendDecimal(text, frame.symbol_offset);
  }
  if (!frame.module.empty()) {
    text += " (in ";
    text += frame.module;
    text += ')';
  }
  if (!frame.file.empty()) {
    text += " (";
    text += file;
    if (frame.line != 0) {
      text += ':';
      appendDecimal(text, frame.line);
    }
    text += ')';
  }
}

// Where the event's lines say one image (by name) was loaded: the load address and UUID that
// place a device-symbolicated line printing neither (NativeFrameLine::image_offset_unknown).
// Every stack of the event counts, not only the frame's own: one process loads an image once,
// and a report's crashed thread often prints its app frames symbolicated while another thread
// prints the app's load address.
struct ImagePlacement {
  uint64_t load_address = 0;
  std::string debug_id;  // empty when no line printed one
  // Why lines of the event do not agree on where the image was loaded (two load addresses, or two
  // UUIDs at one: two processes pasted into one event, or a wrong line); empty when they agree.
  // Such an image places none of the frames that print no load address: picking one would
  // restore them to code of an image that may not hold them.
  std::string conflict;
};

class LoadedImages final : public EventFacts {
 public:
  // Null when no line of the event names the image with a load address.
  const ImagePlacement* find(std::string_view module) const {
    auto found = images_.find(module);
    return found == images_.end() ? nullptr : &found->second;
  }

  // Another line printed `frame`'s image at frame.load_address with frame.debug_id.
  void add(const stack::NativeFrameLine& frame) {
    auto [at, inserted] = images_.try_emplace(frame.module);
    ImagePlacement& image = at->second;
    if (inserted) {
      image.load_address = frame.load_address;
      image.debug_id = frame.debug_id;
      return;
    }
    if (!image.conflict.empty()) return;  // the first disagreement is the one reported
    if (image.load_address != frame.load_address) {
      image.conflict = "lines of the event print two load addresses for " + frame.module + ", " +
                       hexAddress(image.load_address) + " and " + hexAddress(frame.load_address);
    } else if (!frame.debug_id.empty() && !image.debug_id.empty() && image.debug_id != frame.debug_id) {
      image.conflict = "lines of the event print two UUIDs for " + frame.module + " at " +
                       hexAddress(image.load_address) + ", " + image.debug_id + " and " + frame.debug_id;
    } else if (image.debug_id.empty()) {
      image.debug_id = frame.debug_id;
    }
  }

 private:
  static std::string hexAddress(uint64_t address) {
    char buffer[24];
    std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, address);
    return buffer;
  }

  std::map<std::string, ImagePlacement, std::less<>> images_;
};

// `frame`, whose offset in its image is unknown, placed by the load address (and UUID) the event's
// other lines print for its image; otherwise nullopt, and `why` says why not.
std::optional<stack::NativeFrameLine> placedByLoadedImage(const stack::NativeFrameLine& frame,
                                                          const LoadedImages* loaded, std::string& why) {
  const ImagePlacement* image = loaded != nullptr ? loaded->find(frame.module) : nullptr;
  if (image == nullptr) {
    why = "no line of the event prints where " + frame.module + " was loaded";
    return std::nullopt;
  }
  if (!image->conflict.empty()) {
    why = image->conflict;
    return std::nullopt;
  }
  if (image->load_address > frame.runtime_address) {
    why = "the load address lines of the event print for " + frame.module + " is past this frame's address";
    return std::nullopt;
  }
  stack::NativeFrameLine placed = frame;
  placed.image_offset_unknown = false;
  placed.load_address = image->load_address;
  placed.address = frame.runtime_address - image->load_address;
  if (placed.debug_id.empty()) placed.debug_id = image->debug_id;
  return placed;
}

// The raw line's frame number as it printed it ("#07 "), when it had one.
void appendFrameIndex(std::string& text, const stack::NativeFrameLine& raw) {
  if (!raw.frame_index) return;
  char buffer[16];
  const int length = std::snprintf(buffer, sizeof buffer, "#%02u ", *raw.frame_index);
  text.append(buffer, static_cast<size_t>(length));
}

class NativeKind final : public StackKind {
 public:
  std::string_view name() const override { return "native"; }
  bool claims(const stack::StackLine& line) const override { return stack::asNative(line) != nullptr; }

  // Where the event's lines place each image, when some line of the event prints no load address
  // (the only lines that need it; most events have none, and then nothing is gathered).
  std::unique_ptr<EventFacts> readEvent(EventStacks stacks) const override {
    auto needsPlacing = [](const stack::StackLine& line) {
      const stack::NativeFrameLine* frame = stack::asNative(line);
      return frame != nullptr && frame->image_offset_unknown;
    };
    if (std::ranges::none_of(stacks, [&](const auto& lines) { return std::ranges::any_of(lines, needsPlacing); })) {
      return nullptr;
    }
    auto loaded = std::make_unique<LoadedImages>();
    for (const std::vector<stack::StackLine>& lines : stacks) {
      for (const stack::StackLine& line : lines) {
        const stack::NativeFrameLine* frame = stack::asNative(line);
        // "<image> 0x<runtime> 0x<load> + <offset>" and "<image> 0x<runtime> <image> + <offset>";
        // a "0x0" load address is a report's "???" frame, which names no image.
        if (frame != nullptr && !frame->image_offset_unknown && frame->load_address != 0 && !frame->module.empty()) {
          loaded->add(*frame);
        }
      }
    }
    return loaded;
  }

  Status restoreRun(const StackRun& run, RunOutput& out) const override {
    size_t earlier = run.earlier_lines;
    const auto* loaded = static_cast<const LoadedImages*>(run.event_facts);
    for (const stack::StackLine& line : run.lines) {
      const stack::NativeFrameLine* printed = stack::asNative(line);
      std::optional<stack::NativeFrameLine> placed;
      std::string unplaced;  // why a line without a load address was not placed
      if (printed->image_offset_unknown) {
        placed = placedByLoadedImage(*printed, loaded, unplaced);
        if (placed) printed = &*placed;
      }
      const stack::NativeFrameLine& native = *printed;
      // Every frame but the first holds a return address: look up the call instruction before it,
      // unless the unwinder already did (stack::NativeFrameLine::call_site_pc: Android's).
      const bool is_pc = native.frame_index ? *native.frame_index == 0 : earlier == 0;
      ++earlier;
      const uint64_t address =
          (is_pc || native.call_site_pc || native.address == 0) ? native.address : native.address - 1;
      auto lookup = nativeResolver(run.symbolizer).lookup(run.scope, native, address);
      if (!lookup) return lookup.error();
      if (!unplaced.empty()) {
        lookup->note += lookup->note.empty() ? "" : "; ";
        lookup->note += unplaced;
      }
      if (lookup->status == FrameStatus::kSymbolicated) {
        if (native.debug_id.empty()) {
          run.symbolizer.noteUsed(run.scope, native_store::kNativeFamily);
        } else {
          run.symbolizer.noteImage(native.debug_id);
        }
      }
      out.frame(this, line, std::move(*lookup), native.symbol_hint);
    }
    return Status::ok();
  }

  void render(const stack::StackLine& line, std::span<const OutputFrame> frames,
              RestoredTextWriter& out) const override {
    const stack::NativeFrameLine& raw = *stack::asNative(line);
    for (const OutputFrame& frame : frames) {
      std::string& text = out.line(line.indent);
      appendFrameIndex(text, raw);
      appendNative(text, frame.frame, frame.tier);
    }
    const OutputFrame& first = frames.front();  // alternatives ride on the first entry
    for (const auto& alternative : first.alternatives) {
      for (const SymbolizedFrame& frame : alternative)
        appendNative(out.line(line.indent) += "<OR> ", frame, first.tier);
    }
  }

  const grouping::FrameKindRules& groupingKind() const override { return grouping::nativeRules(); }
};

}  // namespace

const StackKind& nativeKind() {
  static const NativeKind kind;
  return kind;
}

}  // namespace restack::pipeline

#include "worker/pipeline/kinds/native_kind.h"

#include <cstdio>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>

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

// The first line of a run that prints where each image was loaded, by image name: what places the
// run's device-symbolicated lines that print no load address (one process, one load address).
using LoadedImages = std::unordered_map<std::string_view, const stack::NativeFrameLine*>;

LoadedImages loadedImagesOf(std::span<const stack::StackLine> lines) {
  LoadedImages loaded;
  for (const stack::StackLine& line : lines) {
    const stack::NativeFrameLine* frame = stack::asNative(line);
    if (frame != nullptr && !frame->image_offset_unknown && frame->load_address != 0 && !frame->module.empty()) {
      loaded.emplace(frame->module, frame);
    }
  }
  return loaded;
}

// `frame`, whose offset in its image is unknown, placed in its image by the load address (and
// build id) another line printed for an image of that name; nullopt when none did.
std::optional<stack::NativeFrameLine> placedByLoadedImage(const stack::NativeFrameLine& frame,
                                                          const LoadedImages& loaded) {
  auto found = loaded.find(frame.module);
  if (found == loaded.end() || found->second->load_address > frame.runtime_address) return std::nullopt;
  const stack::NativeFrameLine& image = *found->second;
  stack::NativeFrameLine placed = frame;
  placed.image_offset_unknown = false;
  placed.load_address = image.load_address;
  placed.address = frame.runtime_address - image.load_address;
  if (placed.debug_id.empty()) placed.debug_id = image.debug_id;
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

  Status restoreRun(const StackRun& run, RunOutput& out) const override {
    size_t earlier = run.earlier_lines;
    std::optional<LoadedImages> loaded;  // built at the first line that needs it
    for (const stack::StackLine& line : run.lines) {
      const stack::NativeFrameLine* printed = stack::asNative(line);
      std::optional<stack::NativeFrameLine> placed;
      if (printed->image_offset_unknown) {
        if (!loaded) loaded = loadedImagesOf(run.lines);
        placed = placedByLoadedImage(*printed, *loaded);
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

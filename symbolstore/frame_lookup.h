// What one raw frame restored to. Every resolver (native, proguard, sourcemap) answers with a
// `FrameLookup`; the worker turns it into the output frames of docs/design.md §5.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <llvm/ADT/SmallVector.h>

namespace restack {

enum class FrameStatus {
  kSymbolicated,    // restored
  kMissingSymbols,  // the symbol file this frame needs was never uploaded (see missing_id)
  kNotFound,        // symbols exist but do not cover this frame (address outside every range…)
  kUnparsed,        // the raw line was not recognised as a frame
};

const char* frameStatusName(FrameStatus status);

// Why a raw frame is not (fully) restored: a closed list with stable snake_case names, written as
// the frame's `reason` (docs/design.md §5), used as the `reason` label of the frame metrics
// (worker/kafka/metrics.h) and explained for operators in docs/operations.md ("Frames not
// restored"). The resolver that makes the decision sets it; nothing guesses it from notes later.
// Each reason belongs to exactly one FrameStatus (frameReasonStatus), so a frame's status follows
// from its reason and the metrics can count frames by reason alone. New reasons go at the end
// (before kCount): the names are an interface, the numbers are not.
enum class FrameReason : uint8_t {
  kNone,  // fully restored
  // Not restored, status missing_symbols.
  kMissingSymbols,  // the symbol file was never uploaded; FrameLookup::missing_id says which
  // Not restored, status not_found.
  kMalformedSymbols,      // a stored record the frame needs failed to decode (record_codec.h)
  kAddressOutsideModule,  // native: no function or symbol of the image covers the address
  kPositionNotMapped,     // JS: the source map has no mapping at this line:column (or segment)
  kNoPosition,            // JS: no script position; native: no address within the image
  kBundleUnknown,         // JS: the frame names no bundle and the build has several maps
  kRuntimeCode,           // no upload exists: JS built into node, Android JIT / ART-compiled code
  kNotCovered,            // the symbols do not cover the frame, for no more specific reason
  // Not restored, status unparsed.
  kUnparsed,    // the line is no frame of any stack kind
  kFrameLimit,  // past limits.max_frames_per_thread: kept raw
  // Partly restored, status symbolicated.
  kNoLineInfo,       // native: function from the symbol table, no file or line
  kAmbiguous,        // several answers (ProGuard class merging / overloads); candidates listed
  kDemangleFailed,   // the demangler refused the name: the function keeps its mangled name
  kMethodNotMapped,  // ProGuard: class restored, the method at this line is not in the mapping
  // Not restored, status missing_symbols, but not awaited: the frame is in an operating-system
  // image (formats/common/system_images.h) whose symbols no shared upload brought. No app build
  // uploads them, so the event does not wait for them (it is partial, not pending) and they
  // are no symbol demand; missing_id still names the image.
  kSystemImage,
  kCount,
};
inline constexpr size_t kFrameReasonCount = static_cast<size_t>(FrameReason::kCount);

// "missing_symbols", "no_line_info", …; "" for kNone.
const char* frameReasonName(FrameReason reason);
// The status of a frame with this reason (kNone: symbolicated).
FrameStatus frameReasonStatus(FrameReason reason);
// The reason a frame of `status` gets when its resolver named none: kNone, kMissingSymbols,
// kNotCovered or kUnparsed.
FrameReason defaultFrameReason(FrameStatus status);

// Which identifier FrameLookup::missing_id is, written as the frame's `missing_id_kind`.
enum class MissingIdKind : uint8_t {
  kNone,      // the frame names nothing to look its symbols up by
  kDebugId,   // native: the image's debug id / build id (hex)
  kModule,    // native: the image's file name (the frame printed no debug id)
  kAppBuild,  // ProGuard: "<app>:<build_id>", the event's build has no mapping
  kMapId,     // ProGuard: an R8 pg_map_id (the event's, or a frame's r8-map-id-<id> file)
  kBundle,    // JS: the bundle (script file name or URL) without a source map
};
// "debug_id", "module", "app_build", "pg_map_id", "bundle"; "" for kNone.
const char* missingIdKindName(MissingIdKind kind);

// The one wording of a frame not restored, shared by the `restored` text
// (worker/pipeline/event_restorer.cc) and `restack symbolicate`'s listing
// (worker/cli/symbolicate_text.cc):
//   "not restored: missing_symbols debug_id 8c17…", "not restored: address_outside_module".
std::string notRestoredText(std::string_view reason, std::string_view missing_id_kind, std::string_view missing_id);

// Tag of the moves that keep a borrowed ContextLines or FrameString borrowed: SymbolizedFrame's
// own moves, which move the `pin` that keeps it alive along with it.
struct WithFramePin {
  explicit WithFramePin() = default;
};

// `to = std::move(from)` for the strings of a frame's moves, most of which are empty (a clone,
// a scope, the own string of a shared or borrowed name): std::string's move copies even an empty
// string's terminator with a call to memcpy.
inline void moveString(std::string& to, std::string& from) noexcept {
  if (from.empty()) {
    to.clear();
  } else {
    to = std::move(from);
  }
}

// Source lines around a frame's line. Resolvers hand out slices of line blocks they keep cached,
// so every answer that shows the same lines shares one copy instead of copying strings; `owner`
// keeps the blocks alive, or (borrow) the SymbolizedFrame::pin of the frame holding the slice.
// Reads like a const std::vector<std::string> (empty, size, [], at, range-for). A slice may run
// over the end of one block into the start of the next (`tail`), since cached blocks hold a fixed
// number of lines.
class ContextLines {
 public:
  ContextLines() = default;
  // Lines [first, first + count) of `head`, then lines [0, tail_count) of `tail`; `owner` keeps
  // both alive.
  ContextLines(std::shared_ptr<const void> owner, const std::vector<std::string>* head, uint32_t first, uint32_t count,
               const std::vector<std::string>* tail = nullptr, uint32_t tail_count = 0)
      : owner_(std::move(owner)), head_(head), tail_(tail), first_(first), count_(count), tail_count_(tail_count) {}
  // Lines owned by this slice alone.
  explicit ContextLines(std::vector<std::string> lines) {
    auto owned = std::make_shared<const std::vector<std::string>>(std::move(lines));
    head_ = owned.get();
    count_ = static_cast<uint32_t>(owned->size());
    owner_ = std::move(owned);
  }

  // A slice copied or moved on its own, away from its frame, copies a borrowed slice's lines:
  // the frame's pin may be gone before it.
  ContextLines(const ContextLines& other)
      : owner_(other.owner_),
        head_(other.head_),
        tail_(other.tail_),
        first_(other.first_),
        count_(other.count_),
        tail_count_(other.tail_count_) {
    if (borrowed()) ownLines();
  }
  ContextLines(ContextLines&& other) : ContextLines(std::move(other), WithFramePin()) {
    if (borrowed()) ownLines();
  }
  ContextLines& operator=(const ContextLines& other) {
    if (this != &other) moveWithPin(ContextLines(other));
    return *this;
  }
  ContextLines& operator=(ContextLines&& other) {
    if (this != &other) {
      moveWithPin(std::move(other));
      if (borrowed()) ownLines();
    }
    return *this;
  }
  ~ContextLines() = default;
  // SymbolizedFrame's moves: a borrowed slice stays borrowed (the frame's pin moves with it).
  ContextLines(ContextLines&& other, WithFramePin) noexcept
      : owner_(std::move(other.owner_)),
        head_(other.head_),
        tail_(other.tail_),
        first_(other.first_),
        count_(other.count_),
        tail_count_(other.tail_count_) {
    other.forget();
  }
  void moveWithPin(ContextLines&& other) noexcept {
    owner_ = std::move(other.owner_);
    head_ = other.head_;
    tail_ = other.tail_;
    first_ = other.first_;
    count_ = other.count_;
    tail_count_ = other.tail_count_;
    other.forget();
  }

  // Makes this the lines of blocks that the pin of the SymbolizedFrame holding this slice keeps
  // alive, without a reference of its own (see SymbolizedFrame::pin).
  void borrow(const std::vector<std::string>* head, uint32_t first, uint32_t count,
              const std::vector<std::string>* tail = nullptr, uint32_t tail_count = 0) {
    if (owner_) owner_.reset();
    head_ = head;
    tail_ = tail;
    first_ = first;
    count_ = count;
    tail_count_ = tail_count;
  }
  // Whether the lines are kept alive by the frame's pin rather than by this slice.
  bool borrowed() const { return head_ != nullptr && !owner_; }

  bool empty() const { return size() == 0; }
  size_t size() const { return static_cast<size_t>(count_) + tail_count_; }
  const std::string& operator[](size_t index) const {
    return index < count_ ? (*head_)[first_ + index] : (*tail_)[index - count_];
  }
  const std::string& at(size_t index) const {
    if (index >= size()) throw std::out_of_range("ContextLines::at");
    return (*this)[index];
  }

  class Iterator {
   public:
    Iterator(const ContextLines* lines, size_t index) : lines_(lines), index_(index) {}
    const std::string& operator*() const { return (*lines_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    const ContextLines* lines_;
    size_t index_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size()); }

 private:
  void forget() {
    head_ = tail_ = nullptr;
    first_ = count_ = tail_count_ = 0;
  }
  void ownLines() {
    std::vector<std::string> lines;
    lines.reserve(size());
    for (size_t i = 0; i < size(); ++i) lines.push_back((*this)[i]);
    moveWithPin(ContextLines(std::move(lines)));
  }
  std::shared_ptr<const void> owner_;
  const std::vector<std::string>* head_ = nullptr;
  const std::vector<std::string>* tail_ = nullptr;
  uint32_t first_ = 0, count_ = 0, tail_count_ = 0;
};

// A name of a restored frame (SymbolizedFrame::file, ::function): a string of its own, or one the
// resolver's cache holds and shares with every frame that restores to the same answer, kept alive
// by `owner` or (borrow) by the SymbolizedFrame::pin of the frame holding it (the source-map
// resolver's answers: sourcemap_resolver.cc), so that restoring a frame copies no bytes. Reads
// like a const std::string (implicit conversion, the usual const members); assigning or mutating
// it gives it a string of its own, and so does copying or moving a borrowed one on its own, away
// from its frame.
class FrameString {
 public:
  using size_type = std::string::size_type;
  static constexpr size_type npos = std::string::npos;

  FrameString() = default;
  // Explicit, so that `flag ? frame.file : std::string(…)` reads as a std::string.
  explicit FrameString(std::string text) : owned_(std::move(text)) {}
  explicit FrameString(const char* text) : owned_(text) {}
  explicit FrameString(std::string_view text) : owned_(text) {}
  // `*text`, which `owner` keeps alive and nobody changes.
  FrameString(std::shared_ptr<const void> owner, const std::string* text) : owner_(std::move(owner)), shared_(text) {}

  FrameString(const FrameString& other)
      : owned_(other.borrowed() ? *other.shared_ : other.owned_),
        owner_(other.owner_),
        shared_(other.borrowed() ? nullptr : other.shared_) {}
  FrameString(FrameString&& other) : FrameString(std::move(other), WithFramePin()) {
    if (borrowed()) {
      owned_ = *shared_;
      shared_ = nullptr;
    }
  }
  FrameString& operator=(const FrameString& other) {
    if (this == &other) return *this;
    if (other.owner_) {
      owner_ = other.owner_;
      shared_ = other.shared_;
      return *this;
    }
    return *this = other.str();  // its own or borrowed: a copy
  }
  FrameString& operator=(FrameString&& other) {
    if (this == &other) return *this;
    if (other.borrowed()) return *this = *other.shared_;
    moveWithPin(std::move(other));
    return *this;
  }
  ~FrameString() = default;
  // SymbolizedFrame's moves: a borrowed string stays borrowed (the frame's pin moves with it).
  FrameString(FrameString&& other, WithFramePin) noexcept : owner_(std::move(other.owner_)), shared_(other.shared_) {
    moveString(owned_, other.owned_);
    other.shared_ = nullptr;
  }
  void moveWithPin(FrameString&& other) noexcept {
    moveString(owned_, other.owned_);
    owner_ = std::move(other.owner_);
    shared_ = other.shared_;
    other.shared_ = nullptr;
  }

  // Assignments reuse the owned string's buffer (no temporary): resolvers assign names frame
  // after frame.
  FrameString& operator=(std::string&& text) {
    owned_ = std::move(text);
    release();
    return *this;
  }
  FrameString& operator=(const std::string& text) { return *this = std::string_view(text); }
  FrameString& operator=(const char* text) { return *this = std::string_view(text); }
  FrameString& operator=(std::string_view text) {
    // Into an empty string (a frame just built), append: std::string::assign goes through
    // _M_replace, which handles overlapping text and costs twice as much; an empty string's bytes
    // cannot overlap `text`.
    if (owned_.empty()) {
      owned_.append(text.data(), text.size());
    } else {
      owned_.assign(text.data(), text.size());
    }
    release();
    return *this;
  }

  // Makes this `*text`, kept alive by `owner` (cheaper than assigning a FrameString).
  void share(std::shared_ptr<const void> owner, const std::string* text) {
    owner_ = std::move(owner);
    shared_ = text;
  }
  // Makes this `*text`, which the pin of the SymbolizedFrame holding this string keeps alive,
  // without a reference of its own (see SymbolizedFrame::pin).
  void borrow(const std::string* text) {
    if (owner_) owner_.reset();
    shared_ = text;
  }
  // Whether the string is kept alive by the frame's pin rather than by this one.
  bool borrowed() const { return shared_ != nullptr && !owner_; }

  const std::string& str() const { return shared_ != nullptr ? *shared_ : owned_; }
  operator const std::string&() const { return str(); }  // NOLINT: implicit on purpose
  operator std::string_view() const { return str(); }    // NOLINT: implicit on purpose

  bool empty() const { return str().empty(); }
  size_type size() const { return str().size(); }
  size_type length() const { return str().size(); }
  const char* data() const { return str().data(); }
  const char* c_str() const { return str().c_str(); }
  std::string::const_iterator begin() const { return str().begin(); }
  std::string::const_iterator end() const { return str().end(); }
  char operator[](size_type index) const { return str()[index]; }
  char front() const { return str().front(); }
  char back() const { return str().back(); }
  bool starts_with(std::string_view prefix) const { return str().starts_with(prefix); }
  bool starts_with(char c) const { return str().starts_with(c); }
  bool ends_with(std::string_view suffix) const { return str().ends_with(suffix); }
  bool ends_with(char c) const { return str().ends_with(c); }
  size_type find(std::string_view text, size_type from = 0) const { return str().find(text, from); }
  size_type find(char c, size_type from = 0) const { return str().find(c, from); }
  size_type rfind(std::string_view text, size_type from = npos) const { return str().rfind(text, from); }
  size_type rfind(char c, size_type from = npos) const { return str().rfind(c, from); }
  size_type find_last_of(std::string_view chars, size_type from = npos) const {
    return str().find_last_of(chars, from);
  }
  size_type find_first_of(std::string_view chars, size_type from = 0) const { return str().find_first_of(chars, from); }
  std::string substr(size_type from = 0, size_type count = npos) const { return str().substr(from, count); }
  int compare(std::string_view other) const { return str().compare(other); }

  // Whether the string is this one's own (not one a cache shares): it can be moved out of own().
  bool owned() const { return shared_ == nullptr; }

  // Mutation: the string becomes one of its own first.
  std::string& own() {
    if (shared_ != nullptr) {
      owned_ = *shared_;
      release();
    }
    return owned_;
  }
  void clear() {
    owned_.clear();
    release();
  }
  void reserve(size_type capacity) { own().reserve(capacity); }
  FrameString& append(std::string_view text) {
    own().append(text);
    return *this;
  }
  FrameString& operator+=(std::string_view text) { return append(text); }
  FrameString& operator+=(char c) {
    own() += c;
    return *this;
  }

  friend bool operator==(const FrameString& a, const FrameString& b) { return a.str() == b.str(); }
  friend bool operator==(const FrameString& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const FrameString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const FrameString& a, const char* b) { return a.str() == b; }
  friend auto operator<=>(const FrameString& a, const FrameString& b) { return a.str() <=> b.str(); }
  friend auto operator<=>(const FrameString& a, std::string_view b) { return std::string_view(a.str()) <=> b; }
  friend std::string operator+(const FrameString& a, std::string_view b) {
    std::string out = a.str();
    out += b;
    return out;
  }
  friend std::string operator+(std::string a, const FrameString& b) { return std::move(a) += b.str(); }
  friend std::string operator+(const char* a, const FrameString& b) { return a + b.str(); }
  friend std::ostream& operator<<(std::ostream& out, const FrameString& s) { return out << s.str(); }

 private:
  void release() {
    if (owner_) owner_.reset();
    shared_ = nullptr;
  }
  std::string owned_;
  std::shared_ptr<const void> owner_;
  const std::string* shared_ = nullptr;
};

struct SymbolizedFrame {
  // Every member has its initializer. Provided, so that value-initialization (vector::emplace_back(),
  // SymbolizedFrame{}) does not zero the whole frame before constructing it.
  SymbolizedFrame() {}  // NOLINT(modernize-use-equals-default)
  // Copies copy borrowed names and lines (FrameString, ContextLines); moves keep them borrowed,
  // moving the pin with them. A member added here is added to both moves.
  SymbolizedFrame(const SymbolizedFrame&) = default;
  SymbolizedFrame& operator=(const SymbolizedFrame&) = default;
  SymbolizedFrame(SymbolizedFrame&& other) noexcept
      : function(std::move(other.function), WithFramePin()),
        file(std::move(other.file), WithFramePin()),
        line(other.line),
        column(other.column),
        inlined(other.inlined),
        module(std::move(other.module), WithFramePin()),
        in_app(other.in_app),
        symbol_offset(other.symbol_offset),
        name_inferred(other.name_inferred),
        context_lines(std::move(other.context_lines), WithFramePin()),
        context_first_line(other.context_first_line),
        pin(std::move(other.pin)) {
    moveString(clone, other.clone);
    moveString(scope, other.scope);
  }
  SymbolizedFrame& operator=(SymbolizedFrame&& other) noexcept {
    if (this == &other) return *this;
    function.moveWithPin(std::move(other.function));
    file.moveWithPin(std::move(other.file));
    line = other.line;
    column = other.column;
    inlined = other.inlined;
    module.moveWithPin(std::move(other.module));
    in_app = other.in_app;
    symbol_offset = other.symbol_offset;
    moveString(clone, other.clone);
    moveString(scope, other.scope);
    name_inferred = other.name_inferred;
    context_lines.moveWithPin(std::move(other.context_lines));
    context_first_line = other.context_first_line;
    pin = std::move(other.pin);  // last: the old pin goes once no member borrows from it
    return *this;
  }
  ~SymbolizedFrame() = default;

  FrameString function;  // demangled / deobfuscated / original name; may be empty
  FrameString file;      // source file; may be empty
  uint32_t line = 0;     // 0 = unknown
  uint32_t column = 0;   // 0 = unknown
  bool inlined = false;  // this frame was inlined into the next (outer) one
  FrameString module;    // image / library / class file / bundle the frame belongs to
  std::optional<bool> in_app;
  uint64_t symbol_offset = 0;  // symbol-table tier: offset of the address from the symbol start
  // Native: the compiler clone the address lies in, as the symbol table's suffix to `function`
  // without its leading dot ("isra.0", "constprop.1.isra.0", "part.0", "cold", "lto_priv.0").
  // `function` stays the source function's name, as llvm-symbolizer prints it with the debug file.
  std::string clone;
  // Native: the function the frame's code is defined in, when `function` does not say it (GCC's
  // DWARF names a lambda's call operator bare, "operator()", as llvm-symbolizer prints it; the
  // scope is the enclosing function from DWARF's scopes, "shop::Cart::total(char const*)").
  std::string scope;
  // JavaScript: `function` is the name V8's name inferrer gives an anonymous function from the
  // code around it (sourcemap::FunctionMap::inferred), as the engine prints it, not a name the
  // function has; grouping keys such a frame as an anonymous one.
  bool name_inferred = false;
  ContextLines context_lines;       // source lines around `line` (sourcesContent), if any
  uint32_t context_first_line = 0;  // line number of context_lines[0]
  // Keeps alive what the members borrow (FrameString::borrow, ContextLines::borrow): one reference
  // for all of them instead of one each. The source-map resolver's answers borrow the path, the
  // function name and the context lines from one cached answer (sourcemap_resolver.cc): per frame,
  // one atomic increment and one decrement instead of two or three of each.
  std::shared_ptr<const void> pin;
};
#if defined(__GLIBCXX__) && defined(__x86_64__)
// A member added to SymbolizedFrame must be added to its two moves as well; this fails until they are.
static_assert(sizeof(SymbolizedFrame) == 344, "SymbolizedFrame changed: update its moves, then this");
#endif

// The frames one raw frame restores to. Almost every answer has exactly one (inlined calls and
// ProGuard's inline chains give more), so the first is held inline: a one-frame answer allocates
// nothing. A move of an answer then copies that frame: build answers where they are returned
// (Expected's std::in_place, emplace_back). docs/benchmarks.md, "a lighter answer".
using SymbolizedFrames = llvm::SmallVector<SymbolizedFrame, 1>;

struct FrameLookup {
  // Every member has its initializer. Provided, so that value-initialization (vector::resize,
  // FrameLookup()) does not zero the whole answer before constructing it.
  FrameLookup() {}  // NOLINT(modernize-use-equals-default)
  FrameStatus status = FrameStatus::kNotFound;
  // Why the frame is not (fully) restored; kNone when it is. Matches `status`
  // (frameReasonStatus); a resolver that leaves it kNone on a frame not restored gets
  // defaultFrameReason(status).
  FrameReason reason = FrameReason::kNone;
  // Innermost first: a raw frame that inlined calls restores to several frames.
  SymbolizedFrames frames;
  // When the symbol data cannot tell between several answers (ProGuard ambiguity), every other
  // candidate is kept here; `frames` holds the first candidate.
  std::vector<std::vector<SymbolizedFrame>> alternatives;
  // Which data answered: "dwarf", "symtab", "objc", "mapping", "sourcemap", "function_map", …
  // Always a string of static storage (a literal, or a static string the resolver keeps), so the
  // answer and every output frame point at it instead of copying it; an ASCII name with nothing
  // to escape in JSON, which the output writer copies as it is.
  std::string_view tier;
  // For kMissingSymbols: the debug id / mapping id / file name that had no symbols, and which
  // of those it is.
  std::string missing_id;
  MissingIdKind missing_id_kind = MissingIdKind::kNone;
  // Anything a reader of the output should know (e.g. "swift name left mangled").
  std::string note;
  // The frame is dropped from the restored output on purpose (R8 synthesized / outline frames).
  bool removed = false;

  static FrameLookup missing(std::string id, MissingIdKind kind) {
    FrameLookup lookup;
    lookup.status = FrameStatus::kMissingSymbols;
    lookup.reason = FrameReason::kMissingSymbols;
    lookup.missing_id = std::move(id);
    lookup.missing_id_kind = lookup.missing_id.empty() ? MissingIdKind::kNone : kind;
    return lookup;
  }
  // A frame the symbols do not restore; `reason` is one of status not_found.
  static FrameLookup notFound(FrameReason reason, std::string note = {}) {
    FrameLookup lookup;
    lookup.status = FrameStatus::kNotFound;
    lookup.reason = reason;
    lookup.note = std::move(note);
    return lookup;
  }
};

// The symbol files an event names itself for the frames of a stack kind, keyed by the kind's
// name (worker/pipeline/stack_kind.h): R8's pg_map_id under "java". At most one id per kind.
class ScopeSymbolIds {
 public:
  // The id named for `kind`, "" when none.
  const std::string& get(std::string_view kind) const {
    static const std::string kNone;
    for (const auto& [name, id] : entries_) {
      if (name == kind) return id;
    }
    return kNone;
  }
  // Sets the id for `kind`; a later one replaces an earlier one.
  void set(std::string_view kind, std::string id) {
    for (auto& [name, existing] : entries_) {
      if (name == kind) {
        existing = std::move(id);
        return;
      }
    }
    entries_.emplace_back(std::string(kind), std::move(id));
  }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

// Whose symbols a lookup should use: the event's app and build (docs/design.md §3), and the
// symbol files the event names itself.
struct EventScope {
  std::string app;
  std::string build_id;
  std::string platform;  // ios | android | web | react_native
  ScopeSymbolIds symbol_ids;
};

}  // namespace restack

// A per-thread memo of a pure function of one string, for the per-frame normalizers: a worker sees
// the same function names and files in event after event (one app's symbols), and normalizing a
// C++ name takes thousands of instructions where finding it again takes a few hundred. The result
// is the function's own, so a memo never changes a fingerprint.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace restack::grouping {

template <typename Value>
class StringMemo {
 public:
  // compute(key), the first time for this key since the memo was last emptied.
  template <typename Compute>
  Value get(std::string_view key, Compute&& compute) {
    if (auto found = entries_.find(key); found != entries_.end()) return found->second;
    Value value = compute(key);
    if (key.size() > kMaxKeyBytes) return value;           // a name that long (generated code) is rarely seen again
    if (entries_.size() >= kMaxEntries) entries_.clear();  // bounded memory whatever the traffic
    entries_.emplace(std::string(key), value);
    return value;
  }

 private:
  static constexpr size_t kMaxEntries = 8192;
  static constexpr size_t kMaxKeyBytes = 1024;
  struct Hash {
    using is_transparent = void;  // looked up by std::string_view without a copy
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::unordered_map<std::string, Value, Hash, std::equal_to<>> entries_;
};

}  // namespace restack::grouping

#include "symbolstore/proguard/proguard_records.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace restack::proguard {
namespace {

// ---- encoding primitives ----
void putVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void putString(std::string& out, std::string_view text) {
  putVarint(out, text.size());
  out.append(text);
}

// Bounds-checked reader: every read fails softly past the end, and `ok()` tells at the end.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool atEnd() const { return pos_ == bytes_.size(); }
  uint8_t byte() {
    if (pos_ >= bytes_.size()) return fail(), 0;
    return static_cast<uint8_t>(bytes_[pos_++]);
  }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return fail(), 0;
      uint8_t b = static_cast<uint8_t>(bytes_[pos_++]);
      value |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return value;
    }
    return fail(), 0;
  }
  uint32_t u32() {
    uint64_t value = varint();
    if (value > UINT32_MAX) return fail(), 0;
    return static_cast<uint32_t>(value);
  }
  std::string_view string() {
    uint64_t size = varint();
    if (!ok_ || size > bytes_.size() - pos_) return fail(), std::string_view();
    std::string_view text = bytes_.substr(pos_, size);
    pos_ += size;
    return text;
  }
  // A count of items that each take at least `min_bytes`: rejects counts the input cannot hold,
  // so a corrupt record never makes us reserve gigabytes.
  size_t count(size_t min_bytes = 1) {
    uint64_t n = varint();
    if (!ok_ || n > (bytes_.size() - pos_) / std::max<size_t>(min_bytes, 1)) return fail(), 0;
    return static_cast<size_t>(n);
  }

 private:
  void fail() { ok_ = false; }
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

Error corrupt(const char* what) {
  return Error(ErrorCode::kInternal, std::string("corrupt proguard ") + what +
                                         " record in the store (re-ingest the mapping to repair it)");
}

Status checkVersion(Cursor& in, const char* what) {
  uint8_t version = in.byte();
  if (!in.ok()) return corrupt(what);
  if (version != kProguardRecordVersion) {
    return unsupported(std::string("proguard ") + what + " record has format version " +
                       std::to_string(version) + "; this build reads version " +
                       std::to_string(kProguardRecordVersion) + " (re-ingest the mapping)");
  }
  return Status::ok();
}

std::string keyOf(std::initializer_list<std::string_view> parts) {
  std::string key;
  bool first = true;
  for (std::string_view part : parts) {
    if (!first) key.push_back('\0');
    key.append(part);
    first = false;
  }
  return key;
}

enum RangeFlags : uint8_t {
  kHasMinified = 1,
  kHasOriginal = 2,
  kSynthesized = 4,
  kOutline = 8,
  kHasCallsite = 16,
  kHasRules = 32,
};

bool sameSignature(const RangeRecord& a, const RangeRecord& b) {
  return a.return_type == b.return_type && a.holder == b.holder && a.name == b.name && a.params == b.params;
}

void indexMethod(MethodRecord& method) {
  const auto& ranges = method.ranges;
  for (uint32_t i = 0; i < ranges.size(); ++i) {
    bool continues = !method.chains.empty() && ranges[i].minified && ranges[i - 1].minified &&
                     *ranges[i].minified == *ranges[i - 1].minified;
    if (continues) {
      ++method.chains.back().count;
    } else {
      method.chains.push_back({i, 1});
    }
  }
  for (uint32_t c = 0; c < method.chains.size(); ++c) {
    const RangeRecord& outermost = method.outermost(method.chains[c]);
    auto it = std::find_if(method.overloads.begin(), method.overloads.end(), [&](const auto& overload) {
      return sameSignature(method.outermost(method.chains[overload[0]]), outermost);
    });
    if (it == method.overloads.end()) method.overloads.push_back({c});
    else it->push_back(c);
  }
}

}  // namespace

std::string buildPointerKey(std::string_view app, std::string_view build_id) {
  return keyOf({"B", app, build_id});
}
std::string idPointerKey(std::string_view map_id) { return keyOf({"I", map_id}); }
std::string loadPrefix(std::string_view load_id) { return keyOf({"L", load_id, ""}); }
std::string mapInfoKey(std::string_view load_id) { return keyOf({"L", load_id, "M"}); }
std::string classKey(std::string_view load_id, std::string_view obfuscated_class) {
  return keyOf({"L", load_id, "C", obfuscated_class});
}
std::string sourceFileKey(std::string_view load_id, std::string_view original_class) {
  return keyOf({"L", load_id, "S", original_class});
}

std::string encodeBuildPointer(const BuildPointer& pointer) {
  std::string out(1, static_cast<char>(kProguardRecordVersion));
  putString(out, pointer.load_id);
  putString(out, pointer.pg_map_id);
  putString(out, pointer.pg_map_hash);
  return out;
}

Expected<BuildPointer> decodeBuildPointer(std::string_view bytes) {
  Cursor in(bytes);
  RESTACK_RETURN_IF_ERROR(checkVersion(in, "build pointer"));
  BuildPointer pointer;
  pointer.load_id = std::string(in.string());
  pointer.pg_map_id = std::string(in.string());
  pointer.pg_map_hash = std::string(in.string());
  if (!in.ok()) return corrupt("build pointer");
  return pointer;
}

std::string encodeIdPointer(const IdPointer& pointer) {
  std::string out(1, static_cast<char>(kProguardRecordVersion));
  putString(out, pointer.load_id);
  putString(out, pointer.app);
  putString(out, pointer.build_id);
  return out;
}

Expected<IdPointer> decodeIdPointer(std::string_view bytes) {
  Cursor in(bytes);
  RESTACK_RETURN_IF_ERROR(checkVersion(in, "map id pointer"));
  IdPointer pointer;
  pointer.load_id = std::string(in.string());
  pointer.app = std::string(in.string());
  pointer.build_id = std::string(in.string());
  if (!in.ok()) return corrupt("map id pointer");
  return pointer;
}

std::string encodeMapInfo(const MapInfo& info) {
  std::string out(1, static_cast<char>(kProguardRecordVersion));
  for (const std::string* text : {&info.app, &info.build_id, &info.pg_map_id, &info.pg_map_hash,
                                  &info.map_version, &info.compiler}) {
    putString(out, *text);
  }
  putVarint(out, info.classes);
  return out;
}

Expected<MapInfo> decodeMapInfo(std::string_view bytes) {
  Cursor in(bytes);
  RESTACK_RETURN_IF_ERROR(checkVersion(in, "map info"));
  MapInfo info;
  for (std::string* text : {&info.app, &info.build_id, &info.pg_map_id, &info.pg_map_hash,
                            &info.map_version, &info.compiler}) {
    *text = std::string(in.string());
  }
  info.classes = in.varint();
  if (!in.ok()) return corrupt("map info");
  return info;
}

std::string encodeSourceFile(std::string_view file) {
  std::string out(1, static_cast<char>(kProguardRecordVersion));
  putString(out, file);
  return out;
}

Expected<std::string> decodeSourceFile(std::string_view bytes) {
  Cursor in(bytes);
  RESTACK_RETURN_IF_ERROR(checkVersion(in, "source file"));
  std::string file(in.string());
  if (!in.ok()) return corrupt("source file");
  return file;
}

std::string encodeClassRecord(const ClassMapping& mapping) {
  // String table: each distinct type / holder / name / parameter list once. Index 0 is "".
  std::vector<std::string_view> strings{""};
  std::unordered_map<std::string_view, uint32_t> index{{"", 0}};
  auto intern = [&](std::string_view text) {
    auto [it, added] = index.emplace(text, static_cast<uint32_t>(strings.size()));
    if (added) strings.push_back(text);
    return it->second;
  };
  // Methods grouped by obfuscated name (sorted), file order kept within a name.
  std::map<std::string_view, std::vector<const MethodMapping*>> by_name;
  for (const MethodMapping& method : mapping.methods) {
    intern(method.signature.return_type);
    intern(method.signature.holder);
    intern(method.signature.name);
    intern(method.signature.params);
    by_name[method.obfuscated_name].push_back(&method);
  }
  std::string out(1, static_cast<char>(kProguardRecordVersion));
  putString(out, mapping.original_name);
  putString(out, mapping.source_file);
  out.push_back(static_cast<char>(mapping.synthesized ? 1 : 0));
  putVarint(out, strings.size());
  for (std::string_view text : strings) putString(out, text);
  putVarint(out, by_name.size());
  for (const auto& [name, methods] : by_name) {
    putString(out, name);
    putVarint(out, methods.size());
    for (const MethodMapping* method : methods) {
      uint8_t flags = 0;
      if (method->minified) flags |= kHasMinified;
      if (method->original) flags |= kHasOriginal;
      if (method->synthesized) flags |= kSynthesized;
      if (method->outline) flags |= kOutline;
      if (method->outline_callsite) flags |= kHasCallsite;
      if (!method->rewrite_rules.empty()) flags |= kHasRules;
      out.push_back(static_cast<char>(flags));
      if (method->minified) {
        putVarint(out, method->minified->from);
        putVarint(out, method->minified->to);
      }
      if (method->original) {
        putVarint(out, method->original->from);
        putVarint(out, method->original->to);
      }
      putVarint(out, index.at(method->signature.return_type));
      putVarint(out, index.at(method->signature.holder));
      putVarint(out, index.at(method->signature.name));
      putVarint(out, index.at(method->signature.params));
      if (method->outline_callsite) {
        putVarint(out, method->outline_callsite->positions.size());
        for (auto [from, to] : method->outline_callsite->positions) {
          putVarint(out, from);
          putVarint(out, to);
        }
        putString(out, method->outline_callsite->outline);
      }
      if (!method->rewrite_rules.empty()) {
        putVarint(out, method->rewrite_rules.size());
        for (const RewriteRule& rule : method->rewrite_rules) {
          putVarint(out, rule.throws_descriptors.size());
          for (const std::string& descriptor : rule.throws_descriptors) putString(out, descriptor);
          putVarint(out, rule.remove_inner_frames);
        }
      }
    }
  }
  return out;
}

Expected<ClassRecord> decodeClassRecord(std::string_view bytes) {
  Cursor in(bytes);
  RESTACK_RETURN_IF_ERROR(checkVersion(in, "class"));
  ClassRecord record;
  record.original_name = std::string(in.string());
  record.source_file = std::string(in.string());
  record.synthesized = (in.byte() & 1) != 0;
  size_t string_count = in.count();
  record.strings.reserve(string_count);
  for (size_t i = 0; i < string_count && in.ok(); ++i) record.strings.emplace_back(in.string());
  if (!in.ok() || record.strings.empty()) return corrupt("class");
  bool bad_index = false;
  auto readIndex = [&]() {
    uint32_t value = in.u32();
    if (value < record.strings.size()) return value;
    bad_index = true;
    return uint32_t{0};
  };
  size_t method_count = in.count(2);
  record.methods.resize(method_count);
  for (MethodRecord& method : record.methods) {
    if (!in.ok()) break;
    method.obfuscated_name = std::string(in.string());
    size_t range_count = in.count(5);
    method.ranges.resize(range_count);
    for (RangeRecord& range : method.ranges) {
      if (!in.ok()) break;
      uint8_t flags = in.byte();
      if (flags & kHasMinified) {
        uint32_t from = in.u32(), to = in.u32();
        range.minified = LineRange{from, std::max(from, to)};
      }
      if (flags & kHasOriginal) {
        uint32_t from = in.u32(), to = in.u32();
        range.original = LineRange{from, std::max(from, to)};
      }
      range.return_type = readIndex();
      range.holder = readIndex();
      range.name = readIndex();
      range.params = readIndex();
      range.synthesized = (flags & kSynthesized) != 0;
      range.outline = (flags & kOutline) != 0;
      if (flags & kHasCallsite) {
        OutlineCallsite callsite;
        size_t n = in.count(2);
        callsite.positions.reserve(n);
        for (size_t i = 0; i < n && in.ok(); ++i) {
          uint32_t from = in.u32(), to = in.u32();
          callsite.positions.emplace_back(from, to);
        }
        callsite.outline = std::string(in.string());
        range.callsite = std::move(callsite);
      }
      if (flags & kHasRules) {
        size_t rule_count = in.count(2);
        range.rules.resize(rule_count);
        for (RewriteRule& rule : range.rules) {
          size_t n = in.count();
          for (size_t i = 0; i < n && in.ok(); ++i) rule.throws_descriptors.emplace_back(in.string());
          rule.remove_inner_frames = in.u32();
        }
      }
    }
  }
  if (!in.ok() || bad_index || !in.atEnd()) return corrupt("class");
  for (MethodRecord& method : record.methods) indexMethod(method);
  return record;
}

const MethodRecord* ClassRecord::findMethod(std::string_view obfuscated) const {
  auto it = std::lower_bound(methods.begin(), methods.end(), obfuscated,
                             [](const MethodRecord& method, std::string_view name) {
                               return method.obfuscated_name < name;
                             });
  if (it == methods.end() || it->obfuscated_name != obfuscated) return nullptr;
  return &*it;
}

size_t ClassRecord::memoryBytes() const {
  size_t bytes = sizeof(ClassRecord) + original_name.capacity() + source_file.capacity();
  for (const std::string& text : strings) bytes += sizeof(std::string) + text.capacity();
  for (const MethodRecord& method : methods) {
    bytes += sizeof(MethodRecord) + method.obfuscated_name.capacity() +
             method.chains.size() * sizeof(MethodRecord::Chain) + method.overloads.size() * 40;
    for (const RangeRecord& range : method.ranges) {
      bytes += sizeof(RangeRecord);
      if (range.callsite) bytes += range.callsite->positions.size() * 8 + range.callsite->outline.size();
      for (const RewriteRule& rule : range.rules) bytes += sizeof(RewriteRule) + rule.throws_descriptors.size() * 48;
    }
  }
  return bytes;
}

std::atomic<uint64_t>& proguardStoreEpoch() {
  static std::atomic<uint64_t> epoch{0};
  return epoch;
}

}  // namespace restack::proguard

// A minimal streaming JSON writer for Restack's output records. Values are appended in order;
// the caller is responsible for well-formed nesting (begin/end pairs), which the tests check by
// re-parsing every output with simdjson.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "formats/common/json_text.h"

namespace restack::pipeline {

class JsonWriter {
 public:
  void beginObject() { punctuation('{'); }
  void endObject() { closing('}'); }
  void beginArray() { punctuation('['); }
  void endArray() { closing(']'); }
  void key(std::string_view name) {
    separate();
    appendString(name);
    put(':');
    first_ = true;  // the value that follows needs no comma
  }
  // A key spelt in the source as a string literal ("frames"): an identifier, copied without
  // looking for bytes to escape (most of an event's keys; a runtime name goes through
  // key(std::string_view)). N counts the literal's terminating NUL.
  template <size_t N>
  void key(const char (&name)[N]) {
    char* out = room(N + 3);  // ,"name":
    *out = ',';
    out += first_ ? 0 : 1;
    *out++ = '"';
    std::memcpy(out, name, N - 1);  // a constant size: no call
    out += N - 1;
    *out++ = '"';
    *out++ = ':';
    commit(out);
    first_ = true;
  }
  void string(std::string_view value) {
    separate();
    appendString(value);
  }
  // A value the code spells (a status, reason or kind name): ASCII with no byte to escape, copied
  // as is.
  void name(std::string_view value) {
    separate();
    put('"');
    copy(value);
    put('"');
  }
  void number(int64_t value) {
    separate();
    decimal(value);
  }
  void unsignedNumber(uint64_t value) {
    separate();
    decimal(value);
  }
  void boolean(bool value) {
    separate();
    char* out = room(5);
    std::memcpy(out, value ? "true" : "false", 5);  // "true" stops at its NUL, cut by the size
    commit(out + (value ? 4 : 5));
  }
  void null() {
    separate();
    char* out = room(4);
    std::memcpy(out, "null", 4);
    commit(out + 4);
  }
  // A value that is already valid JSON text (passed through from the input).
  void raw(std::string_view json) {
    separate();
    copy(json);
  }

  // Room for `bytes` of output, so that a large event is not copied as it grows.
  void reserve(size_t bytes) { out_.reserve(bytes); }
  size_t size() const { return out_.size() + staged_; }
  std::string_view text() {
    flush();
    return out_;
  }
  std::string take() {
    flush();
    return std::move(out_);
  }

 private:
  // Short writes (keys, names, numbers, a frame's strings) go to a small fixed buffer through a
  // pointer, without a capacity check or a call to std::string::append each; it is appended to
  // out_ in one piece when full. Small enough to stay in the L1 cache.
  static constexpr size_t kStageBytes = 2048;
  // A string longer than this is written in pieces (its worst case would not fit the stage).
  static constexpr size_t kStagedStringBytes = (kStageBytes - 2 - kJsonStringSlack) / 6;

  // `bytes` at most kStageBytes.
  char* room(size_t bytes) {
    if (kStageBytes - staged_ < bytes) flush();
    return stage_ + staged_;
  }
  void commit(const char* end) { staged_ = static_cast<size_t>(end - stage_); }
  void put(char c) {
    *room(1) = c;
    ++staged_;
  }
  void flush() {
    out_.append(stage_, staged_);
    staged_ = 0;
  }
  void copy(std::string_view bytes) {
    if (bytes.size() > kStageBytes / 4) {
      flush();
      out_.append(bytes);
      return;
    }
    char* out = room(bytes.size());
    std::memcpy(out, bytes.data(), bytes.size());
    commit(out + bytes.size());
  }

  void separate() {
    if (!first_) {
      put(',');
    }
    first_ = false;
  }
  void punctuation(char opening) {
    char* out = room(2);
    *out = ',';
    out += first_ ? 0 : 1;
    *out++ = opening;
    commit(out);
    first_ = true;
  }
  void closing(char bracket) {
    put(bracket);
    first_ = false;
  }
  void appendString(std::string_view value) {
    if (value.size() <= kStagedStringBytes) {
      commit(writeJsonString(room(jsonStringRoom(value.size())), value));
      return;
    }
    // A long string (a whole raw stack) through the stage in pieces, each with room for its
    // worst case.
    put('"');
    while (!value.empty()) {
      const size_t piece = jsonStringCut(value, kStagedStringBytes);
      commit(writeJsonStringBody(room(jsonStringRoom(piece)), value.substr(0, piece)));
      value.remove_prefix(piece);
    }
    put('"');
  }
  template <typename Integer>
  void decimal(Integer value) {
    char* out = room(24);  // any 64-bit integer and its sign
    commit(std::to_chars(out, out + 24, value).ptr);
  }

  std::string out_;
  char stage_[kStageBytes];
  size_t staged_ = 0;
  bool first_ = true;
};

}  // namespace restack::pipeline

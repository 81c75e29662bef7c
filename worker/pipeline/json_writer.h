// A minimal streaming JSON writer for Restack's output records. Values are appended in order;
// the caller is responsible for well-formed nesting (begin/end pairs), which the tests check by
// re-parsing every output with simdjson.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "formats/common/decimal.h"
#include "formats/common/json_text.h"

namespace restack::pipeline {

class JsonWriter {
 public:
  void beginObject() {
    separate();
    out_.push_back('{');
    first_ = true;
  }
  void endObject() {
    out_.push_back('}');
    first_ = false;
  }
  void beginArray() {
    separate();
    out_.push_back('[');
    first_ = true;
  }
  void endArray() {
    out_.push_back(']');
    first_ = false;
  }
  void key(std::string_view name) {
    separate();
    appendString(name);
    out_.push_back(':');
    first_ = true;  // the value that follows needs no comma
  }
  // A key spelt in the source as a string literal ("frames"): an identifier, copied without
  // looking for bytes to escape (most of an event's keys; a runtime name goes through
  // key(std::string_view)). N counts the literal's terminating NUL.
  template <size_t N>
  void key(const char (&name)[N]) {
    char quoted[N + 3];  // ,"name": in one append
    size_t size = 0;
    if (!first_) quoted[size++] = ',';
    quoted[size++] = '"';
    for (size_t i = 0; i + 1 < N; ++i) quoted[size++] = name[i];
    quoted[size++] = '"';
    quoted[size++] = ':';
    out_.append(quoted, size);
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
    out_.push_back('"');
    out_.append(value);
    out_.push_back('"');
  }
  void number(int64_t value) {
    separate();
    appendDecimal(out_, value);
  }
  void unsignedNumber(uint64_t value) {
    separate();
    appendDecimal(out_, value);
  }
  void boolean(bool value) {
    separate();
    out_.append(value ? "true" : "false", value ? 4 : 5);
  }
  void null() {
    separate();
    out_.append("null");
  }
  // A value that is already valid JSON text (passed through from the input).
  void raw(std::string_view json) {
    separate();
    out_.append(json);
  }

  // Room for `bytes` of output, so that a large event is not copied as it grows.
  void reserve(size_t bytes) { out_.reserve(bytes); }
  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void separate() {
    if (!first_) out_.push_back(',');
    first_ = false;
  }
  void appendString(std::string_view value) { appendJsonString(out_, value); }

  std::string out_;
  bool first_ = true;
};

}  // namespace restack::pipeline

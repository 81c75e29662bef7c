// A minimal streaming JSON writer for Restack's output records. Values are appended in order;
// the caller is responsible for well-formed nesting (begin/end pairs), which the tests check by
// re-parsing every output with simdjson.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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
  void string(std::string_view value) {
    separate();
    appendString(value);
  }
  void number(int64_t value) {
    separate();
    out_.append(std::to_string(value));
  }
  void unsignedNumber(uint64_t value) {
    separate();
    out_.append(std::to_string(value));
  }
  void boolean(bool value) {
    separate();
    out_.append(value ? "true" : "false");
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

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void separate() {
    if (!first_) out_.push_back(',');
    first_ = false;
  }
  void appendString(std::string_view value);

  std::string out_;
  bool first_ = true;
};

}  // namespace restack::pipeline

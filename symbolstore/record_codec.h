// The one codec of the symbol store's records (symbolstore/native/native_records.h,
// symbolstore/proguard/proguard_records.h, symbolstore/sourcemap/sourcemap_records.h): how values
// are written, how they are read back without ever reading past their end, and what a record
// that cannot be read becomes.
//
// Value layout shared by every record: one version byte, then the fields of that version.
// Fields are built from
//   u8        one byte
//   varint    LEB128, unsigned, at most 10 bytes (a 64-bit value)
//   zigzag    a signed value as a varint: 0 -1 1 -2 … become 0 1 2 3 …
//   bytes     a varint length, then that many bytes (strings)
//   u64le     8 bytes, little endian
// Keys are built by each family; RecordWriter::putBigEndian writes their fixed-width integers
// (big endian, so that RocksDB orders keys by number).
//
// Error policy: a value that is truncated, has bytes left over, holds a count the value cannot
// hold or fails a check of its family, and a value whose version this build does not read, is
// an Error with code kMalformedInput (docs/design.md §9) whose message names the family, the
// record type, the key (when the caller passed it) and what was wrong, and says what repairs it.
// Nothing throws. The resolvers answer a frame whose record cannot be read as kNotFound with
// that message as the frame's note; the event itself is still restored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "formats/common/status.h"

namespace restack::records {

// One record type: what a reader accepts and what its errors say.
struct RecordType {
  std::string_view family;  // "native", "proguard", "sourcemap"
  std::string_view name;    // "function", "class", "mapping chunk", …
  uint8_t oldest = 1;       // versions this build reads: oldest … newest
  uint8_t newest = 1;
  std::string_view remedy;  // what repairs a bad record: "re-ingest the image"
};

// A key as a user can read it in a message: printable ASCII as is, other bytes as \xNN, long
// keys cut with "…".
std::string printableKey(std::string_view key);

class RecordWriter {
 public:
  // Starts a value with its version byte.
  explicit RecordWriter(uint8_t version) { out_.push_back(static_cast<char>(version)); }

  void u8(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void varint(uint64_t value) { putVarint(out_, value); }
  void zigzag(int64_t value) {
    putVarint(out_, (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
  }
  void bytes(std::string_view text) {
    putVarint(out_, text.size());
    out_.append(text);
  }
  void raw(std::string_view bytes) { out_.append(bytes); }
  void u64le(uint64_t value) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  void reserve(size_t bytes) { out_.reserve(bytes); }
  std::string take() { return std::move(out_); }

  static void putVarint(std::string& out, uint64_t value) {
    if (value < 0x80) {
      out.push_back(static_cast<char>(value));
      return;
    }
    // Built on the stack and appended once: one capacity check instead of one per byte.
    char buffer[10];
    size_t size = 0;
    while (value >= 0x80) {
      buffer[size++] = static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    buffer[size++] = static_cast<char>(value);
    out.append(buffer, size);
  }
  // `width` bytes of `value`, most significant first (key parts).
  static void putBigEndian(std::string& out, uint64_t value, int width) {
    for (int shift = 8 * (width - 1); shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
  }

 private:
  std::string out_;
};

// Reads one value. Every accessor is bounds-checked; the first failure makes the reader failed
// (`ok()` false), remembers what went wrong and makes every later read return zero / empty, so
// that a decoder may read a whole group of fields and check `ok()` once.
class RecordReader {
 public:
  RecordReader(const RecordType& type, std::string_view value, std::string_view key = {})
      : type_(&type), bytes_(value), key_(key) {}

  // Reads the version byte; 0 (and a failed reader) when it is missing or outside
  // type.oldest … type.newest.
  uint8_t version() {
    if (bytes_.empty()) return fail("empty value"), 0;
    const uint8_t found = static_cast<uint8_t>(bytes_[0]);
    pos_ = 1;
    if (found < type_->oldest || found > type_->newest) {
      unknown_version_ = found;
      ok_ = false;
      pos_ = bytes_.size();
      return 0;
    }
    return found;
  }

  bool ok() const { return ok_; }
  bool atEnd() const { return pos_ == bytes_.size(); }

  uint8_t u8() {
    if (pos_ >= bytes_.size()) return fail("truncated"), 0;
    return static_cast<uint8_t>(bytes_[pos_++]);
  }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return fail("truncated"), 0;
      const uint8_t b = static_cast<uint8_t>(bytes_[pos_++]);
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return value;
    }
    return fail("varint longer than 10 bytes"), 0;
  }
  uint32_t varint32() {
    const uint64_t value = varint();
    if (value > UINT32_MAX) return fail("value does not fit 32 bits"), 0;
    return static_cast<uint32_t>(value);
  }
  // An "index + 1" field: 0 means `none`.
  uint32_t optionalIndex(uint32_t none) {
    const uint32_t value = varint32();
    return value == 0 ? none : value - 1;
  }
  int64_t zigzag() {
    const uint64_t value = varint();
    return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
  }
  // A length-prefixed byte string, as a view into the value.
  std::string_view bytes() {
    const uint64_t length = varint();
    if (!ok_) return {};
    if (length > bytes_.size() - pos_) return fail("string longer than the value"), std::string_view();
    std::string_view text = bytes_.substr(pos_, length);
    pos_ += length;
    return text;
  }
  // Everything not read yet.
  std::string_view rest() {
    std::string_view text = bytes_.substr(pos_);
    pos_ = bytes_.size();
    return text;
  }
  uint64_t u64le() {
    if (bytes_.size() - pos_ < 8) return fail("truncated"), 0;
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes_[pos_ + i]);
    pos_ += 8;
    return value;
  }
  // A count of items each at least `min_bytes` long: refuses counts the rest of the value cannot
  // hold, so that a corrupt count never makes a decoder reserve gigabytes.
  uint64_t count(size_t min_bytes = 1) {
    const uint64_t value = varint();
    if (!ok_) return 0;
    if (value > (bytes_.size() - pos_) / (min_bytes == 0 ? 1 : min_bytes)) {
      return fail("count larger than the value can hold"), 0;
    }
    return value;
  }

  // Marks the reader failed with `what` (a string literal; the first failure is kept).
  void fail(const char* what) {
    if (ok_) what_ = what;
    ok_ = false;
    pos_ = bytes_.size();
  }
  // fail(what), then error().
  Error refuse(const char* what) {
    fail(what);
    return error();
  }
  // The error of a failed reader; for a reader that did not fail, bytes left over count as the
  // failure ("trailing bytes").
  Error error() const;
  // Status::ok() when the reader did not fail and read the whole value; else error().
  Status finish() const {
    if (ok_ && atEnd()) return Status::ok();
    return error();
  }

 private:
  const RecordType* type_;
  std::string_view bytes_;
  std::string_view key_;
  size_t pos_ = 0;
  bool ok_ = true;
  int unknown_version_ = -1;
  const char* what_ = "";
};

// True for the errors of RecordReader: a record that cannot be read. Resolvers answer the frame
// that needed it as kNotFound with the message as its note (store reads failing stay errors).
inline bool isUnreadableRecord(const Error& error) {
  return error.code() == ErrorCode::kMalformedInput;
}

}  // namespace restack::records

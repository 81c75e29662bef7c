// JsonWriter writes through a fixed stage and cuts long strings into pieces; its text must be
// byte for byte what appending each piece of JSON to a std::string gives, whatever the mix and
// the lengths (strings and passthrough values shorter and longer than the stage, multi-byte and
// broken UTF-8 across the cuts).
#include "worker/pipeline/json_writer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "formats/common/decimal.h"
#include "formats/common/json_text.h"

namespace restack::pipeline {
namespace {

// The writer as a sequence of std::string appends: the output JsonWriter must match.
class ReferenceWriter {
 public:
  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }
  void key(std::string_view name) {
    separate();
    appendJsonString(out_, name);
    out_ += ':';
    first_ = true;
  }
  void string(std::string_view value) {
    separate();
    appendJsonString(out_, value);
  }
  void name(std::string_view value) {
    separate();
    out_ += '"';
    out_ += value;
    out_ += '"';
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
    out_ += value ? "true" : "false";
  }
  void null() {
    separate();
    out_ += "null";
  }
  void raw(std::string_view json) {
    separate();
    out_ += json;
  }
  const std::string& text() const { return out_; }

 private:
  void separate() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  void open(char bracket) {
    separate();
    out_ += bracket;
    first_ = true;
  }
  void close(char bracket) {
    out_ += bracket;
    first_ = false;
  }
  std::string out_;
  bool first_ = true;
};

std::string randomText(std::mt19937& rng) {
  static const std::string pieces[] = {"a",
                                       "frame",
                                       "\n",
                                       "\t",
                                       "\"",
                                       "\\",
                                       "\xC3\xA9",
                                       "\xE2\x82\xAC",
                                       "\xF0\x9F\x98\x80",
                                       "\x80",
                                       "\xC3",
                                       "\xff",
                                       std::string(1, '\0')};
  const size_t lengths[] = {0, 5, 40, 300, 340, 2000, 6000};
  const size_t target = lengths[rng() % std::size(lengths)] + rng() % 8;
  std::string text;
  while (text.size() < target) {
    text += rng() % 3 == 0 ? pieces[rng() % std::size(pieces)] : std::string(1 + rng() % 20, 'x');
  }
  return text;
}

TEST(JsonWriter, MatchesAppendsToAString) {
  std::mt19937 rng(5);
  for (int round = 0; round < 200; ++round) {
    JsonWriter writer;
    ReferenceWriter reference;
    if (round % 2 == 0) writer.reserve(rng() % 4096);
    const int operations = 1 + static_cast<int>(rng() % 400);
    for (int i = 0; i < operations; ++i) {
      switch (rng() % 12) {
        case 0:
          writer.beginObject();
          reference.beginObject();
          break;
        case 1:
          writer.endObject();
          reference.endObject();
          break;
        case 2:
          writer.beginArray();
          reference.beginArray();
          break;
        case 3:
          writer.endArray();
          reference.endArray();
          break;
        case 4:
          writer.key("symbol_offset");
          reference.key("symbol_offset");
          break;
        case 5: {
          const std::string name = randomText(rng);
          writer.key(name);
          reference.key(name);
          break;
        }
        case 6: {
          const std::string value = randomText(rng);
          writer.string(value);
          reference.string(value);
          break;
        }
        case 7:
          writer.name("symbolicated");
          reference.name("symbolicated");
          break;
        case 8: {
          const int64_t value = static_cast<int64_t>(rng()) - (1LL << 31);
          writer.number(value);
          reference.number(value);
          break;
        }
        case 9: {
          const uint64_t value = (static_cast<uint64_t>(rng()) << 32) | rng();
          writer.unsignedNumber(value);
          reference.unsignedNumber(value);
          break;
        }
        case 10: {
          const bool value = rng() % 2 == 0;
          writer.boolean(value);
          reference.boolean(value);
          if (rng() % 4 == 0) {
            writer.null();
            reference.null();
          }
          break;
        }
        default: {
          const std::string json = "\"" + std::string(rng() % 3000, 'r') + "\"";
          writer.raw(json);
          reference.raw(json);
          break;
        }
      }
      ASSERT_EQ(writer.size(), reference.text().size()) << "round " << round << ", operation " << i;
    }
    ASSERT_EQ(writer.take(), reference.text()) << "round " << round;
  }
}

}  // namespace
}  // namespace restack::pipeline

// StringMemo computes a key's value once and hands back the same value after; memory stays bounded.
#include "grouping/string_memo.h"

#include <gtest/gtest.h>

#include <string>

namespace restack::grouping {
namespace {

TEST(StringMemo, ComputesEachKeyOnce) {
  StringMemo<std::string> memo;
  int computed = 0;
  auto upper = [&computed](std::string_view key) {
    ++computed;
    std::string out(key);
    for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return out;
  };
  EXPECT_EQ(memo.get("abc", upper), "ABC");
  EXPECT_EQ(memo.get("abc", upper), "ABC");
  EXPECT_EQ(memo.get("xyz", upper), "XYZ");
  EXPECT_EQ(computed, 2);
}

TEST(StringMemo, LongKeysAndManyKeysStillAnswer) {
  StringMemo<size_t> memo;
  auto length = [](std::string_view key) { return key.size(); };
  const std::string long_key(5000, 'x');
  EXPECT_EQ(memo.get(long_key, length), 5000u);
  EXPECT_EQ(memo.get(long_key, length), 5000u);
  // More keys than it keeps: emptied on the way, every answer still the function's.
  for (size_t i = 0; i < 20000; ++i) {
    const std::string key(i % 50 + 1, 'a' + static_cast<char>(i % 26));
    ASSERT_EQ(memo.get(key + std::to_string(i), length), key.size() + std::to_string(i).size());
  }
}

}  // namespace
}  // namespace restack::grouping

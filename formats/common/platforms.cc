#include "formats/common/platforms.h"

#include <array>

namespace restack {

std::span<const std::string_view> platforms() {
  // One line per platform.
  static constexpr std::array<std::string_view, 4> kPlatforms = {
      "ios",
      "android",
      "web",
      "react_native",
  };
  return kPlatforms;
}

bool isRegisteredPlatform(std::string_view name) {
  for (std::string_view platform : platforms()) {
    if (platform == name) return true;
  }
  return false;
}

std::string platformList() {
  const auto names = platforms();
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? " or " : ", ";
    list += names[i];
  }
  return list;
}

}  // namespace restack

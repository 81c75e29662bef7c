// The event platforms Restack accepts (docs/design.md §3, the `platform` field): one registry line
// each in platforms.cc. Raw-event parsing and grouping rules files check a platform against it, and
// their error messages list it, so a new platform (a Flutter app, say) is one line there.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace restack {

// The registered platform names, in registry order.
std::span<const std::string_view> platforms();
// Whether `name` is a registered platform.
bool isRegisteredPlatform(std::string_view name);
// The names for messages: "ios, android, web or react_native".
std::string platformList();

}  // namespace restack

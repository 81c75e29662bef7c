// Source maps inlined in their script as data: URLs (inline_map.h).
#include "formats/sourcemap/inline_map.h"

#include <openssl/evp.h>

#include <memory>

namespace restack::sourcemap {
namespace {

// The URL of the last "//# sourceMappingURL=" (or "//@ …") comment, up to its line's end; `at`
// is where the comment starts.
std::optional<std::string_view> lastSourceMappingUrl(std::string_view script, size_t& comment) {
  size_t at = std::string_view::npos;
  for (std::string_view marker : {"//# sourceMappingURL=", "//@ sourceMappingURL="}) {
    const size_t found = script.rfind(marker);
    if (found != std::string_view::npos && (at == std::string_view::npos || found > at)) at = found;
  }
  if (at == std::string_view::npos) return std::nullopt;
  comment = at;
  std::string_view url = script.substr(at + 21);
  const size_t end = url.find_first_of("\r\n");
  if (end != std::string_view::npos) url = url.substr(0, end);
  while (!url.empty() && (url.back() == ' ' || url.back() == '\t')) url.remove_suffix(1);
  return url;
}

}  // namespace

std::optional<Expected<InlineSourceMap>> inlineSourceMap(std::string_view script, size_t max_bytes) {
  using Result = Expected<InlineSourceMap>;
  size_t comment = 0;
  const auto url = lastSourceMappingUrl(script, comment);
  if (!url || !url->starts_with("data:")) return std::nullopt;
  const size_t comma = url->find(',');
  if (comma == std::string_view::npos) {
    return Result(malformed("the inline source map's data: URL has no ',' before its data"));
  }
  const std::string_view media = url->substr(5, comma - 5);
  const std::string_view data = url->substr(comma + 1);
  if (!media.ends_with(";base64")) {
    return Result(
        unsupported("the inline source map is percent-encoded, not base64; upload the map as its own file instead"));
  }
  if (data.size() / 4 * 3 > max_bytes) {
    return Result(tooLarge("the inline source map decodes to about " + std::to_string(data.size() / 4 * 3) +
                           " bytes, over limits.max_sourcemap_bytes (" + std::to_string(max_bytes) + " bytes)"));
  }
  std::unique_ptr<EVP_ENCODE_CTX, void (*)(EVP_ENCODE_CTX*)> context(EVP_ENCODE_CTX_new(), EVP_ENCODE_CTX_free);
  if (!context) return Result(Error(ErrorCode::kInternal, "cannot allocate a base64 decoder"));
  EVP_DecodeInit(context.get());
  std::string json(data.size() / 4 * 3 + 3, '\0');
  int written = 0, last = 0;
  // EVP_DecodeUpdate takes an int length: feed the data in slices.
  size_t offset = 0, out = 0;
  while (offset < data.size()) {
    const size_t slice = std::min<size_t>(data.size() - offset, 1u << 30);
    if (EVP_DecodeUpdate(context.get(), reinterpret_cast<unsigned char*>(json.data() + out), &written,
                         reinterpret_cast<const unsigned char*>(data.data() + offset), static_cast<int>(slice)) < 0) {
      return Result(malformed("the inline source map's base64 data is corrupt"));
    }
    out += static_cast<size_t>(written);
    offset += slice;
  }
  if (EVP_DecodeFinal(context.get(), reinterpret_cast<unsigned char*>(json.data() + out), &last) < 0) {
    return Result(malformed("the inline source map's base64 data is corrupt"));
  }
  json.resize(out + static_cast<size_t>(last));
  InlineSourceMap map;
  map.json = std::move(json);
  map.comment_begin = comment;
  return Result(std::move(map));
}

}  // namespace restack::sourcemap

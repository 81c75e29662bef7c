#include "symbolstore/fuzz/record_fuzz_entry.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "symbolstore/native/native_records.h"
#include "symbolstore/proguard/proguard_records.h"
#include "symbolstore/record_codec.h"
#include "symbolstore/sourcemap/sourcemap_records.h"
#include "symbolstore/usage.h"

namespace restack::records {
namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "record fuzz invariant failed: %s\n", what);
    std::abort();
  }
}

// decode → encode must reach a fixed point after one step (non-canonical varints in the input may
// encode differently the first time, never the second).
template <typename Decode, typename Encode>
int roundTrip(std::string_view value, Decode decode, Encode encode) {
  auto decoded = decode(value);
  if (!decoded) {
    require(isUnreadableRecord(decoded.error()), "a decoder failed with another error than malformed_input");
    require(!decoded.error().message().empty(), "an error without a message");
    return 0;
  }
  const std::string once = encode(*decoded);
  auto again = decode(once);
  require(static_cast<bool>(again), "an encoded record does not decode");
  require(encode(*again) == once, "decode/encode is not stable");
  return 1;
}

}  // namespace

int recordFuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view type = kRecordFuzzTypes[data[0] % std::size(kRecordFuzzTypes)];
  const std::string_view value(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace ns = native_store;
  namespace sm = sourcemap_records;
  constexpr uint64_t kBegin = 0x10d00;
  if (type == "native.image") return roundTrip(value, [](auto v) { return ns::decodeImage(v); }, ns::encodeImage);
  if (type == "native.function") {
    return roundTrip(value, [](auto v) { return ns::decodeFunction(kBegin, v); }, ns::encodeFunction);
  }
  if (type == "native.symbols") {
    return roundTrip(value, [](auto v) { return ns::decodeSymbolChunk(kBegin, v); }, ns::encodeSymbolChunk);
  }
  if (type == "native.strings") {
    return roundTrip(value, [](auto v) { return ns::decodeStringBlock(v); }, ns::encodeStringBlock);
  }
  if (type == "native.module") return roundTrip(value, [](auto v) { return ns::decodeIdList(v); }, ns::encodeIdList);
  if (type == "native.alias") {
    return roundTrip(
        value, [](auto v) { return ns::decodeAlias(v); }, [](const std::string& id) { return ns::encodeAlias(id); });
  }
  if (type == "proguard.build-pointer") {
    return roundTrip(value, [](auto v) { return proguard::decodeBuildPointer(v); }, proguard::encodeBuildPointer);
  }
  if (type == "proguard.id-pointer") {
    return roundTrip(value, [](auto v) { return proguard::decodeIdPointer(v); }, proguard::encodeIdPointer);
  }
  if (type == "proguard.map-info") {
    return roundTrip(value, [](auto v) { return proguard::decodeMapInfo(v); }, proguard::encodeMapInfo);
  }
  if (type == "proguard.source-file") {
    return roundTrip(
        value, [](auto v) { return proguard::decodeSourceFile(v); },
        [](const std::string& file) { return proguard::encodeSourceFile(file); });
  }
  if (type == "proguard.class") {
    auto decoded = proguard::decodeClassRecord(value);
    if (!decoded) {
      require(isUnreadableRecord(decoded.error()), "a decoder failed with another error than malformed_input");
      return 0;
    }
    for (const proguard::MethodRecord& method : decoded->methods) {
      require(decoded->findMethod(method.obfuscated_name) != nullptr, "a decoded method is not found by its name");
      for (const proguard::RangeRecord& range : method.ranges) (void)decoded->holderOf(range);
    }
    (void)decoded->memoryBytes();
    return 1;
  }
  if (type == "sourcemap.pointer") {
    return roundTrip(value, [](auto v) { return sm::decodePointer(v); }, sm::encodePointer);
  }
  if (type == "sourcemap.header") return roundTrip(value, [](auto v) { return sm::decodeHeader(v); }, sm::encodeHeader);
  if (type == "sourcemap.source") return roundTrip(value, [](auto v) { return sm::decodeSource(v); }, sm::encodeSource);
  if (type == "sourcemap.text") {
    return roundTrip(
        value, [](auto v) { return sm::decodeText(v); },
        [](const std::vector<std::string>& lines) {
          return sm::encodeText(std::vector<std::string_view>(lines.begin(), lines.end()));
        });
  }
  if (type == "sourcemap.functions") {
    return roundTrip(value, [](auto v) { return sm::decodeGeneratedFunctions(v); }, sm::encodeGeneratedFunctions);
  }
  if (type == "usage.time") return roundTrip(value, [](auto v) { return usage::decodeTime(v); }, usage::encodeTime);
  return roundTrip(value, [](auto v) { return sm::decodeChunk(v, 0, 0); }, sm::encodeChunk);
}

}  // namespace restack::records

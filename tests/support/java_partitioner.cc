#include "tests/support/java_partitioner.h"

namespace restack::testkafka {

int32_t javaMurmur2(std::string_view key) {
  const auto* data = reinterpret_cast<const uint8_t*>(key.data());
  const uint32_t length = static_cast<uint32_t>(key.size());
  const uint32_t m = 0x5bd1e995;
  const int r = 24;
  uint32_t h = 0x9747b28c ^ length;
  const uint32_t blocks = length / 4;
  for (uint32_t i = 0; i < blocks; ++i) {
    const uint8_t* block = data + 4 * i;
    uint32_t k =
        uint32_t(block[0]) | (uint32_t(block[1]) << 8) | (uint32_t(block[2]) << 16) | (uint32_t(block[3]) << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  const uint8_t* tail = data + 4 * blocks;
  switch (length % 4) {
    case 3:
      h ^= uint32_t(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      h ^= uint32_t(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      h ^= uint32_t(tail[0]);
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int javaPartitionFor(std::string_view key, int partitions) {
  return static_cast<int>((static_cast<uint32_t>(javaMurmur2(key)) & 0x7fffffff) % static_cast<uint32_t>(partitions));
}

}  // namespace restack::testkafka

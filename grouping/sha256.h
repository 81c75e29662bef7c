// SHA-256 (FIPS 180-4), written for Restack so fingerprints do not depend on a crypto library.
// The fingerprint is the first 128 bits of SHA-256 over its components (fingerprint.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace restack::grouping {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  std::array<uint8_t, 32> finish();

 private:
  void block(const uint8_t* chunk);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lowercase hex of the first `bytes` bytes of `digest`.
std::string toHex(const std::array<uint8_t, 32>& digest, size_t bytes = 32);

}  // namespace restack::grouping

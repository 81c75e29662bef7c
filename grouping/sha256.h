// SHA-256 for fingerprints, computed by OpenSSL's libcrypto (Debian's libssl-dev): the digest is
// the standard one whatever computes it, and libcrypto uses the CPU's SHA extensions where it has
// them. The fingerprint is the first 128 bits of SHA-256 over its components (fingerprint.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // libcrypto's EVP_MD_CTX (openssl/types.h), kept out of this header

namespace restack::grouping {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // The digest of everything updated since construction; the object is spent after it.
  std::array<uint8_t, 32> finish();

 private:
  evp_md_ctx_st* context_;
};

// SHA-256 of `bytes` in one call.
std::array<uint8_t, 32> sha256(std::string_view bytes);

// Lowercase hex of the first `bytes` bytes of `digest`.
std::string toHex(const std::array<uint8_t, 32>& digest, size_t bytes = 32);

}  // namespace restack::grouping

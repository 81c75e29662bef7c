#include "grouping/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace restack::grouping {
namespace {

// Fetched once: EVP_sha256() would look the algorithm up in the provider on every init.
const EVP_MD* sha256Digest() {
  static const EVP_MD* const digest = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    if (fetched == nullptr) {
      // Only a broken libcrypto installation (no default provider) gets here; no fingerprint can
      // be computed, so no event could be published correctly.
      std::fputs("restack: libcrypto has no SHA2-256 digest (is OpenSSL's default provider installed?)\n", stderr);
      std::abort();
    }
    return fetched;
  }();
  return digest;
}

// A failure of these calls means memory exhaustion inside libcrypto.
void check(int ok) {
  if (ok != 1) {
    std::fputs("restack: libcrypto failed to compute a SHA-256 digest\n", stderr);
    std::abort();
  }
}

}  // namespace

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) check(0);
  check(EVP_DigestInit_ex2(context_, sha256Digest(), nullptr));
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(context_);
}

void Sha256::update(std::string_view bytes) {
  check(EVP_DigestUpdate(context_, bytes.data(), bytes.size()));
}

std::array<uint8_t, 32> Sha256::finish() {
  std::array<uint8_t, 32> digest{};
  unsigned int size = 0;
  check(EVP_DigestFinal_ex(context_, digest.data(), &size));
  return digest;
}

std::array<uint8_t, 32> sha256(std::string_view bytes) {
  // A context per thread, initialised again for each digest: no allocation per fingerprint.
  struct ThreadContext {
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    ~ThreadContext() { EVP_MD_CTX_free(md); }
  };
  thread_local ThreadContext context;
  if (context.md == nullptr) check(0);
  std::array<uint8_t, 32> digest{};
  unsigned int size = 0;
  check(EVP_DigestInit_ex2(context.md, sha256Digest(), nullptr));
  check(EVP_DigestUpdate(context.md, bytes.data(), bytes.size()));
  check(EVP_DigestFinal_ex(context.md, digest.data(), &size));
  return digest;
}

std::string toHex(const std::array<uint8_t, 32>& digest, size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes && i < digest.size(); ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace restack::grouping

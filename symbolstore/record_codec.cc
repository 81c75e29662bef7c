#include "symbolstore/record_codec.h"

namespace restack::records {

std::string printableKey(std::string_view key) {
  constexpr size_t kMaxShown = 96;
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < key.size() && i < kMaxShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 15]);
    }
  }
  if (key.size() > kMaxShown) out += "…";
  return out;
}

Error RecordReader::error() const {
  std::string record = std::string(type_->family) + " " + std::string(type_->name) + " record";
  if (!key_.empty()) record += " " + printableKey(key_);
  std::string message;
  if (unknown_version_ >= 0) {
    message = record + " has format version " + std::to_string(unknown_version_) + "; this restack reads versions " +
              std::to_string(type_->oldest) + " to " + std::to_string(type_->newest);
  } else {
    const char* what = ok_ ? "trailing bytes after the last field" : what_;
    message = "corrupt " + record + ": " + what;
  }
  message += "; ";
  message += type_->remedy;
  return malformed(std::move(message));
}

}  // namespace restack::records

#include "formats/native/demangle.h"

#include <llvm/Demangle/Demangle.h>

#include <optional>
#include <utility>

#include "formats/swift/rust_demangle.h"

namespace restack::native {

std::string demangleName(std::string_view name) {
  if (std::optional<std::string> rust = rust::demangleRust(name)) return std::move(*rust);
  std::string result;
  if (llvm::nonMicrosoftDemangle(name, result)) return result;
  return std::string(name);
}

}  // namespace restack::native

#include "formats/native/demangle.h"

#include <llvm/Demangle/Demangle.h>

namespace restack::native {

std::string demangleName(std::string_view name) {
  std::string result;
  if (llvm::nonMicrosoftDemangle(name, result)) return result;
  return std::string(name);
}

}  // namespace restack::native

#include "formats/native/demangle.h"

#include <llvm/Demangle/Demangle.h>

namespace restack::native {

std::string demangleName(std::string_view name) {
  std::string result;
  if (llvm::nonMicrosoftDemangle(name, result)) return result;
  return std::string(name);
}

bool isSwiftMangled(std::string_view name) {
  if (name.starts_with("_")) name.remove_prefix(1);
  return name.starts_with("$s") || name.starts_with("$S") || name.starts_with("$e") || name.starts_with("_T0");
}

}  // namespace restack::native

#include "symbolstore/symbolizer.h"

namespace restack {

Symbolizer::Symbolizer(SymbolStore& store, const SymbolizerOptions& options)
    : store_(store),
      native_(store, options.native),
      proguard_(store, options.proguard),
      sourcemap_(store, options.sourcemap) {}

}  // namespace restack

#include "symbolstore/ingest.h"

namespace restack {

Expected<IngestReport> ingestNative(SymbolStore&, const UploadMeta&, const UploadContent&,
                                    const IngestOptions&) {
  return unsupported("native symbol files (dSYM, Mach-O, ELF) are not supported yet");
}

}  // namespace restack

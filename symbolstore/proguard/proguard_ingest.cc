#include "symbolstore/ingest.h"

namespace restack {

Expected<IngestReport> ingestProguard(SymbolStore&, const UploadMeta&, const UploadContent&,
                                      const IngestOptions&) {
  return unsupported("ProGuard/R8 mapping files are not supported yet");
}

}  // namespace restack

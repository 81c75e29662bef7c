#include "symbolstore/ingest.h"

namespace restack {

Expected<IngestReport> ingestSourcemap(SymbolStore&, const UploadMeta&, const UploadContent&,
                                       const IngestOptions&) {
  return unsupported("source maps are not supported yet");
}

}  // namespace restack

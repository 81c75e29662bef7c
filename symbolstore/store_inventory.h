// What a local store holds, symbol set by symbol set, and how to delete one build's sets:
// the read and write sides of `restack store list|show|delete` (docs/design.md §7).
//
// A symbol set is what one upload left in the store under one identifier: a native image (its
// debug id), a ProGuard/R8 mapping (one load of the `proguard` family), a source map (its root
// map id, index-map sections and RAM-bundle segments included) or a kept minified file. The
// inventory reads every key of the native, proguard and sourcemap families once and counts each
// key and value's exact size to the set that owns it: a full scan, proportional to the store's
// size (about a second per GB on a local disk); RocksDB's GetApproximateSizes would be faster
// but counts whole blocks and cannot attribute interleaved key ranges.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/store.h"

namespace restack::inventory {

struct SymbolSet {
  std::string family;      // the column family: native, proguard, sourcemap
  std::string kind;        // elf, macho, proguard, sourcemap, minified
  std::string app;         // empty for a shared set
  std::string build;       // empty for a shared set
  std::string identifier;  // debug id hex, pg_map_id (or map hash), source-map debug id or map id
  std::string name;        // module, mapping compiler, or the file a map serves
  uint64_t bytes = 0;      // keys + values, exact
  uint64_t records = 0;
  int64_t uploaded = 0;   // unix minutes; 0 = not recorded (ingested by an older restack)
  int64_t last_used = 0;  // unix minutes; 0 = never used since the store recorded uses
  bool shared = false;    // serves every app (no app and build)
  // Records by type ("function", "class", …) and by format version byte.
  std::map<std::string, uint64_t> record_types;
  std::map<uint32_t, uint64_t> versions;
  // More lines for `restack store show`: arch, tiers, address ranges, other builds served, …
  std::vector<std::string> details;

  // What delete removes (internal to this layer).
  std::string native_id;          // raw debug id bytes
  std::string proguard_load;      // load id
  std::vector<uint64_t> map_ids;  // root map id first, then sections and segments
  std::vector<std::string> keys;  // single keys owned by the set: a native image's 'I' and aliases
  // Other builds whose module index lists this image, or that point at the same map / load.
  std::vector<std::string> also_used_by;  // "app:build"
};

// One native module index record ('N' app 00 build 00 module): which images a build has under a
// module name.
struct ModuleIndex {
  std::string key;
  std::string app;
  std::string build;
  std::string module;
  std::vector<std::string> ids;  // raw debug ids
};

struct Inventory {
  std::vector<SymbolSet> sets;  // sorted by app, build, family, name, identifier
  std::vector<ModuleIndex> modules;
  // Keys that belong to a build rather than to one set: ProGuard build and map-id pointers,
  // source-map pointers and kept minified files. Deleting the build deletes them.
  struct BuildKey {
    std::string family;
    std::string key;
    std::string app;
    std::string build;
  };
  std::vector<BuildKey> build_keys;
  std::vector<std::string> problems;  // records that could not be read (key and reason)
};

// Reads the store's inventory (works on a read-only store).
Expected<Inventory> readInventory(SymbolStore& store);

// "app:build", or the app / build alone when the other is empty, or "(shared)".
std::string buildLabel(std::string_view app, std::string_view build);

// Sets matching `target`: an identifier (debug ids in any case, with or without dashes), a
// module or file name, or "app:build".
std::vector<const SymbolSet*> findSets(const Inventory& inventory, std::string_view target);

// What `restack store delete` removes and keeps.
struct DeletePlan {
  std::vector<const SymbolSet*> deleted;
  // Sets of the build that are kept, and why ("also used by …; pass --debug-id …").
  std::vector<std::pair<const SymbolSet*, std::string>> kept;
  uint64_t bytes = 0;
  uint64_t records = 0;
  // Module indexes (native) and usage records removed or rewritten, for the summary.
  std::vector<std::string> index_changes;
};

// Plans deleting every set of (`app`, `build`) and every native image named in `debug_ids`
// (lowercase hex). Images that another build lists in its module index, and shared images, are
// kept unless their debug id is given; a map or mapping another build points at is kept too.
DeletePlan planDelete(const Inventory& inventory, std::string_view app, std::string_view build,
                      const std::vector<std::string>& debug_ids);

// Applies the plan in one write batch (module indexes of other builds rewritten without the
// deleted images), then compacts the deleted key ranges so that the disk space is returned.
Status applyDelete(SymbolStore& store, const Inventory& inventory, const DeletePlan& plan, std::string_view app,
                   std::string_view build);

}  // namespace restack::inventory

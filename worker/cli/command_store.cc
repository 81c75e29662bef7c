// restack store list|show|delete: what a local symbol store holds, per app, build and identifier,
// and deleting one build's symbols (symbolstore/store_inventory.h; docs/operations.md
// "Inspecting and pruning a store").
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "config/config.h"
#include "symbolstore/store_inventory.h"
#include "symbolstore/usage.h"
#include "worker/cli/commands.h"

namespace restack::cli {
namespace {

struct StoreFlags {
  std::string config_path;
  std::string store;
  std::string app;
  std::string build;
  std::vector<std::string> debug_ids;
  std::string target;
  bool json = false;
  bool yes = false;
};

// "2026-11-23 21:00" (UTC), or `none`.
std::string formatMinute(int64_t minutes, const char* none) {
  if (minutes <= 0) return none;
  const std::time_t seconds = static_cast<std::time_t>(minutes) * 60;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M", &utc);
  return buffer;
}

// "2026-11-23T21:00:00Z" for JSON, or null.
std::string jsonMinute(int64_t minutes) {
  if (minutes <= 0) return "null";
  const std::time_t seconds = static_cast<std::time_t>(minutes) * 60;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "\"%Y-%m-%dT%H:%M:00Z\"", &utc);
  return buffer;
}

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", u);
      out += buffer;
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

// 1536 -> "1.5 KiB".
std::string humanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  if (unit == 0) {
    std::snprintf(buffer, sizeof buffer, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.1f %s", value, units[unit]);
  }
  return buffer;
}

// Printable form of names that may hold control bytes (the RAM-bundle pointer's).
std::string shown(std::string_view text, const char* empty = "-") {
  if (text.empty()) return empty;
  std::string out;
  for (char c : text) out.push_back(static_cast<unsigned char>(c) < 0x20 ? '?' : c);
  return out;
}

// The store folder: --store, or store.path of --config.
Expected<std::string> storePath(const StoreFlags& flags) {
  if (!flags.store.empty() && !flags.config_path.empty()) {
    return invalidArgument("pass either --store DIR or --config FILE, not both");
  }
  std::string path = flags.store;
  if (path.empty()) {
    if (flags.config_path.empty()) return invalidArgument("pass --store DIR or --config FILE (its store.path)");
    auto config = config::loadConfig(flags.config_path, config::processEnvironment());
    if (!config) return config.error();
    path = config->store.path;
  }
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::path(path) / "CURRENT", error)) {
    return notFound("no symbol store at " + path);
  }
  return path;
}

// True when RocksDB refused to open because another process (a running worker) holds the lock.
bool isLockError(const Error& error) {
  const std::string& text = error.message();
  return text.find("lock file") != std::string::npos || text.find("LOCK") != std::string::npos;
}

// True when another process holds RocksDB's lock on the store (a running worker): RocksDB locks
// <store>/LOCK with fcntl, which F_GETLK reports without taking it.
bool lockedByAnotherProcess(const std::string& path) {
  const int fd = ::open((path + "/LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock lock{};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  const bool locked = ::fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
  ::close(fd);
  return locked;
}

// Opens the store for reading. Read-only: RocksDB takes no lock, so this works beside a worker
// that has the store open, and shows what the worker had written when it opened.
Expected<std::unique_ptr<SymbolStore>> openForReading(const StoreFlags& flags) {
  auto path = storePath(flags);
  if (!path) return path.error();
  StoreOptions options;
  options.path = *path;
  options.read_only = true;
  options.block_cache_bytes = 16u << 20;
  if (lockedByAnotherProcess(*path)) {
    std::cerr << "note: a running worker has " << *path
              << " open; reading it read-only as of now (uses the worker noted in the last minute are not in it "
                 "yet)\n";
  }
  return SymbolStore::open(options);
}

int fail(const char* command, const Error& error) {
  std::cerr << "restack store " << command << ": " << error.message() << "\n";
  return error.code() == ErrorCode::kInvalidArgument ? 2 : 1;
}

void printTable(const std::vector<const inventory::SymbolSet*>& sets, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"APP", "BUILD", "KIND", "IDENTIFIER", "NAME", "BYTES", "RECORDS", "UPLOADED", "LAST USED"});
  for (const inventory::SymbolSet* set : sets) {
    rows.push_back({set->shared ? "(shared)" : shown(set->app), set->shared ? "-" : shown(set->build), set->kind,
                    shown(set->identifier), shown(set->name), humanBytes(set->bytes), std::to_string(set->records),
                    formatMinute(set->uploaded, "-"), formatMinute(set->last_used, "never")});
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const bool right = i == 5 || i == 6;  // numbers
      const std::string pad(widths[i] - row[i].size(), ' ');
      line += right ? pad + row[i] : row[i] + (i + 1 == row.size() ? "" : pad);
      if (i + 1 < row.size()) line += "  ";
    }
    out << line << "\n";
  }
}

std::string jsonLine(const inventory::SymbolSet& set) {
  std::ostringstream out;
  out << "{\"app\":" << jsonString(set.app) << ",\"build\":" << jsonString(set.build)
      << ",\"family\":" << jsonString(set.family) << ",\"kind\":" << jsonString(set.kind)
      << ",\"identifier\":" << jsonString(set.identifier) << ",\"name\":" << jsonString(set.name)
      << ",\"shared\":" << (set.shared ? "true" : "false") << ",\"bytes\":" << set.bytes
      << ",\"records\":" << set.records << ",\"uploaded\":" << jsonMinute(set.uploaded)
      << ",\"last_used\":" << jsonMinute(set.last_used) << "}";
  return out.str();
}

void printProblems(const inventory::Inventory& inventory) {
  for (const std::string& problem : inventory.problems) std::cerr << "warning: " << problem << "\n";
}

int runList(const StoreFlags& flags) {
  auto store = openForReading(flags);
  if (!store) return fail("list", store.error());
  auto inventory = inventory::readInventory(**store);
  if (!inventory) return fail("list", inventory.error());
  printProblems(*inventory);
  std::vector<const inventory::SymbolSet*> sets;
  for (const auto& set : inventory->sets) {
    if (flags.app.empty() || set.app == flags.app) sets.push_back(&set);
  }
  if (flags.json) {
    for (const auto* set : sets) std::cout << jsonLine(*set) << "\n";
    return 0;
  }
  if (sets.empty()) {
    std::cout << "no symbols" << (flags.app.empty() ? "" : " for app " + flags.app) << " in "
              << (*store)->options().path << "\n";
    return 0;
  }
  printTable(sets, std::cout);
  return 0;
}

int runShow(const StoreFlags& flags) {
  auto store = openForReading(flags);
  if (!store) return fail("show", store.error());
  auto inventory = inventory::readInventory(**store);
  if (!inventory) return fail("show", inventory.error());
  printProblems(*inventory);
  const auto sets = inventory::findSets(*inventory, flags.target);
  if (sets.empty()) {
    std::cerr << "restack store show: nothing in " << (*store)->options().path << " is named " << flags.target
              << " (an identifier, module or file name, or app:build; restack store list shows them)\n";
    return 1;
  }
  if (flags.json) {
    for (const auto* set : sets) std::cout << jsonLine(*set) << "\n";
    return 0;
  }
  bool first = true;
  for (const inventory::SymbolSet* set : sets) {
    if (!first) std::cout << "\n";
    first = false;
    std::cout << set->kind << " " << shown(set->identifier) << "\n";
    std::cout << "  build       " << inventory::buildLabel(set->app, set->build) << "\n";
    std::cout << "  name        " << shown(set->name) << "\n";
    std::cout << "  family      " << set->family << "\n";
    std::cout << "  stored      " << humanBytes(set->bytes) << " (" << set->bytes << " bytes of keys and values) in "
              << set->records << " records\n";
    std::string types;
    for (const auto& [type, count] : set->record_types) {
      types += (types.empty() ? "" : ", ") + std::to_string(count) + " " + type;
    }
    std::cout << "  records     " << types << "\n";
    std::string versions;
    for (const auto& [version, count] : set->versions) {
      versions += (versions.empty() ? "" : ", ") + std::to_string(count) + " of version " + std::to_string(version);
    }
    std::cout << "  versions    " << versions << "\n";
    std::cout << "  uploaded    " << formatMinute(set->uploaded, "not recorded") << "\n";
    std::cout << "  last used   " << formatMinute(set->last_used, "never") << "\n";
    for (const std::string& detail : set->details) std::cout << "  " << shown(detail) << "\n";
  }
  return 0;
}

int runDelete(const StoreFlags& flags) {
  const bool by_build = !flags.app.empty() || !flags.build.empty();
  if (by_build && (flags.app.empty() || flags.build.empty())) {
    return fail("delete", invalidArgument("pass both --app and --build"));
  }
  if (!by_build && flags.debug_ids.empty()) {
    return fail("delete", invalidArgument("pass --app A --build B, or --debug-id ID for a shared image"));
  }
  std::vector<std::string> debug_ids;
  for (const std::string& id : flags.debug_ids) {
    std::string hex = usage::normalizeDebugId(id);
    if (hex.empty()) return fail("delete", invalidArgument("--debug-id " + id + " is not a hex debug id"));
    debug_ids.push_back(std::move(hex));
  }
  auto path = storePath(flags);
  if (!path) return fail("delete", path.error());
  StoreOptions options;
  options.path = *path;
  options.read_only = !flags.yes;  // a dry run writes nothing
  options.block_cache_bytes = 16u << 20;
  if (flags.yes && lockedByAnotherProcess(*path)) {
    std::cerr << "restack store delete: the store at " << *path
              << " is in use by a running worker (RocksDB holds its lock); stop the worker first. Deleting from a "
                 "running worker's store is not supported yet.\n";
    return 1;
  }
  auto store = SymbolStore::open(options);
  if (!store) {
    if (isLockError(store.error())) {
      std::cerr << "restack store delete: the store at " << *path
                << " is in use by a running worker (RocksDB holds its lock); stop the worker first. Deleting "
                   "from a running worker's store is not supported yet. ("
                << store.error().message() << ")\n";
      return 1;
    }
    return fail("delete", store.error());
  }
  auto inventory = inventory::readInventory(**store);
  if (!inventory) return fail("delete", inventory.error());
  printProblems(*inventory);
  const inventory::DeletePlan plan = inventory::planDelete(*inventory, flags.app, flags.build, debug_ids);
  for (const std::string& id : debug_ids) {
    const bool found = std::any_of(plan.deleted.begin(), plan.deleted.end(),
                                   [&](const inventory::SymbolSet* set) { return set->identifier == id; });
    if (!found) return fail("delete", notFound("no native image with debug id " + id + " in " + *path));
  }
  if (plan.deleted.empty() && plan.index_changes.empty()) {
    std::cout << "nothing to delete for " << inventory::buildLabel(flags.app, flags.build) << " in " << *path;
    if (!plan.kept.empty()) std::cout << " (" << plan.kept.size() << " set(s) kept, below)";
    std::cout << "\n";
  }
  const char* verb = flags.yes ? "deleted" : "would delete";
  for (const inventory::SymbolSet* set : plan.deleted) {
    std::cout << verb << "  " << set->kind << " " << shown(set->identifier) << " " << shown(set->name) << " ("
              << inventory::buildLabel(set->app, set->build) << ", " << humanBytes(set->bytes) << ", " << set->records
              << " records)\n";
  }
  for (const std::string& change : plan.index_changes) std::cout << verb << "  " << shown(change) << "\n";
  for (const auto& [set, reason] : plan.kept) {
    std::cout << "kept  " << set->kind << " " << shown(set->identifier) << " " << shown(set->name) << ": " << reason
              << "\n";
  }
  if (!flags.yes) {
    std::cout << "dry run: nothing was deleted; add --yes to delete " << plan.deleted.size() << " set(s), "
              << humanBytes(plan.bytes) << "\n";
    return 0;
  }
  Status applied = inventory::applyDelete(**store, *inventory, plan, flags.app, flags.build);
  if (!applied) return fail("delete", applied.error());
  std::cout << "deleted " << plan.deleted.size() << " set(s), " << humanBytes(plan.bytes) << ", and compacted\n";
  return 0;
}

void addLocationFlags(CLI::App* command, StoreFlags& flags) {
  command->add_option("--store", flags.store, "The store folder");
  command->add_option("--config", flags.config_path, "Take the store folder from this file's store.path");
}

}  // namespace

Command addStoreCommand(CLI::App& app) {
  auto flags = std::make_shared<StoreFlags>();
  CLI::App* command = app.add_subcommand(
      "store", "Inspect a local symbol store (what it holds per app, build and identifier) and delete builds.");
  command->require_subcommand(1);

  CLI::App* list = command->add_subcommand(
      "list",
      "One row per stored symbol set: app, build, kind, identifier, name, stored bytes (keys and values, exact), "
      "records, upload time and last use (UTC, minute resolution). Opens the store read-only, so it works beside "
      "a running worker.");
  addLocationFlags(list, *flags);
  list->add_option("--app", flags->app, "Only this app's sets");
  list->add_flag("--json", flags->json, "JSON Lines, one set per line");

  CLI::App* show = command->add_subcommand(
      "show",
      "Details of the sets named by an identifier (debug id, pg_map_id, map id), a module or file name, or "
      "app:build: record types, format versions, address ranges, sizes. Read-only.");
  show->add_option("target", flags->target, "identifier | name | app:build")->required();
  addLocationFlags(show, *flags);
  show->add_flag("--json", flags->json, "JSON Lines, one set per line");

  CLI::App* remove = command->add_subcommand(
      "delete",
      "Delete every symbol set of a build (native images, mappings, source maps, their indexes and usage times) "
      "and compact the freed ranges. Without --yes, prints what it would delete and deletes nothing. Images that "
      "another build also lists, and shared images, are deleted only when named with --debug-id. Refuses while a "
      "worker has the store open.");
  addLocationFlags(remove, *flags);
  remove->add_option("--app", flags->app, "App whose build to delete");
  remove->add_option("--build", flags->build, "Build id to delete");
  remove->add_option("--debug-id", flags->debug_ids, "Also delete this native image (repeatable; shared images too)");
  remove->add_flag("--yes", flags->yes, "Delete for real (default: dry run)");

  return [flags, list, show, remove] {
    if (list->parsed()) return runList(*flags);
    if (show->parsed()) return runShow(*flags);
    if (remove->parsed()) return runDelete(*flags);
    return 2;
  };
}

}  // namespace restack::cli

// A byte-bounded, sharded cache of immutable decoded records, safe to use from many threads.
//
// Keyed by (space, name): `space` is a 64-bit namespace (the numeric id of one ingested mapping),
// `name` a class name. Each shard is one flat open-addressing table (linear probing on a 64-bit
// hash of the key), so a hit touches one or two cache lines instead of a hash-node chain and a
// list node. Eviction is CLOCK (second chance): a hit only sets a bit; when the shard is over
// its byte budget a hand sweeps the table, clearing set bits and evicting the first entry whose
// bit is already clear. Removal uses backward-shift deletion, so the table has no tombstones.
//
// Values are shared_ptr<const V>: a reader keeps its record alive while it uses it even if the
// cache evicts it meanwhile. A null value is a cached "absent" answer (a class that is not in
// the mapping), which matters: most frames of a trace are framework classes the mapping lacks.
//
//   ClockCache<ClassRecord> cache(64 << 20);
//   uint64_t hash = cache.hashOf(load, "a.b");
//   std::shared_ptr<const ClassRecord> record;
//   if (!cache.get(load, "a.b", hash, record)) cache.put(load, "a.b", hash, decode(…), cost);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "symbolstore/proguard/proguard_records.h"

namespace restack::proguard {

template <typename V>
class ClockCache {
 public:
  // `capacity_bytes` is split evenly over `shards` shards (each key lives in one shard).
  explicit ClockCache(size_t capacity_bytes, size_t shards = 32)
      : shards_(shards == 0 ? 1 : shards), shard_capacity_(capacity_bytes / shards_.size()) {}

  static uint64_t hashOf(uint64_t space, std::string_view name) { return hashName(name, space); }

  // true and `value` set when the key is cached (value may be null for a cached absence).
  bool get(uint64_t space, std::string_view name, uint64_t hash, std::shared_ptr<const V>& value) {
    Shard& shard = shardFor(hash);
    std::lock_guard lock(shard.mutex);
    Slot* slot = shard.find(space, name, hash);
    if (slot == nullptr) return false;
    slot->referenced = true;
    value = slot->value;
    return true;
  }

  // Software prefetch, two steps (see ClassRecord's prefetch steps for why): prefetchSlot brings
  // the table slot a `get` of this hash reads into the CPU cache; prefetchValue, once the slot is
  // cached, the value's first bytes and the reference count before them (make_shared puts the
  // count in front of the value), which `get` writes. Neither changes the cache's state.
  void prefetchSlot(uint64_t hash) {
    Shard& shard = shardFor(hash);
    std::lock_guard lock(shard.mutex);
    if (!shard.slots.empty()) __builtin_prefetch(&shard.slots[hash & shard.mask()]);
  }
  void prefetchValue(uint64_t space, std::string_view name, uint64_t hash) {
    Shard& shard = shardFor(hash);
    std::lock_guard lock(shard.mutex);
    Slot* slot = shard.find(space, name, hash);
    if (slot == nullptr || slot->value == nullptr) return;
    const char* value = reinterpret_cast<const char*>(slot->value.get());
    __builtin_prefetch(value - 16, 1);
    for (size_t offset = 0; offset < sizeof(V); offset += 64) __builtin_prefetch(value + offset);
    __builtin_prefetch(value + sizeof(V) - 1);
  }

  void put(uint64_t space, std::string_view name, uint64_t hash, std::shared_ptr<const V> value, size_t cost) {
    Shard& shard = shardFor(hash);
    cost += name.size() + kEntryOverhead;
    std::lock_guard lock(shard.mutex);
    if (Slot* existing = shard.find(space, name, hash)) {
      shard.bytes -= existing->cost;
      shard.erase(static_cast<size_t>(existing - shard.slots.data()));
    }
    if (cost > shard_capacity_) return;  // larger than the whole shard: do not cache
    shard.insert(Slot{hash, space, std::string(name), std::move(value), cost, true, true});
    shard.bytes += cost;
    while (shard.bytes > shard_capacity_ && shard.count > 1) shard.evictOne();
  }

  void clear() {
    for (Shard& shard : shards_) {
      std::lock_guard lock(shard.mutex);
      shard.slots.clear();
      shard.count = 0;
      shard.bytes = 0;
      shard.hand = 0;
    }
  }

  size_t bytes() {
    size_t total = 0;
    for (Shard& shard : shards_) {
      std::lock_guard lock(shard.mutex);
      total += shard.bytes;
    }
    return total;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint64_t space = 0;
    std::string name;
    std::shared_ptr<const V> value;
    size_t cost = 0;
    bool used = false;
    bool referenced = false;
  };
  // What one entry costs beyond its value: its slot (at most half of the table is used), the
  // name's heap copy when it does not fit in place.
  static constexpr size_t kEntryOverhead = 2 * sizeof(Slot);

  struct Shard {
    std::mutex mutex;
    std::vector<Slot> slots;  // power-of-two size; empty until the first insert
    size_t count = 0;
    size_t bytes = 0;
    size_t hand = 0;  // CLOCK hand: next slot the eviction sweep looks at

    size_t mask() const { return slots.size() - 1; }

    Slot* find(uint64_t space, std::string_view name, uint64_t hash) {
      if (slots.empty()) return nullptr;
      for (size_t i = hash & mask();; i = (i + 1) & mask()) {
        Slot& slot = slots[i];
        if (!slot.used) return nullptr;
        if (slot.hash == hash && slot.space == space && slot.name == name) return &slot;
      }
    }

    void insert(Slot&& entry) {
      if ((count + 1) * 2 > slots.size()) grow();
      size_t i = entry.hash & mask();
      while (slots[i].used) i = (i + 1) & mask();
      slots[i] = std::move(entry);
      ++count;
    }

    void grow() {
      std::vector<Slot> old = std::move(slots);
      slots = std::vector<Slot>(old.empty() ? 16 : old.size() * 2);
      count = 0;
      hand = 0;
      for (Slot& slot : old) {
        if (!slot.used) continue;
        size_t i = slot.hash & mask();
        while (slots[i].used) i = (i + 1) & mask();
        slots[i] = std::move(slot);
        ++count;
      }
    }

    // Backward-shift deletion: later entries of the probe run move up so that no lookup stops
    // early at the freed slot.
    void erase(size_t i) {
      size_t j = i;
      while (true) {
        j = (j + 1) & mask();
        if (!slots[j].used) break;
        size_t home = slots[j].hash & mask();
        // Entry j may move to i only if its home is not cyclically inside (i, j].
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays) continue;
        slots[i] = std::move(slots[j]);
        i = j;
      }
      slots[i] = Slot{};
      --count;
    }

    void evictOne() {
      while (true) {
        hand &= mask();
        Slot& slot = slots[hand];
        if (slot.used && !slot.referenced) {
          bytes -= slot.cost;
          erase(hand);  // the slot now holds the next entry of the run (or is empty): look again
          return;
        }
        if (slot.used) slot.referenced = false;
        ++hand;
      }
    }
  };

  Shard& shardFor(uint64_t hash) { return shards_[(hash >> 40) % shards_.size()]; }

  std::vector<Shard> shards_;
  size_t shard_capacity_;
};

}  // namespace restack::proguard

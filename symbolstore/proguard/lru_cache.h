// A byte-bounded, sharded LRU cache of immutable decoded records, safe to use from many threads.
//
// Values are shared_ptr<const V>: a reader keeps its record alive while it uses it even if the
// cache evicts it meanwhile. A null value is a cached "absent" answer (a class that is not in
// the mapping), which matters: most frames of a trace are framework classes the mapping lacks.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace restack::proguard {

template <typename V>
class ShardedLruCache {
 public:
  // `capacity_bytes` is split evenly over `shards` shards (each key lives in one shard).
  explicit ShardedLruCache(size_t capacity_bytes, size_t shards = 16)
      : shards_(shards == 0 ? 1 : shards), shard_capacity_(capacity_bytes / shards_.size()) {}

  // true and `value` set when `key` is cached (value may be null for a cached absence).
  bool get(const std::string& key, std::shared_ptr<const V>& value) {
    Shard& shard = shardFor(key);
    std::lock_guard lock(shard.mutex);
    auto it = shard.index.find(key);
    if (it == shard.index.end()) return false;
    shard.order.splice(shard.order.begin(), shard.order, it->second);
    value = it->second->value;
    return true;
  }

  void put(const std::string& key, std::shared_ptr<const V> value, size_t cost) {
    Shard& shard = shardFor(key);
    cost += key.size() + kEntryOverhead;
    std::lock_guard lock(shard.mutex);
    if (auto it = shard.index.find(key); it != shard.index.end()) {
      shard.bytes -= it->second->cost;
      shard.order.erase(it->second);
      shard.index.erase(it);
    }
    if (cost > shard_capacity_) return;  // larger than the whole shard: do not cache
    shard.order.push_front(Entry{key, std::move(value), cost});
    shard.index.emplace(key, shard.order.begin());
    shard.bytes += cost;
    while (shard.bytes > shard_capacity_ && !shard.order.empty()) {
      Entry& last = shard.order.back();
      shard.bytes -= last.cost;
      shard.index.erase(last.key);
      shard.order.pop_back();
    }
  }

  void clear() {
    for (Shard& shard : shards_) {
      std::lock_guard lock(shard.mutex);
      shard.index.clear();
      shard.order.clear();
      shard.bytes = 0;
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
  static constexpr size_t kEntryOverhead = 96;  // list node + hash node + key copy
  struct Entry {
    std::string key;
    std::shared_ptr<const V> value;
    size_t cost = 0;
  };
  struct Shard {
    std::mutex mutex;
    std::list<Entry> order;  // most recently used first
    std::unordered_map<std::string, typename std::list<Entry>::iterator> index;
    size_t bytes = 0;
  };
  Shard& shardFor(const std::string& key) {
    return shards_[std::hash<std::string_view>{}(key) % shards_.size()];
  }

  std::vector<Shard> shards_;
  size_t shard_capacity_;
};

}  // namespace restack::proguard

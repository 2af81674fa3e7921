//===- NewestEntries.h - A map that keeps its newest entries ----*- C++ -*-===//
//
// The backend's in-process reuse tables (optimised modules, assembled
// objects) keep what the last few variants made, bounded in bytes: a sweep
// compiles one kernel's hint sets close together, so the oldest entry is the
// one least likely to be asked for again.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_LIB_BACKEND_NEWESTENTRIES_H
#define FLY_LIB_BACKEND_NEWESTENTRIES_H

#include <cstddef>
#include <deque>
#include <limits>
#include <map>

namespace fly {

/// Values by key, at most `maxBytes` of them by the size each insert gives
/// and at most `maxEntries`; an insert that goes over drops the oldest
/// entries first. The entry just inserted always stays, even alone over the
/// bound (a caller that must not hold such a value checks its size first).
/// Not synchronised: the owner locks.
template <typename Key, typename Value> class NewestEntries {
public:
  explicit NewestEntries(size_t maxBytes,
                         size_t maxEntries = std::numeric_limits<size_t>::max())
      : maxBytes(maxBytes), maxEntries(maxEntries) {}

  /// The value of `key`, or null.
  const Value *find(const Key &key) const {
    auto it = entries.find(key);
    return it == entries.end() ? nullptr : &it->second.value;
  }

  /// Adds `value` as `bytes` of the bound. False, and nothing changes, where
  /// `key` is already there.
  bool insert(const Key &key, Value value, size_t bytes) {
    auto [it, inserted] =
        entries.try_emplace(key, Entry{std::move(value), bytes});
    if (!inserted)
      return false;
    order.push_back(it);
    heldBytes += bytes;
    while (order.size() > 1 &&
           (order.size() > maxEntries || heldBytes > maxBytes)) {
      heldBytes -= order.front()->second.bytes;
      entries.erase(order.front());
      order.pop_front();
    }
    return true;
  }

  size_t size() const { return entries.size(); }
  size_t bytes() const { return heldBytes; }

private:
  struct Entry {
    Value value;
    size_t bytes;
  };
  using Entries = std::map<Key, Entry>;

  size_t maxBytes, maxEntries;
  size_t heldBytes = 0;
  Entries entries;
  /// Every entry, the oldest first (map iterators stay valid on erase of
  /// other elements).
  std::deque<typename Entries::iterator> order;
};

} // namespace fly

#endif // FLY_LIB_BACKEND_NEWESTENTRIES_H

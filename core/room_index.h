// The open CP groups of one size, indexed by the tokens each rank has room
// for, so the cost-aware planner (core/cost_aware_plan.h) finds the
// tightest group a sample fits in without a search tree.
//
// Rooms in [0, budget] fall into kRoomBuckets equal buckets, each a list
// threaded through per-group links; a bitmap of the non-empty ones finds the
// next from a bucket up in a few word scans. A
// group in a bucket above the one of `need` has room >= need for certain;
// those in need's own bucket may or may not, so the caller checks each
// candidate exactly. Candidates come in bucket order, within a bucket the
// most recently inserted first: deterministic, and close to best fit.

#ifndef DCPSCHED_CORE_ROOM_INDEX_H_
#define DCPSCHED_CORE_ROOM_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dcpsched {

class RoomIndex {
 public:
  static constexpr std::size_t kRoomBuckets = 4096;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  explicit RoomIndex(double budget);

  bool empty() const { return size_ == 0; }

  // Adds group `g` (not in the index) with `room` in [0, budget].
  void Insert(std::size_t g, double room);
  // Removes group `g` if it is in the index.
  void Erase(std::size_t g);

  // Calls visit(g) for the groups that may have room >= need, tightest
  // bucket first, until visit returns true or `limit` groups were visited;
  // returns the group visit accepted, or kNone.
  template <typename Visit>
  std::size_t Find(double need, std::size_t limit, Visit visit) const {
    std::size_t visited = 0;
    for (std::size_t b = NextBucket(Bucket(need)); b < kRoomBuckets; b = NextBucket(b + 1)) {
      for (std::size_t g = head_[b]; g != kNone; g = next_[g]) {
        if (visit(g)) return g;
        if (++visited == limit) return kNone;
      }
    }
    return kNone;
  }

 private:
  std::size_t Bucket(double room) const;
  // The first non-empty bucket at or after b, or kRoomBuckets.
  std::size_t NextBucket(std::size_t b) const;

  double scale_;
  std::size_t size_ = 0;
  std::vector<std::size_t> head_;        // per bucket: its newest group
  std::vector<std::uint64_t> occupied_;  // bit b: bucket b is not empty
  // Per group: its bucket (kNone when absent) and its neighbours there.
  std::vector<std::size_t> bucket_of_;
  std::vector<std::size_t> next_;
  std::vector<std::size_t> previous_;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_ROOM_INDEX_H_

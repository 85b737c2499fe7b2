// One microbatch while a dynamic-CP step builds it, held as its CP groups.
//
// The legacy scheduler places samples on CP groups that are contiguous runs
// of ranks: a new group always takes the lowest free ranks, and widening a
// group shifts the later ones right. Every
// member of a group holds the same samples and carries the same work, so the
// layout stores each group once, and hands the microbatch out as its groups
// (compact_schedule.h). Ranks in no group are the free tail
// [covered_ranks(), total_gpus()).

#ifndef DCPSCHED_CORE_GROUP_LAYOUT_H_
#define DCPSCHED_CORE_GROUP_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// A CP group: `size` ranks starting at `first_rank`, each holding `lens` and
// `ids` (placement order), each carrying `work` attention work and
// `packed_tokens` tokens.
struct CpGroup {
  std::int64_t first_rank = 0;
  std::int64_t size = 0;
  std::vector<std::int64_t> lens;
  std::vector<SampleId> ids;
  double work = 0.0;
  double packed_tokens = 0.0;
};

class GroupLayout {
 public:
  explicit GroupLayout(std::int64_t total_gpus);

  std::int64_t total_gpus() const { return total_gpus_; }
  // Ranks that belong to some group: [0, covered_ranks()).
  std::int64_t covered_ranks() const { return covered_ranks_; }
  std::int64_t free_ranks() const { return total_gpus_ - covered_ranks_; }
  // Groups in creation order, which is also rank order.
  const std::vector<CpGroup>& groups() const { return groups_; }

  // Opens a group on the `cp_size` lowest free ranks holding `sample`, and
  // returns its index. Requires free_ranks() >= cp_size.
  std::size_t OpenGroup(const Sample& sample, std::int64_t cp_size);

  // Appends `sample` to every member of `group`: work grows by
  // Work(len, size), packed tokens by len / size.
  void AddToGroup(std::size_t group, const Sample& sample);

  // Widens `group` to `new_size` ranks that each carry `work`, moving every
  // later group right by the growth. Requires the growth to fit in the free
  // tail (new_size - size <= free_ranks()).
  void WidenGroup(std::size_t group, std::int64_t new_size, double work);

  // The microbatch as its groups' ids, in rank order: they tile
  // [0, covered_ranks()).
  CompactMicrobatch ToCompactMicrobatch() const;

 private:
  std::int64_t total_gpus_;
  std::int64_t covered_ranks_ = 0;
  std::vector<CpGroup> groups_;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_GROUP_LAYOUT_H_

// The CP groups of one size in a microbatch being built, indexed for the
// packing-aware step's candidate search.
//
// A sample may join a group only while the group's token sum stays within
// its budget, and among those the step wants the group that keeps the
// busiest rank least loaded, the oldest on ties. Scanning every group for
// every sample costs O(G) per sample; this index answers both questions in
// logarithmic time on typical workloads by keeping, over the groups in
// creation order, the least token sum and the least work of every range.

#ifndef DCPSCHED_CORE_GROUP_FIT_INDEX_H_
#define DCPSCHED_CORE_GROUP_FIT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace dcpsched {

class GroupFitIndex {
 public:
  // Room for `capacity` groups.
  explicit GroupFitIndex(std::size_t capacity);

  // Groups in the index, numbered 0.. in the order they were appended.
  std::size_t size() const { return size_; }

  // Forgets every group (in time linear in size()).
  void Clear();

  // Appends a group with `tokens` and `work`; returns its number.
  // Requires size() < capacity.
  std::size_t Append(std::int64_t tokens, double work);

  // Sets the tokens and work of group `group`.
  void Update(std::size_t group, std::int64_t tokens, double work);

  // Group `group` takes no more samples (it holds max_num_seqs): no query
  // finds it again, and MinTokens ignores it, until Clear. It keeps its number.
  void Close(std::size_t group);

  // The least token sum of any group (max int64 if none).
  std::int64_t MinTokens() const { return min_tokens_[1]; }

  // The least work of a group with at most `max_tokens` tokens.
  std::optional<double> LeastWork(std::int64_t max_tokens) const;

  // The oldest group with at most `max_tokens` tokens whose work satisfies
  // `work_ok`, which must hold for every work below one it holds for.
  template <typename WorkPredicate>
  std::optional<std::size_t> Oldest(std::int64_t max_tokens,
                                    WorkPredicate work_ok) const;

 private:
  static constexpr std::int64_t kNoTokens = std::numeric_limits<std::int64_t>::max();
  static constexpr double kNoWork = std::numeric_limits<double>::infinity();

  void SetLeaf(std::size_t group, std::int64_t tokens, double work);
  void LeastWorkIn(std::size_t node, std::int64_t max_tokens, double& best) const;
  template <typename WorkPredicate>
  std::optional<std::size_t> OldestIn(std::size_t node, std::int64_t max_tokens,
                                      const WorkPredicate& work_ok) const;

  // A complete binary tree in heap order (root 1, leaves from leaves_).
  std::size_t leaves_ = 1;
  std::size_t size_ = 0;
  std::vector<std::int64_t> min_tokens_;
  std::vector<double> min_work_;
};

template <typename WorkPredicate>
std::optional<std::size_t> GroupFitIndex::Oldest(std::int64_t max_tokens,
                                                 WorkPredicate work_ok) const {
  return OldestIn(1, max_tokens, work_ok);
}

template <typename WorkPredicate>
std::optional<std::size_t> GroupFitIndex::OldestIn(
    std::size_t node, std::int64_t max_tokens, const WorkPredicate& work_ok) const {
  // A range holds no fitting group if even its least token sum or its least
  // work fails; the leftmost fitting leaf is the oldest group.
  if (min_tokens_[node] > max_tokens || !work_ok(min_work_[node])) {
    return std::nullopt;
  }
  if (node >= leaves_) return node - leaves_;
  if (std::optional<std::size_t> left = OldestIn(2 * node, max_tokens, work_ok)) {
    return left;
  }
  return OldestIn(2 * node + 1, max_tokens, work_ok);
}

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_GROUP_FIT_INDEX_H_

#include "core/group_fit_index.h"

#include <algorithm>

namespace dcpsched {

GroupFitIndex::GroupFitIndex(std::size_t capacity) {
  while (leaves_ < capacity) leaves_ *= 2;
  min_tokens_.assign(2 * leaves_, kNoTokens);
  min_work_.assign(2 * leaves_, kNoWork);
}

void GroupFitIndex::Clear() {
  for (std::size_t group = 0; group < size_; ++group) {
    SetLeaf(group, kNoTokens, kNoWork);
  }
  size_ = 0;
}

std::size_t GroupFitIndex::Append(std::int64_t tokens, double work) {
  const std::size_t group = size_++;
  SetLeaf(group, tokens, work);
  return group;
}

void GroupFitIndex::Update(std::size_t group, std::int64_t tokens, double work) {
  SetLeaf(group, tokens, work);
}

void GroupFitIndex::Close(std::size_t group) {
  SetLeaf(group, kNoTokens, kNoWork);
}

void GroupFitIndex::SetLeaf(std::size_t group, std::int64_t tokens, double work) {
  std::size_t node = leaves_ + group;
  min_tokens_[node] = tokens;
  min_work_[node] = work;
  for (node /= 2; node >= 1; node /= 2) {
    min_tokens_[node] = std::min(min_tokens_[2 * node], min_tokens_[2 * node + 1]);
    min_work_[node] = std::min(min_work_[2 * node], min_work_[2 * node + 1]);
  }
}

std::optional<double> GroupFitIndex::LeastWork(std::int64_t max_tokens) const {
  double best = kNoWork;
  LeastWorkIn(1, max_tokens, best);
  if (best == kNoWork) return std::nullopt;
  return best;
}

void GroupFitIndex::LeastWorkIn(std::size_t node, std::int64_t max_tokens,
                                double& best) const {
  // Branch and bound: a range matters only if some group in it fits and its
  // least work could beat the best found so far.
  if (min_tokens_[node] > max_tokens || min_work_[node] >= best) return;
  if (node >= leaves_) {
    best = min_work_[node];
    return;
  }
  const std::size_t left = 2 * node;
  const std::size_t right = 2 * node + 1;
  const bool right_first = min_work_[right] < min_work_[left];
  LeastWorkIn(right_first ? right : left, max_tokens, best);
  LeastWorkIn(right_first ? left : right, max_tokens, best);
}

}  // namespace dcpsched

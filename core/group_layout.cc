#include "core/group_layout.h"

#include <utility>

#include "core/cost_model.h"

namespace dcpsched {

GroupLayout::GroupLayout(std::int64_t total_gpus) : total_gpus_(total_gpus) {}

std::size_t GroupLayout::OpenGroup(const Sample& sample, std::int64_t cp_size) {
  CpGroup group;
  group.first_rank = covered_ranks_;
  group.size = cp_size;
  covered_ranks_ += cp_size;
  groups_.push_back(std::move(group));
  const std::size_t index = groups_.size() - 1;
  AddToGroup(index, sample);
  return index;
}

void GroupLayout::AddToGroup(std::size_t group, const Sample& sample) {
  CpGroup& target = groups_[group];
  target.lens.push_back(sample.len);
  target.ids.push_back(sample.id);
  target.work += Work(sample.len, target.size);
  target.packed_tokens += TokensPerRank(sample.len, target.size);
}

void GroupLayout::WidenGroup(std::size_t group, std::int64_t new_size,
                             double work) {
  const std::int64_t growth = new_size - groups_[group].size;
  groups_[group].size = new_size;
  groups_[group].work = work;
  for (std::size_t later = group + 1; later < groups_.size(); ++later) {
    groups_[later].first_rank += growth;
  }
  covered_ranks_ += growth;
}

CompactMicrobatch GroupLayout::ToCompactMicrobatch() const {
  CompactMicrobatch microbatch;
  microbatch.groups.reserve(groups_.size());
  for (const CpGroup& group : groups_) {
    microbatch.groups.push_back(CpGroupIds{group.first_rank, group.size, group.ids});
  }
  return microbatch;
}

}  // namespace dcpsched

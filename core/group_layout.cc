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

PackedMicrobatch GroupLayout::ToPackedMicrobatch(
    std::vector<Sample> leftovers) const {
  const auto ranks = static_cast<std::size_t>(total_gpus_);
  PackedMicrobatch result;
  result.rank_lens.resize(ranks);
  result.microbatch.rank_ids.resize(ranks);
  result.rank_work.assign(ranks, 0.0);
  for (const CpGroup& group : groups_) {
    for (std::int64_t offset = 0; offset < group.size; ++offset) {
      const auto rank = static_cast<std::size_t>(group.first_rank + offset);
      result.rank_lens[rank] = group.lens;
      result.microbatch.rank_ids[rank] = group.ids;
      result.rank_work[rank] = group.work;
    }
  }
  result.leftovers = std::move(leftovers);
  return result;
}

}  // namespace dcpsched

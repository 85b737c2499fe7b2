#include "core/group_layout.h"

#include <cstdint>
#include <vector>

#include "core/cost_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched {
namespace {

using ::testing::ElementsAre;
using RankIds = std::vector<std::vector<SampleId>>;

TEST(GroupLayoutTest, StartsWithEveryRankFree) {
  const GroupLayout layout(6);
  EXPECT_EQ(layout.total_gpus(), 6);
  EXPECT_EQ(layout.covered_ranks(), 0);
  EXPECT_EQ(layout.free_ranks(), 6);
  EXPECT_TRUE(layout.groups().empty());
}

TEST(GroupLayoutTest, NewGroupsTakeTheLowestFreeRanks) {
  GroupLayout layout(8);
  EXPECT_EQ(layout.OpenGroup({10, 100}, 2), 0u);
  EXPECT_EQ(layout.OpenGroup({11, 50}, 4), 1u);
  EXPECT_EQ(layout.covered_ranks(), 6);
  EXPECT_EQ(layout.free_ranks(), 2);
  EXPECT_EQ(layout.groups()[1].first_rank, 2);
  const PackedMicrobatch packed = layout.ToPackedMicrobatch({});
  EXPECT_EQ(packed.microbatch.rank_ids,
            (RankIds{{10}, {10}, {11}, {11}, {11}, {11}, {}, {}}));
  EXPECT_EQ(packed.rank_lens, (std::vector<std::vector<std::int64_t>>{
                                  {100}, {100}, {50}, {50}, {50}, {50}, {}, {}}));
  EXPECT_THAT(packed.rank_work, ElementsAre(Work(100, 2), Work(100, 2), Work(50, 4),
                                            Work(50, 4), Work(50, 4), Work(50, 4), 0.0, 0.0));
}

TEST(GroupLayoutTest, AddAccumulatesWorkAndTokensInPlacementOrder) {
  GroupLayout layout(2);
  layout.OpenGroup({1, 30}, 2);
  layout.AddToGroup(0, {2, 20});
  const CpGroup& group = layout.groups()[0];
  EXPECT_THAT(group.ids, ElementsAre(1, 2));
  EXPECT_THAT(group.lens, ElementsAre(30, 20));
  EXPECT_EQ(group.work, Work(30, 2) + Work(20, 2));
  EXPECT_EQ(group.packed_tokens, 15.0 + 10.0);
}

TEST(GroupLayoutTest, WideningShiftsLaterGroupsRight) {
  GroupLayout layout(6);
  layout.OpenGroup({1, 10}, 1);
  layout.OpenGroup({2, 10}, 2);
  layout.WidenGroup(0, 2, 42.0);
  EXPECT_EQ(layout.groups()[1].first_rank, 2);
  EXPECT_EQ(layout.covered_ranks(), 4);
  const PackedMicrobatch packed = layout.ToPackedMicrobatch({{3, 5}});
  EXPECT_EQ(packed.microbatch.rank_ids, (RankIds{{1}, {1}, {2}, {2}, {}, {}}));
  EXPECT_THAT(packed.rank_work, ElementsAre(42.0, 42.0, Work(10, 2), Work(10, 2), 0.0, 0.0));
  EXPECT_THAT(packed.leftovers, ElementsAre(Sample{3, 5}));
}

}  // namespace
}  // namespace dcpsched

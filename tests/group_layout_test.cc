#include "core/group_layout.h"

#include <cstdint>
#include <vector>

#include "core/cost_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::group_layout_test {
namespace {

using ::testing::ElementsAre;

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
  EXPECT_EQ(layout.ToCompactMicrobatch(),
            (CompactMicrobatch{{{0, 2, {10}}, {2, 4, {11}}}}));
  EXPECT_THAT(layout.groups()[0].lens, ElementsAre(100));
  EXPECT_THAT(layout.groups()[1].lens, ElementsAre(50));
  EXPECT_EQ(layout.groups()[0].work, Work(100, 2));
  EXPECT_EQ(layout.groups()[1].work, Work(50, 4));
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
  EXPECT_EQ(layout.ToCompactMicrobatch(),
            (CompactMicrobatch{{{0, 2, {1}}, {2, 2, {2}}}}));
  EXPECT_EQ(layout.groups()[0].work, 42.0);
  EXPECT_EQ(layout.groups()[1].work, Work(10, 2));
}

}  // namespace
}  // namespace dcpsched::group_layout_test

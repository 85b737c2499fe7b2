#include "core/group_fit_index.h"

#include <cstddef>
#include <cstdint>
#include <optional>

#include "gtest/gtest.h"

namespace dcpsched::group_fit_index_test {
namespace {

std::optional<std::size_t> OldestWithWorkAtMost(const GroupFitIndex& index,
                                                std::int64_t max_tokens, double max_work) {
  return index.Oldest(max_tokens, [max_work](double work) { return work <= max_work; });
}

TEST(GroupFitIndexTest, EmptyIndexHasNoGroup) {
  const GroupFitIndex index(4);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.MinTokens(), std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(index.LeastWork(1000).has_value());
  EXPECT_FALSE(OldestWithWorkAtMost(index, 1000, 1e300).has_value());
}

TEST(GroupFitIndexTest, OldestNeedsBothTokensAndWorkInOneGroup) {
  GroupFitIndex index(5);
  EXPECT_EQ(index.Append(100, 9.0), 0u);  // few tokens, much work
  EXPECT_EQ(index.Append(900, 1.0), 1u);  // many tokens, little work
  EXPECT_EQ(index.Append(500, 5.0), 2u);
  EXPECT_EQ(index.Append(400, 5.0), 3u);
  EXPECT_EQ(index.MinTokens(), 100);
  EXPECT_EQ(OldestWithWorkAtMost(index, 1000, 10.0), 0u);
  EXPECT_EQ(OldestWithWorkAtMost(index, 600, 6.0), 2u);
  EXPECT_EQ(OldestWithWorkAtMost(index, 450, 6.0), 3u);
  EXPECT_EQ(OldestWithWorkAtMost(index, 300, 6.0), std::nullopt);
  EXPECT_EQ(OldestWithWorkAtMost(index, 1000, 0.5), std::nullopt);
}

TEST(GroupFitIndexTest, LeastWorkAmongGroupsWithRoom) {
  GroupFitIndex index(4);
  index.Append(100, 9.0);
  index.Append(900, 1.0);
  index.Append(500, 5.0);
  EXPECT_EQ(index.LeastWork(1000), 1.0);
  EXPECT_EQ(index.LeastWork(899), 5.0);
  EXPECT_EQ(index.LeastWork(499), 9.0);
  EXPECT_EQ(index.LeastWork(99), std::nullopt);
}

TEST(GroupFitIndexTest, UpdateAndClear) {
  GroupFitIndex index(3);
  index.Append(100, 1.0);
  index.Append(200, 2.0);
  index.Update(0, 300, 3.0);
  EXPECT_EQ(index.MinTokens(), 200);
  EXPECT_EQ(index.LeastWork(1000), 2.0);
  EXPECT_EQ(OldestWithWorkAtMost(index, 1000, 10.0), 0u);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.LeastWork(1000), std::nullopt);
  EXPECT_EQ(index.Append(50, 0.5), 0u);
  EXPECT_EQ(index.MinTokens(), 50);
}

TEST(GroupFitIndexTest, ClosedGroupIsFoundByNoQuery) {
  GroupFitIndex index(4);
  index.Append(100, 1.0);
  index.Append(200, 2.0);
  index.Append(300, 3.0);
  index.Close(0);
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.MinTokens(), 200);
  EXPECT_EQ(index.LeastWork(1000), 2.0);
  EXPECT_EQ(OldestWithWorkAtMost(index, 1000, 10.0), 1u);
  EXPECT_EQ(OldestWithWorkAtMost(index, 150, 10.0), std::nullopt);
  index.Close(1);
  index.Close(2);
  EXPECT_EQ(index.MinTokens(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(index.LeastWork(1000), std::nullopt);
  EXPECT_EQ(index.Append(50, 0.5), 3u);
  EXPECT_EQ(OldestWithWorkAtMost(index, 1000, 10.0), 3u);
}

// Cost is behaviour too: with every group tied on work, LeastWork must prune
// a subtree whose least work only equals the best so far, so each query
// visits O(log G) nodes. The mutant group_fit_index-f4f4db4d (`>=` -> `>` in
// the bound) searches every tied subtree, O(G) per query: these 50,000
// queries over 2^17 groups take milliseconds, and tens of seconds under it,
// past the mutation runner's timeout (mutation/equivalent.txt, time-only
// mutants).
TEST(GroupFitIndexTest, LeastWorkOnTiedGroupsPrunesEqualSubtrees) {
  constexpr std::size_t kGroups = std::size_t{1} << 17;
  GroupFitIndex index(kGroups);
  for (std::size_t g = 0; g < kGroups; ++g) index.Append(10, 4.0);
  double sum = 0;
  for (int query = 0; query < 50000; ++query) {
    const std::optional<double> least = index.LeastWork(10 + query % 7);
    ASSERT_TRUE(least.has_value());
    sum += *least;
  }
  EXPECT_EQ(sum, 4.0 * 50000);
  EXPECT_EQ(index.LeastWork(9), std::nullopt);
}

}  // namespace
}  // namespace dcpsched::group_fit_index_test

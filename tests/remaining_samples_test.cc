#include "core/remaining_samples.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched {
namespace {

using ::testing::ElementsAre;

std::vector<SampleId> Ids(const std::vector<Sample>& samples) {
  std::vector<SampleId> ids;
  for (const Sample& sample : samples) ids.push_back(sample.id);
  return ids;
}

TEST(RemainingSamplesTest, SortsLongestFirstKeepingEqualLengthsInOrder) {
  RemainingSamples remaining({{1, 10}, {2, 30}, {3, 10}, {4, 20}, {5, 30}});
  EXPECT_THAT(Ids(remaining.ToVector()), ElementsAre(2, 5, 4, 1, 3));
  EXPECT_EQ(remaining.remaining(), 5u);
}

TEST(RemainingSamplesTest, RemovedPositionsAreSkipped) {
  RemainingSamples remaining({{1, 50}, {2, 40}, {3, 30}, {4, 20}, {5, 10}});
  remaining.Remove(1);
  remaining.Remove(2);
  EXPECT_EQ(remaining.FirstAtOrAfter(0), 0u);
  EXPECT_EQ(remaining.FirstAtOrAfter(1), 3u);
  remaining.Remove(0);
  EXPECT_EQ(remaining.FirstAtOrAfter(0), 3u);
  remaining.Remove(4);
  EXPECT_EQ(remaining.FirstAtOrAfter(4), remaining.size());
  EXPECT_THAT(Ids(remaining.ToVector()), ElementsAre(4));
  EXPECT_EQ(remaining.remaining(), 1u);
  EXPECT_FALSE(remaining.empty());
  remaining.Remove(3);
  EXPECT_TRUE(remaining.empty());
  EXPECT_EQ(remaining.FirstAtOrAfter(0), remaining.size());
}

TEST(RemainingSamplesTest, FirstNoLongerThanSkipsLongerAndRemovedSamples) {
  RemainingSamples remaining({{1, 50}, {2, 40}, {3, 40}, {4, 20}, {5, 10}});
  EXPECT_EQ(remaining.FirstNoLongerThan(45, 0), 1u);
  EXPECT_EQ(remaining.FirstNoLongerThan(40, 2), 2u);
  EXPECT_EQ(remaining.FirstNoLongerThan(39, 0), 3u);
  EXPECT_EQ(remaining.FirstNoLongerThan(9, 0), remaining.size());
  EXPECT_EQ(remaining.FirstNoLongerThan(100, 4), 4u);
  remaining.Remove(1);
  remaining.Remove(2);
  EXPECT_EQ(remaining.FirstNoLongerThan(45, 0), 3u);
  EXPECT_EQ(remaining.FirstNoLongerThan(45, remaining.size()), remaining.size());
}

TEST(RemainingSamplesTest, FirstFittingFindsTheStartOfTheFittingSuffix) {
  std::vector<Sample> samples;
  for (SampleId id = 0; id < 1000; ++id) samples.push_back({id, 1000 - id});
  RemainingSamples remaining(samples);
  for (std::int64_t limit : {1000, 999, 700, 513, 2, 1}) {
    EXPECT_EQ(remaining.FirstFitting([limit](std::int64_t len) { return len <= limit; }, 0),
              static_cast<std::size_t>(1000 - limit))
        << limit;
  }
  EXPECT_EQ(remaining.FirstFitting([](std::int64_t) { return false; }, 0), remaining.size());
  EXPECT_EQ(remaining.FirstFitting([](std::int64_t) { return true; }, 17), 17u);
}

TEST(RemainingSamplesTest, EmptyBatch) {
  RemainingSamples remaining({});
  EXPECT_TRUE(remaining.empty());
  EXPECT_EQ(remaining.FirstAtOrAfter(0), 0u);
  EXPECT_TRUE(remaining.ToVector().empty());
}

}  // namespace
}  // namespace dcpsched

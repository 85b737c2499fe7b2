#include "core/remaining_samples.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::remaining_samples_test {
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

// Cost is behaviour too: the lookups must stay near constant time on the
// pattern a step makes on one rank whose longest sample leaves room for one
// token: take the first remaining sample, then the first of length 1 after
// it, past every longer one left. 2^20 samples take well under a second.
// Following the skip links without path halving
// (remaining_samples-4c53f547) walks the whole placed prefix on every
// lookup, and a gallop whose step stays 1 (remaining_samples-6c8392b9,
// -7a1dde00) scans every longer sample left: both quadratic, minutes here,
// past the mutation runner's timeout (mutation/time_only.txt).
TEST(RemainingSamplesTest, LookupsStayFastPastManyPlacedAndLongerSamples) {
  constexpr std::size_t kPairs = std::size_t{1} << 19;
  std::vector<Sample> samples;
  for (std::size_t i = 0; i < 2 * kPairs; ++i) {
    samples.push_back({static_cast<SampleId>(i), i < kPairs ? 2 : 1});
  }
  RemainingSamples remaining(samples);
  for (std::size_t k = 0; k < kPairs; ++k) {
    const std::size_t first = remaining.FirstAtOrAfter(0);
    ASSERT_EQ(first, k);
    remaining.Remove(first);
    const std::size_t short_one = remaining.FirstNoLongerThan(1, first + 1);
    ASSERT_EQ(short_one, kPairs + k);
    remaining.Remove(short_one);
  }
  EXPECT_TRUE(remaining.empty());
  EXPECT_EQ(remaining.FirstAtOrAfter(0), remaining.size());
}

TEST(RemainingSamplesTest, EmptyBatch) {
  RemainingSamples remaining({});
  EXPECT_TRUE(remaining.empty());
  EXPECT_EQ(remaining.FirstAtOrAfter(0), 0u);
  EXPECT_TRUE(remaining.ToVector().empty());
}

}  // namespace
}  // namespace dcpsched::remaining_samples_test

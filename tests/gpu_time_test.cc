#include "core/gpu_time.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/types.h"
#include "core/validate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::gpu_time_test {
namespace {

using ::testing::HasSubstr;

// Attention exactly L^2 * 1e-9 s (causal) and 2 L^2 * 1e-9 s (full); the
// rest 1e-6 s per token from 1 token on (so a rank's non-attention part is
// proportional to its tokens).
CostProfile QuadraticProfile() {
  CostProfile profile;
  profile.name = "quadratic";
  profile.causal_attention = {{1, 1000}, {1e-9, 1e-3}};
  profile.full_attention = {{1, 1000}, {2e-9, 2e-3}};
  profile.non_attention = {{1}, {1e-6}};
  return profile;
}

double Causal(double len) { return len * len * 1e-9; }
double Full(double len) { return 2.0 * len * len * 1e-9; }

GpuTimeOptions Mslpr(std::int64_t max_seq_len_per_rank) {
  return GpuTimeOptions{.max_seq_len_per_rank = max_seq_len_per_rank};
}

TEST(SampleRankSecondsTest, OneRankRunsCausalAttention) {
  EXPECT_DOUBLE_EQ(SampleRankSeconds(QuadraticProfile(), 600, 1), Causal(600));
}

TEST(SampleRankSecondsTest, RingAttentionOnZigzagHalves) {
  // c = 2: halves of 600 / 4 = 150 tokens; 3 full blocks and 2 causal ones.
  EXPECT_DOUBLE_EQ(SampleRankSeconds(QuadraticProfile(), 600, 2),
                   3 * Full(150) + 2 * Causal(150));
  EXPECT_DOUBLE_EQ(SampleRankSeconds(QuadraticProfile(), 600, 4),
                   7 * Full(75) + 2 * Causal(75));
}

TEST(SampleRankSecondsTest, CommunicationWinsWhenSlower) {
  CostProfile profile = QuadraticProfile();
  profile.communication = CommunicationModel{.gpus_per_node = 2,
                                             .intra_node_gb_per_s = 1.0,
                                             .inter_node_gb_per_s = 0.5,
                                             .kv_bytes_per_token = 1000.0};
  // c = 2, intra-node: 3 * 1 * 300 tokens * 1000 B / 1e9 B/s = 9e-4 s.
  EXPECT_DOUBLE_EQ(SampleRankSeconds(profile, 600, 2), 9e-4);
  // c = 4, inter-node: 3 * 3 * 150 * 1000 / 0.5e9 = 2.7e-3 s.
  EXPECT_DOUBLE_EQ(SampleRankSeconds(profile, 600, 4), 2.7e-3);
  // One rank exchanges nothing.
  EXPECT_DOUBLE_EQ(SampleRankSeconds(profile, 600, 1), Causal(600));
  // Fast links: the attention is the slower part.
  profile.communication->intra_node_gb_per_s = 1e6;
  EXPECT_DOUBLE_EQ(SampleRankSeconds(profile, 600, 2),
                   3 * Full(150) + 2 * Causal(150));
}

// Microbatch 0: ranks 0-1 hold sample 1 (600 tokens), rank 2 samples 2 and
// 3, rank 3 nothing. Microbatch 1: sample 4 on all four ranks.
CompactSchedule TwoMicrobatches() {
  CompactSchedule schedule;
  schedule.microbatches.push_back(
      {{{0, 2, {1}}, {2, 1, {2, 3}}, {3, 1, {}}}});
  schedule.microbatches.push_back({{{0, 4, {4}}}});
  return schedule;
}

std::vector<Sample> FourSamples() {
  return {{1, 600}, {2, 100}, {3, 200}, {4, 800}};
}

TEST(MeasureScheduleTimeTest, AddsTokensAndAttentionPerRank) {
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      FourSamples(), TwoMicrobatches(), QuadraticProfile(), Mslpr(1000));
  ASSERT_TRUE(time.ok()) << time.status();
  ASSERT_EQ(time->microbatches.size(), 2u);
  const MicrobatchTime& first = time->microbatches[0];
  ASSERT_EQ(first.group_seconds.size(), 3u);
  EXPECT_DOUBLE_EQ(first.group_seconds[0],
                   300 * 1e-6 + 3 * Full(150) + 2 * Causal(150));
  EXPECT_DOUBLE_EQ(first.group_seconds[1], 300 * 1e-6 + Causal(100) + Causal(200));
  EXPECT_EQ(first.group_seconds[2], 0.0);  // an empty rank costs nothing
  EXPECT_DOUBLE_EQ(first.max_seconds, first.group_seconds[0]);
  const double second = 200 * 1e-6 + 7 * Full(100) + 2 * Causal(100);
  EXPECT_DOUBLE_EQ(time->microbatches[1].max_seconds, second);
  EXPECT_DOUBLE_EQ(time->step_seconds, first.group_seconds[0] + second);
  EXPECT_FALSE(time->communication_modelled);
}

TEST(MeasureScheduleTimeTest, BoundIsTheLeastTotalOverG) {
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      FourSamples(), TwoMicrobatches(), QuadraticProfile(), Mslpr(1000));
  ASSERT_TRUE(time.ok()) << time.status();
  // Tokens: 1700 at 1e-6 s. Attention of L^2 * 1e-9 costs the same total
  // on any c (c * ((2c-1) * 2 + 2) / 4c^2 = 1), so each sample's least is
  // causal(len).
  const double expected =
      (1700 * 1e-6 + Causal(600) + Causal(100) + Causal(200) + Causal(800)) / 4;
  EXPECT_DOUBLE_EQ(time->bound_seconds, expected);
  EXPECT_DOUBLE_EQ(time->gpu_efficiency, expected / time->step_seconds);
  EXPECT_LE(time->bound_seconds, time->step_seconds);
}

TEST(StepSecondsLowerBoundTest, RespectsTheFewestRanksASampleNeeds) {
  // A fixed cost per call makes splitting expensive, so one rank is the
  // cheapest; a sample longer than mslpr must take at least two.
  CostProfile profile = QuadraticProfile();
  profile.causal_attention = {{1000}, {1.0}};
  profile.full_attention = {{1000}, {1.0}};
  const std::vector<Sample> samples = {{1, 900}};
  EXPECT_DOUBLE_EQ(StepSecondsLowerBound(samples, 4, profile, Mslpr(1000)),
                   (900 * 1e-6 + 1.0) / 4);
  EXPECT_DOUBLE_EQ(StepSecondsLowerBound(samples, 4, profile, Mslpr(500)),
                   (900 * 1e-6 + 2 * (3 * 1.0 + 2 * 1.0)) / 4);
  EXPECT_EQ(StepSecondsLowerBound(samples, 0, profile, Mslpr(500)), 0.0);
}

TEST(StepSecondsLowerBoundTest, IncludesTheFixedCpSizeAndG) {
  // Per-rank attention falls as 1/c^3 here, so the largest allowed c wins.
  CostProfile profile = QuadraticProfile();
  profile.causal_attention = {{1, 1000}, {1e-9, 1.0}};  // L^3
  profile.full_attention = {{1, 1000}, {1e-9, 1.0}};
  const std::vector<Sample> samples = {{1, 960}};
  const auto least = [&](std::int64_t c) {
    return static_cast<double>(c) * SampleRankSeconds(profile, 960, c);
  };
  const double tokens = 960 * 1e-6;
  EXPECT_DOUBLE_EQ(StepSecondsLowerBound(samples, 6, profile, Mslpr(1000)),
                   (tokens + least(6)) / 6);
  EXPECT_DOUBLE_EQ(StepSecondsLowerBound(samples, 8, profile, Mslpr(1000)),
                   (tokens + least(8)) / 8);
  GpuTimeOptions fixed = Mslpr(1000);
  fixed.fixed_cp_size = 3;
  // On 2 ranks only 1 and 2 are allowed (3 > G).
  EXPECT_DOUBLE_EQ(StepSecondsLowerBound(samples, 2, profile, fixed),
                   (tokens + least(2)) / 2);
  EXPECT_LT(least(3), least(2));
  EXPECT_DOUBLE_EQ(StepSecondsLowerBound(samples, 3, profile, fixed),
                   (tokens + least(3)) / 3);
}

TEST(MeasureScheduleTimeTest, PerRankFormMeasuresTheSame) {
  const absl::StatusOr<Schedule> per_rank = ExpandSchedule(TwoMicrobatches());
  ASSERT_TRUE(per_rank.ok());
  const absl::StatusOr<ScheduleTime> compact = MeasureScheduleTime(
      FourSamples(), TwoMicrobatches(), QuadraticProfile(), Mslpr(1000));
  const absl::StatusOr<ScheduleTime> expanded = MeasureScheduleTime(
      FourSamples(), *per_rank, QuadraticProfile(), Mslpr(1000));
  ASSERT_TRUE(compact.ok() && expanded.ok());
  EXPECT_EQ(compact->step_seconds, expanded->step_seconds);
  EXPECT_EQ(compact->bound_seconds, expanded->bound_seconds);
}

TEST(MeasureScheduleTimeTest, NamesAnUnknownId) {
  CompactSchedule schedule = TwoMicrobatches();
  schedule.microbatches[1].groups[0].ids = {9};
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      FourSamples(), schedule, QuadraticProfile(), Mslpr(1000));
  EXPECT_EQ(time.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(time.status().message(),
              HasSubstr("microbatch 1 ranks 0-3 hold sample id 9"));
}

TEST(MeasureScheduleTimeTest, RefusesMicrobatchesOfDifferentWidths) {
  CompactSchedule schedule = TwoMicrobatches();
  schedule.microbatches[1].groups[0].size = 2;
  EXPECT_THAT(MeasureScheduleTime(FourSamples(), schedule, QuadraticProfile(),
                                  Mslpr(1000))
                  .status()
                  .message(),
              HasSubstr("microbatch 1 has 2 ranks but microbatch 0 has 4"));
}

TEST(MeasureScheduleTimeTest, RefusesAMalformedOrEmptyMicrobatch) {
  // A group of no ranks: the compact form's own error.
  CompactSchedule schedule = TwoMicrobatches();
  schedule.microbatches[1].groups[0].size = 0;
  const absl::StatusOr<std::int64_t> width = MicrobatchWidth(schedule.microbatches[1], 1);
  ASSERT_FALSE(width.ok());
  EXPECT_EQ(MeasureScheduleTime(FourSamples(), schedule, QuadraticProfile(), Mslpr(1000))
                .status(),
            width.status());
  EXPECT_EQ(MeasureScheduleTimeWithoutBound(FourSamples(), schedule, QuadraticProfile()).status(),
            width.status());
  // A microbatch of no groups has no ranks, first or later.
  for (const std::size_t empty : {0, 1}) {
    schedule = TwoMicrobatches();
    schedule.microbatches[empty].groups.clear();
    EXPECT_THAT(
        MeasureScheduleTime(FourSamples(), schedule, QuadraticProfile(), Mslpr(1000))
            .status()
            .message(),
        HasSubstr(absl::StrCat("microbatch ", empty, " has 0 ranks but microbatch 0 has ",
                               empty == 0 ? 0 : 4,
                               "; every microbatch must have the same G >= 1 ranks")));
  }
}

TEST(MeasureScheduleTimeTest, RefusesLengthsOutsideTheLimits) {
  for (const std::int64_t len : {std::int64_t{0}, std::int64_t{-3}, kMaxSampleLen + 1}) {
    std::vector<Sample> samples = FourSamples();
    samples[2].len = len;
    const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
        samples, TwoMicrobatches(), QuadraticProfile(), Mslpr(1000));
    EXPECT_EQ(time.status().code(), absl::StatusCode::kInvalidArgument) << len;
    EXPECT_EQ(time.status().message(),
              absl::StrCat("sample 3 has length ", len,
                           "; lengths must be between 1 and ", kMaxSampleLen));
  }
  // The limits themselves are lengths.
  std::vector<Sample> samples = FourSamples();
  samples[2].len = 1;
  EXPECT_TRUE(MeasureScheduleTime(samples, TwoMicrobatches(), QuadraticProfile(), Mslpr(1000))
                  .ok());
  samples[2].len = kMaxSampleLen;
  EXPECT_TRUE(
      MeasureScheduleTimeWithoutBound(samples, TwoMicrobatches(), QuadraticProfile()).ok());
}

TEST(MeasureScheduleTimeTest, RefusesDuplicateIdsAndAnEmptySchedule) {
  std::vector<Sample> samples = FourSamples();
  samples.push_back({1, 5});
  EXPECT_THAT(MeasureScheduleTime(samples, TwoMicrobatches(), QuadraticProfile(),
                                  Mslpr(1000))
                  .status()
                  .message(),
              HasSubstr("sample id 1 appears twice"));
  EXPECT_THAT(MeasureScheduleTime(FourSamples(), CompactSchedule{},
                                  QuadraticProfile(), Mslpr(1000))
                  .status()
                  .message(),
              HasSubstr("no microbatches"));
  const absl::StatusOr<ScheduleTime> nothing = MeasureScheduleTime(
      {}, CompactSchedule{}, QuadraticProfile(), Mslpr(1000));
  ASSERT_TRUE(nothing.ok());
  EXPECT_EQ(nothing->step_seconds, 0.0);
  EXPECT_EQ(nothing->gpu_efficiency, 0.0);
}

}  // namespace
}  // namespace dcpsched::gpu_time_test

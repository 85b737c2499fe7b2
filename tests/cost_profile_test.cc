#include "core/cost_profile.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::cost_profile_test {
namespace {

using ::testing::HasSubstr;

// Attention doubling per point (L^1 between 100 and 200, L^2 up to 400),
// the rest 1 ms fixed up to 100 tokens, then 10 us per token.
CostProfile SmallProfile() {
  CostProfile profile;
  profile.name = "small";
  profile.causal_attention = {{100, 200, 400}, {1.0, 2.0, 8.0}};
  profile.full_attention = {{100, 400}, {2.0, 32.0}};
  profile.non_attention = {{100, 1000}, {1e-3, 1e-2}};
  return profile;
}

TEST(CurveSecondsTest, MeasuredPointsAreExact) {
  const MeasuredCurve curve{{100, 200, 400}, {0.1, 0.3, 0.7}};
  EXPECT_EQ(CurveSeconds(curve, 100.0, 2), 0.1);
  EXPECT_EQ(CurveSeconds(curve, 200.0, 2), 0.3);
  EXPECT_EQ(CurveSeconds(curve, 400.0, 2), 0.7);
}

TEST(CurveSecondsTest, InterpolatesLogLogBetweenPoints) {
  const CostProfile profile = SmallProfile();
  // Slope 1 between 100 and 200, slope 2 between 200 and 400.
  EXPECT_DOUBLE_EQ(CausalAttentionSeconds(profile, 150.0), 1.5);
  EXPECT_DOUBLE_EQ(CausalAttentionSeconds(profile, 300.0), 2.0 * 1.5 * 1.5);
  // Slope 2 between 100 and 400: 2 * (200/100)^2.
  EXPECT_DOUBLE_EQ(FullAttentionSeconds(profile, 200.0), 8.0);
  // Slope 1 from 100 to 1000 tokens: proportional, 10 us per token.
  EXPECT_DOUBLE_EQ(NonAttentionSeconds(profile, 550.0), 5.5e-3);
  EXPECT_DOUBLE_EQ(NonAttentionSeconds(profile, std::sqrt(1e5)), 1e-3 * std::sqrt(10.0));
}

TEST(CurveSecondsTest, BelowTheSmallestPointTakesItsTime) {
  const CostProfile profile = SmallProfile();
  EXPECT_EQ(CausalAttentionSeconds(profile, 1.0), 1.0);
  EXPECT_EQ(CausalAttentionSeconds(profile, 99.5), 1.0);
  EXPECT_EQ(NonAttentionSeconds(profile, 0.25), 1e-3);
}

TEST(CurveSecondsTest, BeyondTheLargestPointAttentionGrowsAsLSquaredTheRestAsT) {
  const CostProfile profile = SmallProfile();
  EXPECT_DOUBLE_EQ(CausalAttentionSeconds(profile, 800.0), 32.0);
  EXPECT_DOUBLE_EQ(FullAttentionSeconds(profile, 1200.0), 32.0 * 9.0);
  EXPECT_DOUBLE_EQ(NonAttentionSeconds(profile, 3000.0), 3e-2);
}

TEST(CurveSecondsTest, NothingCostsNothing) {
  const CostProfile profile = SmallProfile();
  EXPECT_EQ(NonAttentionSeconds(profile, 0.0), 0.0);
  EXPECT_EQ(CurveSeconds(profile.causal_attention, -1.0, 2), 0.0);
}

TEST(CurveSecondsTest, OnePointCurveIsFlatBelowAndGrowsAbove) {
  const MeasuredCurve curve{{64}, {2.0}};
  EXPECT_EQ(CurveSeconds(curve, 10.0, 2), 2.0);
  EXPECT_EQ(CurveSeconds(curve, 64.0, 2), 2.0);
  EXPECT_DOUBLE_EQ(CurveSeconds(curve, 128.0, 2), 8.0);
  EXPECT_DOUBLE_EQ(CurveSeconds(curve, 128.0, 1), 4.0);
}

TEST(MinNonAttentionSecondsPerTokenTest, IsTheLeastRatioOverThePoints) {
  CostProfile profile = SmallProfile();
  EXPECT_DOUBLE_EQ(MinNonAttentionSecondsPerToken(profile), 1e-5);
  profile.non_attention = {{100, 200, 400}, {1.0, 1.0, 3.0}};
  EXPECT_DOUBLE_EQ(MinNonAttentionSecondsPerToken(profile), 1.0 / 200.0);
  // It bounds the curve from below everywhere, between points too.
  for (double tokens = 1.0; tokens < 2000.0; tokens *= 1.37) {
    EXPECT_GE(NonAttentionSeconds(profile, tokens),
              tokens * MinNonAttentionSecondsPerToken(profile) * (1 - 1e-12))
        << tokens;
  }
}

TEST(ValidateCostProfileTest, AcceptsAValidProfile) {
  EXPECT_TRUE(ValidateCostProfile(SmallProfile()).ok());
}

TEST(ValidateCostProfileTest, NamesANegativeTime) {
  CostProfile profile = SmallProfile();
  profile.causal_attention = {{1, 2, 3, 4}, {1.0, 1.0, 1.0, -1.0}};
  const absl::Status status = ValidateCostProfile(profile);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "cost profile: attention.causal.seconds[3] is -1; every time must "
            "be a finite number > 0");
}

TEST(ValidateCostProfileTest, NamesZeroNanAndInfiniteTimes) {
  for (const double bad : {0.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    CostProfile profile = SmallProfile();
    profile.non_attention.seconds[1] = bad;
    EXPECT_THAT(ValidateCostProfile(profile).message(),
                HasSubstr("non_attention.seconds[1] is"))
        << bad;
  }
}

TEST(ValidateCostProfileTest, NamesSizesThatDoNotIncrease) {
  CostProfile profile = SmallProfile();
  profile.full_attention.sizes = {100, 100};
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("attention.full.lengths[1] is 100; sizes must be "
                        "positive integers, each larger than the one before"));
  profile = SmallProfile();
  profile.non_attention.sizes = {0, 1000};
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("non_attention.tokens[0] is 0"));
}

TEST(ValidateCostProfileTest, NamesEmptyAndMismatchedTables) {
  CostProfile profile = SmallProfile();
  profile.causal_attention = {};
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("attention.causal.lengths is empty"));
  profile = SmallProfile();
  profile.non_attention.seconds.pop_back();
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("non_attention.seconds has 1 values but "
                        "non_attention.tokens has 2"));
  profile = SmallProfile();
  profile.full_attention.seconds.push_back(64.0);
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("attention.full.seconds has 3 values but "
                        "attention.full.lengths has 2"));
}

TEST(ValidateCostProfileTest, NamesValuesBeyondAnyMeasurement) {
  CostProfile profile = SmallProfile();
  profile.non_attention.sizes = {100, kMaxProfileSize + 1};
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("non_attention.tokens[1] is 1099511627777; sizes above "
                        "2^40 are not measurements"));
  profile = SmallProfile();
  profile.non_attention.sizes = {100, kMaxProfileSize};
  profile.full_attention.seconds[0] = kMaxProfileSeconds;
  EXPECT_TRUE(ValidateCostProfile(profile).ok());
  profile.full_attention.seconds[0] = 2e6;
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("attention.full.seconds[0] is 2e+06; a layer time above 1e6 s"));
}

TEST(ValidateCostProfileTest, NamesATimeBelowAPicosecond) {
  // A fuzzer's profile: 6 / 1e-315 overflowed, so non-attention at 3.7
  // tokens measured inf. Such a time is no measurement.
  CostProfile profile = SmallProfile();
  profile.non_attention = {{1, 5}, {1e-315, 6.0}};
  EXPECT_EQ(ValidateCostProfile(profile).message(),
            "cost profile: non_attention.seconds[0] is 1e-315; a layer time below 1e-12 s "
            "(a picosecond) is not a measurement");
  // The least time is one, and the steepest ratio it allows stays finite.
  profile.non_attention = {{1, 5}, {kMinProfileSeconds, 6.0}};
  ASSERT_TRUE(ValidateCostProfile(profile).ok());
  const double seconds = NonAttentionSeconds(profile, 3.7);
  EXPECT_TRUE(std::isfinite(seconds)) << seconds;
  EXPECT_GT(seconds, kMinProfileSeconds);
  EXPECT_LT(seconds, 6.0);
}

TEST(ValidateCostProfileTest, NamesEachCommunicationNumberOutOfRange) {
  const struct {
    double CommunicationModel::*member;
    const char* name;
  } fields[] = {{&CommunicationModel::intra_node_gb_per_s, "intra_node_gb_per_s"},
                {&CommunicationModel::inter_node_gb_per_s, "inter_node_gb_per_s"},
                {&CommunicationModel::kv_bytes_per_token, "kv_bytes_per_token"}};
  for (const auto& field : fields) {
    for (const double bad : {0.0, -1.0, 9e-4, 1.5e9, std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity()}) {
      CostProfile profile = SmallProfile();
      profile.communication = CommunicationModel{.gpus_per_node = 8,
                                                 .intra_node_gb_per_s = 400.0,
                                                 .inter_node_gb_per_s = 50.0,
                                                 .kv_bytes_per_token = 2048.0};
      (*profile.communication).*field.member = bad;
      const absl::Status status = ValidateCostProfile(profile);
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << field.name << " " << bad;
      EXPECT_EQ(status.message(),
                absl::StrCat("cost profile: communication.", field.name, " is ", bad,
                             "; it must be a finite number > 0 (between 0.001 and 1e9)"));
      // The limits themselves are allowed.
      for (const double limit : {1e-3, 1e9}) {
        (*profile.communication).*field.member = limit;
        EXPECT_TRUE(ValidateCostProfile(profile).ok()) << field.name << " " << limit;
      }
    }
  }
}

TEST(ValidateCostProfileTest, NamesABadCommunicationModel) {
  CostProfile profile = SmallProfile();
  profile.communication = CommunicationModel{.gpus_per_node = 8,
                                             .intra_node_gb_per_s = 400.0,
                                             .inter_node_gb_per_s = 50.0,
                                             .kv_bytes_per_token = 2048.0};
  EXPECT_TRUE(ValidateCostProfile(profile).ok());
  profile.communication->inter_node_gb_per_s = 0.0;
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("communication.inter_node_gb_per_s is 0"));
  profile.communication->inter_node_gb_per_s = 2e9;
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("communication.inter_node_gb_per_s is 2e+09; it must be a "
                        "finite number > 0 (between 0.001 and 1e9)"));
  profile.communication->inter_node_gb_per_s = 50.0;
  profile.communication->gpus_per_node = 0;
  EXPECT_THAT(ValidateCostProfile(profile).message(),
              HasSubstr("communication.gpus_per_node is 0"));
}

TEST(CommunicationModelTest, EachMemberTakesPartInEquality) {
  const CommunicationModel base{.gpus_per_node = 8,
                                .intra_node_gb_per_s = 400.0,
                                .inter_node_gb_per_s = 50.0,
                                .kv_bytes_per_token = 2048.0};
  EXPECT_EQ(base, base);
  CommunicationModel other = base;
  other.gpus_per_node = 4;
  EXPECT_NE(base, other);
  other = base;
  other.intra_node_gb_per_s = 300.0;
  EXPECT_NE(base, other);
  other = base;
  other.inter_node_gb_per_s = 25.0;
  EXPECT_NE(base, other);
  other = base;
  other.kv_bytes_per_token = 1024.0;
  EXPECT_NE(base, other);
}

}  // namespace
}  // namespace dcpsched::cost_profile_test

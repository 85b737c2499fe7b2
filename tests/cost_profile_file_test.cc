#include "io/cost_profile_file.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_replace.h"
#include "core/cost_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::cost_profile_file_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kProfile[] = R"json({
  "schema": "dcpsched.cost_profile.v1",
  "name": "tiny",
  "description": "a test profile",
  "device": {"name": "Test GPU", "sms": 1},
  "model": {"name": "tiny-model", "hidden": 8},
  "dtype": "bf16",
  "interpolation": "log-log",
  "attention": {"causal": {"lengths": [64, 128], "seconds": [1e-6, 3e-6]},
                "full": {"lengths": [64], "seconds": [2e-6]}},
  "non_attention": {"tokens": [128, 256], "seconds": [1e-3, 1.5e-3]},
  "communication": null,
  "validation": {"cases": 12},
  "a_later_field": [1, 2, 3]
})json";

// kProfile with `from` replaced by `to` (which must occur).
std::string Edited(const std::string& from, const std::string& to) {
  const std::string text = kProfile;
  EXPECT_NE(text.find(from), std::string::npos) << from;
  return absl::StrReplaceAll(text, {{from, to}});
}

TEST(ParseCostProfileTest, ReadsEveryFieldItUsesAndIgnoresTheRest) {
  const absl::StatusOr<CostProfile> profile = ParseCostProfile(kProfile);
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_EQ(profile->name, "tiny");
  EXPECT_EQ(profile->description, "a test profile");
  EXPECT_EQ(profile->device, "Test GPU");
  EXPECT_EQ(profile->model, "tiny-model");
  EXPECT_THAT(profile->causal_attention.sizes, ElementsAre(64, 128));
  EXPECT_THAT(profile->causal_attention.seconds, ElementsAre(1e-6, 3e-6));
  EXPECT_THAT(profile->full_attention.sizes, ElementsAre(64));
  EXPECT_THAT(profile->non_attention.seconds, ElementsAre(1e-3, 1.5e-3));
  EXPECT_FALSE(profile->communication.has_value());
}

TEST(ParseCostProfileTest, ReadsACommunicationModel) {
  const absl::StatusOr<CostProfile> profile = ParseCostProfile(Edited(
      R"("communication": null)",
      R"("communication": {"gpus_per_node": 8, "intra_node_gb_per_s": 400.0,
                           "inter_node_gb_per_s": 50, "kv_bytes_per_token": 2048})"));
  ASSERT_TRUE(profile.ok()) << profile.status();
  ASSERT_TRUE(profile->communication.has_value());
  EXPECT_EQ(*profile->communication,
            (CommunicationModel{.gpus_per_node = 8,
                                .intra_node_gb_per_s = 400.0,
                                .inter_node_gb_per_s = 50.0,
                                .kv_bytes_per_token = 2048.0}));
}

TEST(ParseCostProfileTest, NamesTheFieldOfABadTime) {
  const absl::StatusOr<CostProfile> profile =
      ParseCostProfile(Edited("[1e-6, 3e-6]", "[1e-6, -1]"));
  EXPECT_EQ(profile.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(profile.status().message(),
            "cost profile: attention.causal.seconds[1] is -1; every time must "
            "be a finite number > 0");
  EXPECT_THAT(ParseCostProfile(Edited("[1e-6, 3e-6]", "[1e-6, 0]")).status().message(),
              HasSubstr("attention.causal.seconds[1] is 0"));
  EXPECT_THAT(ParseCostProfile(Edited("[1e-6, 3e-6]", "[1e-6, \"3\"]")).status().message(),
              HasSubstr("attention.causal.seconds[1] must be a number, got string"));
}

TEST(ParseCostProfileTest, NamesNonIncreasingAndNonIntegerSizes) {
  EXPECT_THAT(ParseCostProfile(Edited("[128, 256]", "[256, 128]")).status().message(),
              HasSubstr("non_attention.tokens[1] is 128; sizes must be positive "
                        "integers, each larger than the one before"));
  EXPECT_THAT(ParseCostProfile(Edited("[64, 128]", "[64, 128.5]")).status().message(),
              HasSubstr("attention.causal.lengths[1] must be an integer, got 128.5"));
}

TEST(ParseCostProfileTest, NamesMissingTables) {
  EXPECT_THAT(
      ParseCostProfile(Edited(R"("full": {"lengths": [64], "seconds": [2e-6]})",
                              R"("fill": {})"))
          .status()
          .message(),
      HasSubstr("attention.full is missing"));
  EXPECT_THAT(ParseCostProfile(Edited(R"("tokens": [128, 256], )", ""))
                  .status()
                  .message(),
              HasSubstr("non_attention.tokens is missing"));
  EXPECT_THAT(ParseCostProfile(Edited("\"seconds\": [2e-6]", "\"seconds\": []"))
                  .status()
                  .message(),
              HasSubstr("attention.full.seconds has 0 values"));
}

TEST(ParseCostProfileTest, RefusesAnUnknownSchemaOrInterpolation) {
  EXPECT_EQ(ParseCostProfile(Edited("cost_profile.v1", "cost_profile.v2"))
                .status()
                .message(),
            "cost profile: schema is \"dcpsched.cost_profile.v2\"; this dcpsched "
            "reads \"dcpsched.cost_profile.v1\"");
  EXPECT_THAT(ParseCostProfile(Edited("\"log-log\"", "\"linear\"")).status().message(),
              HasSubstr("interpolation is \"linear\"; the only rule is \"log-log\""));
}

TEST(ParseCostProfileTest, RefusesSyntaxErrorsAndOtherDocuments) {
  EXPECT_THAT(ParseCostProfile("{").status().message(),
              HasSubstr("cost profile: not valid JSON"));
  EXPECT_THAT(ParseCostProfile("[1]").status().message(),
              HasSubstr("the document must be a JSON object"));
  EXPECT_THAT(ParseCostProfile(Edited(R"("communication": null)",
                                      R"("communication": {"gpus_per_node": 8})"))
                  .status()
                  .message(),
              HasSubstr("communication.intra_node_gb_per_s is missing"));
}

TEST(LoadCostProfileTest, FindsEveryShippedProfileByName) {
  EXPECT_THAT(ShippedCostProfileNames(),
              ElementsAre("h200-llama3-70b-tp8", "h200-llama3-70b-tp8-graphs",
                          "h200-llama3-8b", "h200-llama3-8b-graphs"));
  for (const std::string& name : ShippedCostProfileNames()) {
    const absl::StatusOr<CostProfile> profile = LoadCostProfile(name);
    ASSERT_TRUE(profile.ok()) << profile.status();
    EXPECT_EQ(profile->name, name);
    EXPECT_FALSE(profile->communication.has_value()) << name;
  }
}

TEST(LoadCostProfileTest, ReadsAFileAndNamesItInErrors) {
  const std::string path = ::testing::TempDir() + "/cost_profile_file_test.json";
  {
    std::ofstream file(path);
    file << Edited("[1e-6, 3e-6]", "[1e-6, -1]");
  }
  const absl::StatusOr<CostProfile> bad = LoadCostProfile(path);
  EXPECT_THAT(bad.status().message(),
              HasSubstr(path + ": cost profile: attention.causal.seconds[1] is -1"));
  {
    std::ofstream file(path);
    file << kProfile;
  }
  const absl::StatusOr<CostProfile> good = LoadCostProfile(path);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->name, "tiny");
  std::remove(path.c_str());
}

TEST(LoadCostProfileTest, ListsTheShippedNamesForAnUnknownOne) {
  const absl::StatusOr<CostProfile> profile = LoadCostProfile("h100-nothing");
  EXPECT_EQ(profile.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(profile.status().message(),
              HasSubstr("no shipped cost profile is named \"h100-nothing\""));
  EXPECT_THAT(profile.status().message(), HasSubstr("h200-llama3-8b"));
}

}  // namespace
}  // namespace dcpsched::cost_profile_file_test

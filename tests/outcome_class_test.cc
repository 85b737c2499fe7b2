// Tests of properties/outcome_class.h: each kind of refusal the schedulers
// give, read from a real refusal where a small problem makes one.

#include "properties/outcome_class.h"

#include "absl/status/status.h"
#include "core/dp_balanced.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "gtest/gtest.h"
#include "io/problem_text.h"

namespace dcpsched::properties::outcome_class_test {
namespace {

absl::Status PackingAware(const char* text) {
  const absl::StatusOr<DynamicCpProblem> problem = ParseProblem(text);
  EXPECT_TRUE(problem.ok()) << problem.status();
  return ScheduleDynamicCp(problem->samples, problem->options).status();
}

TEST(OutcomeClassTest, ScheduleForOk) {
  EXPECT_EQ(OutcomeClass(absl::OkStatus()), "schedule");
}

TEST(OutcomeClassTest, RuntimeGroupsRefusal) {
  // docs/specification.md "Runtime groups at 12 ranks".
  EXPECT_EQ(OutcomeClass(PackingAware("G=12 mslpr=2048 min_cp=1 vpp=none "
                                      "samples=0:10000,1:500,2:500,3:500,4:500,5:500")),
            "FAILED_PRECONDITION: upstream returns a schedule its runtime cannot run "
            "(invariant 11)");
}

TEST(OutcomeClassTest, InvalidInput) {
  EXPECT_EQ(OutcomeClass(PackingAware("G=2 mslpr=4 min_cp=1 vpp=none samples=0:9")),
            "INVALID_ARGUMENT: a sample needs more than G ranks");
  EXPECT_EQ(OutcomeClass(PackingAware("G=1 mslpr=4 min_cp=2 vpp=none samples=0:1")),
            "INVALID_ARGUMENT: min_cp_size is not a power of two <= G");
  DynamicCpOptions capped{2, 4, 1, std::nullopt, 1};
  EXPECT_EQ(OutcomeClass(ScheduleLegacy({{0, 1}}, capped).status()),
            "INVALID_ARGUMENT: legacy takes no max_num_seqs");
  EXPECT_EQ(OutcomeClass(ScheduleDpBalanced({9}, {1, 1, 4, std::nullopt, std::nullopt})
                             .status()),
            "INVALID_ARGUMENT: dp_balanced: a sample longer than mslpr * cp_size");
}

TEST(OutcomeClassTest, KindsByMessage) {
  const auto failed = [](const char* message) {
    return OutcomeClass(absl::FailedPreconditionError(message));
  };
  EXPECT_EQ(failed("packing-aware fill step: widening ..."),
            "FAILED_PRECONDITION: packing-aware fill step past the last rank (upstream "
            "IndexError)");
  EXPECT_EQ(failed("VPP alignment: a half ... empty ones; upstream loops forever); ..."),
            "FAILED_PRECONDITION: VPP alignment: upstream loops forever");
  EXPECT_EQ(failed("VPP alignment: ... (upstream returns such a microbatch); ..."),
            "FAILED_PRECONDITION: VPP alignment: upstream returns a microbatch wider than G");
  EXPECT_EQ(failed("VPP alignment: no tail microbatch has enough ids to split; ..."),
            "FAILED_PRECONDITION: VPP alignment: no microbatch left to split (upstream "
            "AssertionError)");
  EXPECT_EQ(failed("dp_balanced: not enough samples to move. ..."),
            "FAILED_PRECONDITION: dp_balanced: not enough samples to move (upstream "
            "AssertionError)");
  EXPECT_EQ(failed("something new"), "FAILED_PRECONDITION: other");
  EXPECT_EQ(OutcomeClass(absl::InternalError("x")), "INTERNAL: other");
}

}  // namespace
}  // namespace dcpsched::properties::outcome_class_test

// Every problem of explicit finite sets through every check, per scheduler.
//
//   exhaustive_check [--sets='G=1..16 n=0..3 ...'] [--part=K/N] [gtest flags]
//   exhaustive_check --list [--sets=...]     every problem's line, nothing run
//   exhaustive_check --count [--sets=...]    how many problems the sets name
//
// The problems are properties/problem_enumerator.h's, from --sets (default
// kTestCommandSets, what ctest runs; the nightly tier passes kNightlySets).
// One GoogleTest test per scheduler runs them all:
//
//   PackingAwareExhaustive.EveryProblemOfTheSets
//     CheckEveryPackingAwareProperty (the core against the reference oracle,
//     schedule or error code; step and placement against the oracle's; the
//     checker's invariants 1-6, 8, 10, 11 and invariant 7; the refusal of
//     what upstream's runtime cannot run, CheckUnrunnableIsRefused; compact
//     against per-rank form; determinism; relabelling, which checks the
//     enumerator's one reduction; doubling, permutation, cap and min_cp
//     metamorphics; quality), with vpp > 1 the alignment of upstream's
//     unaligned schedule against the oracle's and in compact form, and on
//     instances of G <= 4 and at most 6 samples the exhaustive oracle's
//     runtime-groups optimum (CheckRuntimeOptimumAgreesWithChecker).
//   LegacyExhaustive.EveryProblemOfTheSets
//     CheckEveryLegacyProperty (a problem with a cap: the refusal alone).
//   DpBalancedExhaustive.EveryProblemOfTheSets
//     on every problem whose min_cp divides G, the dp_balanced problem of
//     dp_size G / min_cp, cp_size min_cp and the same lengths, mslpr, vpp and
//     max_num_seqs: the core against the oracle, compact against per-rank
//     form, determinism.
//
// Each test prints how many problems it checked, in how long, and the count
// of each outcome (properties/outcome_class.h), and each failure as the
// problem's line (io/problem_text.h), which a regression test reads back
// (kRegressions in tests/problem_checks_test.cc: CheckEveryProperty). --part=K/N checks
// every N-th problem from the K-th, so N processes share a set.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/compact_schedule.h"
#include "core/dp_balanced.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/validate.h"
#include "gtest/gtest.h"
#include "io/problem_text.h"
#include "oracle/exhaustive_oracle.h"
#include "properties/generators.h"
#include "properties/outcome_class.h"
#include "properties/problem_checks.h"
#include "properties/problem_enumerator.h"

namespace dcpsched::properties {
namespace {

// Failures printed in full per test; the rest are counted.
constexpr int kFailuresShown = 20;

struct Flags {
  EnumerationSets sets;
  std::string sets_text;
  std::int64_t part = 1;
  std::int64_t parts = 1;
};

// What one scheduler's test found over the sets.
struct Tally {
  std::int64_t problems = 0;
  std::int64_t failures = 0;
  std::map<std::string, std::int64_t> outcomes;

  void Add(const absl::Status& outcome, const absl::Status& check, const std::string& line) {
    ++problems;
    ++outcomes[OutcomeClass(outcome)];
    if (check.ok()) return;
    if (++failures <= kFailuresShown) {
      std::printf("FAILED: %s\n  problem: %s\n", std::string(check.message()).c_str(),
                  line.c_str());
    }
  }
};

absl::Status FirstFailure(std::initializer_list<absl::Status> checks) {
  for (const absl::Status& status : checks) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// VPP alignment of upstream's unaligned schedule, against the oracle's and
// in compact form (the schedule check covers it only composed with the
// scheduler).
absl::Status CheckAlignmentOfUnaligned(const DynamicCpProblem& problem) {
  if (!problem.options.vpp_group || *problem.options.vpp_group <= 1) return absl::OkStatus();
  DynamicCpOptions unaligned = problem.options;
  unaligned.vpp_group.reset();
  const absl::StatusOr<CompactSchedule> upstream =
      ScheduleDynamicCpAsUpstream(problem.samples, unaligned);
  if (!upstream.ok()) return absl::OkStatus();
  const absl::StatusOr<Schedule> schedule = ExpandSchedule(*upstream);
  if (!schedule.ok()) return schedule.status();
  return FirstFailure({CheckAlignmentMatchesOracle(*schedule, *problem.options.vpp_group),
                       CheckAlignmentCompactMatchesPerRank(*schedule, *problem.options.vpp_group)});
}

void CheckPackingAware(const DynamicCpProblem& problem, Tally& tally) {
  const bool tiny = problem.options.total_gpus <= oracle::kExhaustiveMaxGpus &&
                    static_cast<std::int64_t>(problem.samples.size()) <=
                        oracle::kExhaustiveMaxSamples &&
                    ValidateDynamicCpProblem(problem.samples, problem.options).ok();
  tally.Add(ScheduleDynamicCp(problem.samples, problem.options).status(),
            FirstFailure({CheckEveryPackingAwareProperty(problem),
                          CheckAlignmentOfUnaligned(problem),
                          tiny ? CheckRuntimeOptimumAgreesWithChecker(problem)
                               : absl::OkStatus()}),
            FormatProblem(problem));
}

void CheckLegacy(const DynamicCpProblem& problem, Tally& tally) {
  tally.Add(ScheduleLegacy(problem.samples, problem.options).status(),
            problem.options.max_num_seqs ? CheckLegacyRefusesSequenceCap(problem)
                                         : CheckEveryLegacyProperty(problem),
            FormatProblem(problem));
}

absl::Status CheckDpBalancedDeterministic(const DpBalancedProblem& problem) {
  const absl::StatusOr<Schedule> first = ScheduleDpBalanced(problem.lens, problem.options);
  const absl::StatusOr<Schedule> second = ScheduleDpBalanced(problem.lens, problem.options);
  if (first.status() == second.status() && (!first.ok() || *first == *second)) {
    return absl::OkStatus();
  }
  return absl::InternalError("dp_balanced: two runs of one problem differ");
}

void CheckDpBalanced(const DynamicCpProblem& problem, Tally& tally) {
  const std::int64_t g = problem.options.total_gpus;
  const std::int64_t cp = problem.options.min_cp_size;
  if (cp > g || g % cp != 0) return;  // no dp_size * cp_size = G
  DpBalancedProblem dp;
  for (const Sample& sample : problem.samples) dp.lens.push_back(sample.len);
  dp.options = {g / cp, cp, problem.options.max_seq_len_per_rank, problem.options.max_num_seqs,
                problem.options.vpp_group};
  tally.Add(ScheduleDpBalanced(dp.lens, dp.options).status(),
            FirstFailure({CheckDpBalancedMatchesOracle(dp),
                          CheckDpBalancedCompactMatchesPerRank(dp),
                          CheckDpBalancedDeterministic(dp)}),
            absl::StrCat(FormatProblem(problem), " (dp_balanced: dp_size ", g / cp,
                         ", cp_size ", cp, ")"));
}

using Check = void (*)(const DynamicCpProblem&, Tally&);

class ExhaustiveTest : public testing::Test {
 public:
  ExhaustiveTest(std::string scheduler, Check check, Flags flags)
      : scheduler_(std::move(scheduler)), check_(check), flags_(std::move(flags)) {}

  void TestBody() override {
    Tally tally;
    const auto start = std::chrono::steady_clock::now();
    ForEachProblem(flags_.sets, flags_.part, flags_.parts,
                   [&](std::int64_t, const DynamicCpProblem& problem) { check_(problem, tally); });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("exhaustive %s: sets %s, part %lld/%lld\n", scheduler_.c_str(),
                flags_.sets_text.c_str(), static_cast<long long>(flags_.part),
                static_cast<long long>(flags_.parts));
    std::printf("exhaustive %s: %lld problems checked in %.1f s, %lld failed\n",
                scheduler_.c_str(), static_cast<long long>(tally.problems), seconds,
                static_cast<long long>(tally.failures));
    for (const auto& [outcome, count] : tally.outcomes) {
      std::printf("  %-100s %lld\n", outcome.c_str(), static_cast<long long>(count));
    }
    EXPECT_EQ(tally.failures, 0) << "problems of the sets fail a check; each is printed above "
                                    "as a problem line";
    EXPECT_GT(tally.problems, 0) << "the sets name no problem for " << scheduler_;
  }

 private:
  std::string scheduler_;
  Check check_;
  Flags flags_;
};

void Register(const char* suite, const char* scheduler, Check check, const Flags& flags) {
  testing::RegisterTest(suite, "EveryProblemOfTheSets", nullptr, nullptr, __FILE__, __LINE__,
                        [=]() -> testing::Test* {
                          return new ExhaustiveTest(scheduler, check, flags);
                        });
}

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "exhaustive_check: %s\nusage: exhaustive_check [--sets=SETS] [--part=K/N] "
               "[--list | --count] [gtest flags]\nSETS, e.g. '%s' "
               "(properties/problem_enumerator.h)\n",
               why.c_str(), std::string(kTestCommandSets).c_str());
  return 2;
}

// --part=K/N, 1 <= K <= N.
bool ParsePart(absl::string_view text, Flags& flags) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  return parts.size() == 2 && absl::SimpleAtoi(parts[0], &flags.part) &&
         absl::SimpleAtoi(parts[1], &flags.parts) && flags.part >= 1 &&
         flags.part <= flags.parts;
}

int Main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  Flags flags;
  flags.sets_text = std::string(kTestCommandSets);
  enum class Mode { kRun, kList, kCount } mode = Mode::kRun;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--sets=")) {
      flags.sets_text = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--part=")) {
      if (!ParsePart(arg, flags)) return Usage("--part takes K/N with 1 <= K <= N");
    } else if (arg == "--list") {
      mode = Mode::kList;
    } else if (arg == "--count") {
      mode = Mode::kCount;
    } else {
      return Usage(absl::StrCat("unknown argument '", arg, "'"));
    }
  }
  absl::StatusOr<EnumerationSets> sets = ParseEnumerationSets(flags.sets_text);
  if (!sets.ok()) return Usage(std::string(sets.status().message()));
  flags.sets = *std::move(sets);
  flags.sets_text = FormatEnumerationSets(flags.sets);
  if (mode == Mode::kCount) {
    std::printf("%lld problems: %s\n", static_cast<long long>(CountProblems(flags.sets)),
                flags.sets_text.c_str());
    return 0;
  }
  if (mode == Mode::kList) {
    ForEachProblem(flags.sets, flags.part, flags.parts,
                   [](std::int64_t, const DynamicCpProblem& problem) {
                     std::printf("%s\n", FormatProblem(problem).c_str());
                   });
    return 0;
  }
  Register("PackingAwareExhaustive", "packing_aware", CheckPackingAware, flags);
  Register("LegacyExhaustive", "legacy", CheckLegacy, flags);
  Register("DpBalancedExhaustive", "dp_balanced", CheckDpBalanced, flags);
  return RUN_ALL_TESTS();
}

}  // namespace
}  // namespace dcpsched::properties

int main(int argc, char** argv) { return dcpsched::properties::Main(argc, argv); }

#include "properties/checker_reference_check.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/checker.h"
#include "oracle/reference_checker.h"
#include "oracle/reference_definitions.h"

namespace dcpsched::properties {
namespace {

using oracle::ReferenceFinding;

// At most this many findings of each side are named in a failure.
constexpr std::size_t kShownFindings = 5;

std::vector<ReferenceFinding> AsFindings(const std::vector<Violation>& violations) {
  std::vector<ReferenceFinding> findings;
  findings.reserve(violations.size());
  for (const Violation& violation : violations) {
    findings.push_back(ReferenceFinding{static_cast<int>(violation.invariant),
                                        violation.microbatch, violation.rank, violation.ids});
  }
  return findings;
}

std::string Describe(const ReferenceFinding& finding) {
  return absl::StrCat("invariant ", finding.invariant, " microbatch ", finding.microbatch,
                      " rank ", finding.rank, " ids [", absl::StrJoin(finding.ids, ", "), "]");
}

// The findings of `a` that `b` lacks (both sorted), as a multiset difference.
std::string OnlyIn(const std::vector<ReferenceFinding>& a,
                   const std::vector<ReferenceFinding>& b) {
  std::vector<ReferenceFinding> only;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only));
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < only.size() && i < kShownFindings; ++i) {
    shown.push_back(Describe(only[i]));
  }
  if (only.size() > kShownFindings) {
    shown.push_back(absl::StrCat("and ", only.size() - kShownFindings, " more"));
  }
  return shown.empty() ? "nothing" : absl::StrJoin(shown, "; ");
}

absl::Status CheckOrderAndMessages(const std::vector<Violation>& violations) {
  for (std::size_t i = 0; i < violations.size(); ++i) {
    if (violations[i].message.empty()) {
      return absl::InternalError(absl::StrCat("violation ", i, " has no message"));
    }
    if (i == 0) continue;
    const Violation& before = violations[i - 1];
    const Violation& after = violations[i];
    if (std::tie(after.invariant, after.microbatch, after.rank) <
        std::tie(before.invariant, before.microbatch, before.rank)) {
      return absl::InternalError(absl::StrCat("violation ", i, " (", after.message,
                                              ") is listed after one it should precede (",
                                              before.message, ")"));
    }
  }
  return absl::OkStatus();
}

// Invariant 11's messages say what they find: a rank at or past G "is past
// the last rank", any other has its group named; and a finding about several
// samples lists them all ("(ids a, b, ...)"), one about one sample does not.
absl::Status CheckRuntimeGroupMessages(const std::vector<Violation>& violations,
                                       const DynamicCpOptions& options) {
  for (const Violation& violation : violations) {
    if (violation.invariant != Invariant::kRuntimeGroups) continue;
    const bool past = violation.rank >= options.total_gpus;
    const bool says_past = absl::StrContains(violation.message, "is past the last rank");
    const bool lists_ids = absl::StrContains(violation.message, " (ids ");
    if (past != says_past || (violation.ids.size() > 1) != lists_ids ||
        !absl::StartsWith(violation.message,
                          absl::StrCat("microbatch ", violation.microbatch, " rank"))) {
      return absl::InternalError(absl::StrCat(
          "invariant 11 at microbatch ", violation.microbatch, " rank ", violation.rank,
          " with ", violation.ids.size(), " id(s) is worded wrongly: ", violation.message));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckVerdict(const std::vector<Violation>& violations, const absl::Status& verdict) {
  if (violations.empty()) {
    if (verdict.ok()) return absl::OkStatus();
    return absl::InternalError(
        absl::StrCat("no violation, but CheckSchedule says ", verdict.ToString()));
  }
  const Violation& first = violations.front();
  const std::string expected =
      absl::StrCat("invariant ", static_cast<int>(first.invariant), " (",
                   InvariantName(first.invariant), "): ", first.message);
  if (verdict.code() == absl::StatusCode::kInvalidArgument && verdict.message() == expected) {
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat("CheckSchedule says ", verdict.ToString(),
                                          ", expected InvalidArgument: ", expected));
}

// Why a microbatch's groups are no compact form, judged here group by group:
// the words a message about its first defect must hold, or nullopt when they
// are a compact form. A group's size is judged first, then where it starts,
// then whether it ends within the rank numbers, then its ids.
std::optional<absl::string_view> CompactFormDefect(const CompactMicrobatch& microbatch) {
  std::int64_t end = 0;
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const CpGroupIds& group = microbatch.groups[g];
    if (group.size < 1) return "needs at least one rank";
    if (group.first_rank != end) {
      if (g == 0) return "must start at rank 0";
      return group.first_rank > end ? "(a gap)" : "(an overlap)";
    }
    if (group.size > std::numeric_limits<std::int64_t>::max() - end) {
      return "ends past the largest rank number";
    }
    if (g > 0 && group.ids == microbatch.groups[g - 1].ids) {
      return "holds the same ids as group";
    }
    end += group.size;
  }
  return std::nullopt;
}

}  // namespace

absl::Status CheckFindViolationsMatchesReference(absl::Span<const Sample> samples,
                                                 const Schedule& schedule,
                                                 const DynamicCpOptions& options) {
  const std::vector<Violation> violations = FindViolations(samples, schedule, options);
  if (absl::Status status = CheckOrderAndMessages(violations); !status.ok()) return status;
  if (absl::Status status = CheckRuntimeGroupMessages(violations, options); !status.ok()) {
    return status;
  }
  std::vector<ReferenceFinding> found = AsFindings(violations);
  std::sort(found.begin(), found.end());
  const std::vector<ReferenceFinding> expected =
      oracle::ReferenceFindViolations(samples, schedule, options);
  if (found != expected) {
    return absl::InternalError(absl::StrCat(
        "FindViolations and the reference checker differ; only FindViolations found: ",
        OnlyIn(found, expected), "; only the reference found: ", OnlyIn(expected, found)));
  }
  const absl::Status verdict = CheckSchedule(samples, schedule, options);
  if (!oracle::ValidateDynamicCpProblem(samples, options).ok()) {
    if (verdict.code() == absl::StatusCode::kInvalidArgument &&
        absl::StartsWith(verdict.message(), "the problem is not valid: ")) {
      return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat(
        "the problem is not valid, but CheckSchedule says ", verdict.ToString()));
  }
  return CheckVerdict(violations, verdict);
}

absl::Status CheckMalformedMicrobatchesAreReportedOnce(absl::Span<const Sample> samples,
                                                       const CompactSchedule& schedule,
                                                       const DynamicCpOptions& options) {
  if (!oracle::ValidateDynamicCpProblem(samples, options).ok()) return absl::OkStatus();
  const std::vector<Violation> violations = FindViolations(samples, schedule, options);
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const std::optional<absl::string_view> defect = CompactFormDefect(schedule.microbatches[m]);
    if (!defect) continue;
    std::vector<const Violation*> here;
    for (const Violation& violation : violations) {
      if (violation.microbatch == static_cast<std::int64_t>(m)) here.push_back(&violation);
    }
    if (here.size() != 1 || here.front()->invariant != Invariant::kNoEmptyRank ||
        here.front()->rank != -1 || !here.front()->ids.empty() ||
        here.front()->message.empty()) {
      return absl::InternalError(absl::StrCat(
          "microbatch ", m, " is no compact form, but FindViolations makes ", here.size(),
          " findings there", here.empty() ? "" : ", the first: ",
          here.empty() ? "" : here.front()->message, " (expected one, invariant 1 at no rank)"));
    }
    if (!absl::StrContains(here.front()->message, *defect)) {
      return absl::InternalError(absl::StrCat("microbatch ", m, "'s finding says \"",
                                              here.front()->message, "\", not \"", *defect,
                                              "\" (its first defect)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace dcpsched::properties

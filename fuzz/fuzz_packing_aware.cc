// Fuzz target: the packing-aware scheduler keeps the specification's invariants.
//
// On a decoded problem (fuzz_input.h), PackingAwareStep and ScheduleDynamicCp
// either succeed with a result that keeps the invariants, or fail with the
// error docs/specification.md prescribes: InvalidArgument when the problem is outside "Valid
// input" (judged by IsValidBySpec, independent of core/validate.h),
// FailedPrecondition (an upstream defect) when it is inside. Checked on
// success: the schedule passes the schedule checker; the step's microbatch
// passes it too as a schedule of the samples it placed, and its leftovers
// are the rest; with no VPP alignment, the schedule's first microbatch is the
// step's; before the fill, the step's empty ranks form a tail (invariant 7);
// and MeasureQuality reads the schedule as built (CheckQualityReadsSchedule).
// The step's microbatch may break invariant 11 (runtime groups); the
// schedule may not: where upstream's would, ScheduleDynamicCp refuses it,
// exactly there (CheckUnrunnableIsRefused, against the reference checker).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/checker.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/problem_text.h"
#include "properties/problem_checks.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_packing_aware";

// OK if `status` is what docs/specification.md prescribes for a problem that is (`valid`) or
// is not inside "Valid input".
absl::Status CheckOutcome(absl::string_view entry_point, const absl::Status& status, bool valid) {
  if (status.ok()) {
    if (valid) return absl::OkStatus();
    return absl::InternalError(
        absl::StrCat(entry_point, " accepts a problem outside the specification's limits"));
  }
  const absl::StatusCode expected =
      valid ? absl::StatusCode::kFailedPrecondition : absl::StatusCode::kInvalidArgument;
  if (status.code() == expected) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(entry_point, " gives ", status.ToString(), " for ",
                                          valid ? "a valid" : "an invalid", " problem, not ",
                                          absl::StatusCodeToString(expected)));
}

// A successful step: its leftovers are input samples, each once, not all of
// them; every rank's lengths are its ids' lengths; and its microbatch keeps
// invariants 1-6 as a schedule of the samples it placed.
absl::Status CheckStepResult(const DynamicCpProblem& problem, const PackedMicrobatch& step) {
  const auto ranks = static_cast<std::size_t>(problem.options.total_gpus);
  const auto& rank_ids = step.microbatch.rank_ids;
  if (rank_ids.size() != ranks || step.rank_lens.size() != ranks ||
      step.rank_work.size() != ranks) {
    return absl::InternalError(absl::StrCat("step has ", rank_ids.size(), " id lists, ",
                                            step.rank_lens.size(), " length lists and ",
                                            step.rank_work.size(), " work values for G=", ranks));
  }
  absl::flat_hash_map<SampleId, std::int64_t> len_of;
  for (const Sample& sample : problem.samples) len_of.emplace(sample.id, sample.len);
  if (problem.samples.empty()) {
    for (std::size_t r = 0; r < ranks; ++r) {
      if (!rank_ids[r].empty() || step.rank_work[r] != 0.0) {
        return absl::InternalError(absl::StrCat("step of no samples fills rank ", r));
      }
    }
    if (step.leftovers.empty()) return absl::OkStatus();
    return absl::InternalError("step of no samples has leftovers");
  }
  if (step.leftovers.size() >= problem.samples.size()) {
    return absl::InternalError("step places no sample");
  }
  for (const Sample& leftover : step.leftovers) {
    const auto it = len_of.find(leftover.id);
    if (it == len_of.end() || it->second != leftover.len) {
      return absl::InternalError(absl::StrCat("leftover ", leftover.id, ":", leftover.len,
                                              " is not an input sample (or repeated)"));
    }
    len_of.erase(it);
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    if (rank_ids[r].size() != step.rank_lens[r].size()) {
      return absl::InternalError(absl::StrCat("step rank ", r, " has ", rank_ids[r].size(),
                                              " ids but ", step.rank_lens[r].size(), " lengths"));
    }
    for (std::size_t i = 0; i < rank_ids[r].size(); ++i) {
      const auto it = len_of.find(rank_ids[r][i]);
      if (it != len_of.end() && it->second != step.rank_lens[r][i]) {
        return absl::InternalError(absl::StrCat("step rank ", r, " gives sample ", rank_ids[r][i],
                                                " length ", step.rank_lens[r][i], ", not ",
                                                it->second));
      }
    }
  }
  std::vector<Sample> placed;
  for (const Sample& sample : problem.samples) {
    if (len_of.contains(sample.id)) placed.push_back(sample);
  }
  DynamicCpOptions options = problem.options;
  options.vpp_group.reset();
  // Invariant 11 is judged on whole schedules: a step is upstream's building
  // block, and ScheduleDynamicCp refuses a schedule the runtime cannot run.
  for (const Violation& violation :
       FindViolations(placed, Schedule{{step.microbatch}}, options)) {
    if (violation.invariant == Invariant::kRuntimeGroups) continue;
    return absl::InternalError(absl::StrCat("step's microbatch: invariant ",
                                            static_cast<int>(violation.invariant), " (",
                                            InvariantName(violation.invariant),
                                            "): ", violation.message));
  }
  return absl::OkStatus();
}

// A broken property: a short name for it (no ':') and the details.
struct Finding {
  absl::string_view what;
  absl::Status status;
};

// The first property `problem` breaks, if any.
std::optional<Finding> FindBrokenProperty(const DynamicCpProblem& problem) {
  const bool valid = IsValidBySpec(problem);
  const absl::StatusOr<PackedMicrobatch> step = PackingAwareStep(problem.samples, problem.options);
  if (absl::Status status = CheckOutcome("PackingAwareStep", step.status(), valid); !status.ok()) {
    return Finding{"step gives the wrong outcome", status};
  }
  if (step.ok()) {
    if (absl::Status status = CheckStepResult(problem, *step); !status.ok()) {
      return Finding{"step breaks an invariant", status};
    }
  }
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  if (absl::Status status = CheckOutcome("ScheduleDynamicCp", schedule.status(), valid);
      !status.ok()) {
    return Finding{"schedule gives the wrong outcome", status};
  }
  if (schedule.ok()) {
    if (absl::Status status = CheckSchedule(problem.samples, *schedule, problem.options);
        !status.ok()) {
      return Finding{"schedule breaks an invariant", status};
    }
    if (absl::Status status = properties::CheckQualityReadsSchedule(problem, *schedule);
        !status.ok()) {
      return Finding{"quality misreads the schedule", status};
    }
    const bool aligned = problem.options.vpp_group.value_or(1) > 1;
    if (step.ok() && !aligned && !problem.samples.empty() &&
        !(schedule->microbatches.front() == step->microbatch)) {
      return Finding{
          "first microbatch is not the step",
          absl::InternalError("the schedule's first microbatch differs from the step's")};
    }
  }
  if (absl::Status status = properties::CheckCompactMatchesPerRank(problem); !status.ok()) {
    return Finding{"compact schedule is not the per-rank schedule", status};
  }
  if (!valid) return std::nullopt;
  if (absl::Status status = properties::CheckEmptyRanksFormATail(problem); !status.ok()) {
    return Finding{"empty ranks before the fill are not a tail", status};
  }
  if (absl::Status status = properties::CheckUnrunnableIsRefused(problem, /*legacy=*/false);
      !status.ok()) {
    return Finding{"an unrunnable schedule is not refused as such", status};
  }
  return std::nullopt;
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider provider(data, size);
  const DynamicCpProblem problem = DecodeDynamicCpProblem(provider);
  if (const std::optional<Finding> finding = FindBrokenProperty(problem); finding.has_value()) {
    ReportAndAbort(kTarget, finding->what, finding->status, FormatProblem(problem));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

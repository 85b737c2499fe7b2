// The runs the text report of `dcpsched schedule` compares the chosen
// scheduler with (--compare).
//
// "auto", the default, compares every scheduler, but leaves out cost_aware
// when the problem has no cost profile (it schedules by one), and the legacy
// one when it would dominate the report's time: its step rescans every
// remaining sample once per microbatch, about n x microbatches work, which
// on a million samples takes minutes where the packing-aware scheduler takes
// a second. The report then says it skipped legacy and why. A list of names
// ("packing_aware,legacy") runs exactly those, however long they take;
// "none" compares nothing. cost_aware listed without a cost profile is
// reported as skipped, saying to add one.

#ifndef DCPSCHED_CLI_COMPARISON_RUNS_H_
#define DCPSCHED_CLI_COMPARISON_RUNS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "io/schedule_run.h"

namespace dcpsched {

// Above this estimate of n x microbatches, "auto" skips legacy (about a
// second of its time on this machine class).
inline constexpr std::int64_t kMaxAutoLegacyCost = std::int64_t{1} << 26;

// What --compare asked for.
struct Comparison {
  std::vector<SchedulerKind> schedulers;  // in kAllSchedulers order
  bool automatic = false;                 // "auto": legacy may be skipped
};

// Parses --compare: "auto", "none" or comma-separated scheduler names.
// InvalidArgument naming the flag for an unknown name.
absl::StatusOr<Comparison> ParseComparison(const std::string& compare);

// The runs of `comparison` on `problem`, reusing `chosen` (the chosen
// scheduler's run, which succeeded) where it is listed.
std::vector<ScheduleRun> ComparisonRuns(const Comparison& comparison,
                                        const SchedulingProblem& problem,
                                        const ScheduleRun& chosen);

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_COMPARISON_RUNS_H_

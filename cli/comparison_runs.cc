#include "cli/comparison_runs.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "io/schedule_run.h"

namespace dcpsched {
namespace {

// Why "auto" leaves legacy out, or "" to run it: the estimate of its cost
// counts the chosen scheduler's microbatches.
std::string WhyLegacyIsSkipped(const SchedulingProblem& problem,
                               const ScheduleRun& chosen) {
  const auto microbatches =
      static_cast<std::int64_t>(chosen.schedule.microbatches.size());
  const auto samples = static_cast<std::int64_t>(problem.samples.size());
  if (samples > kMaxAutoLegacyCost / std::max<std::int64_t>(microbatches, 1)) {
    return absl::StrCat(
        "its step rescans every remaining sample once per microbatch, about ",
        samples, " samples x ", microbatches,
        " microbatches here; --compare legacy runs it anyway");
  }
  return "";
}

}  // namespace

absl::StatusOr<Comparison> ParseComparison(const std::string& compare) {
  Comparison comparison;
  comparison.automatic = compare == "auto";
  std::vector<bool> listed(kAllSchedulers.size(), comparison.automatic);
  if (compare != "auto" && compare != "none") {
    for (const absl::string_view name : absl::StrSplit(compare, ',')) {
      const absl::StatusOr<SchedulerKind> scheduler = ParseSchedulerName(name);
      if (!scheduler.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--compare: ", scheduler.status().message(),
                         ", or auto or none"));
      }
      listed[static_cast<std::size_t>(*scheduler)] = true;
    }
  }
  for (const SchedulerKind scheduler : kAllSchedulers) {
    if (listed[static_cast<std::size_t>(scheduler)]) {
      comparison.schedulers.push_back(scheduler);
    }
  }
  return comparison;
}

std::vector<ScheduleRun> ComparisonRuns(const Comparison& comparison,
                                        const SchedulingProblem& problem,
                                        const ScheduleRun& chosen) {
  std::vector<ScheduleRun> runs;
  for (const SchedulerKind scheduler : comparison.schedulers) {
    if (scheduler == chosen.scheduler) {
      runs.push_back(chosen);
      continue;
    }
    if (!SchedulerRunsOn(scheduler, problem.cost_profile.has_value())) {
      if (!comparison.automatic) {
        runs.push_back(SkippedRun(
            scheduler, "it schedules by a cost profile; add --cost-profile NAME|FILE"));
      }
      continue;
    }
    if (comparison.automatic && scheduler == SchedulerKind::kLegacy) {
      if (std::string why = WhyLegacyIsSkipped(problem, chosen); !why.empty()) {
        runs.push_back(SkippedRun(scheduler, std::move(why)));
        continue;
      }
    }
    runs.push_back(RunScheduler(scheduler, problem));
  }
  return runs;
}

}  // namespace dcpsched

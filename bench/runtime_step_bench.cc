// Every scheduler's step on the committed batches (bench/committed_batches.h)
// as Megatron-LM's runtime runs it (core/runtime_step.h): under the barrier
// model, without pipelining, 1F1B at P = 2, 4 and 8, and interleaved 1F1B
// at P = 4, V = 2 (scheduled with --vpp 4, so that interleaving can run the
// microbatch count), under both shipped 8B profiles. One layer per pipeline
// stage, forward 1/3 of a layer. cost_aware schedules for each runtime it
// is measured on (it minimises that runtime's step); the others do not
// know the runtime. Then cost_aware against the budget search at P = 2, 4
// and 8: the barrier-minimising cost_aware (--runtime legacy) at
// --mslpr x 1, 3/4, 1/2, 3/8, 1/4 and 1/8, the fastest at P kept. Prints
// the markdown tables of docs/runtime_step.md. Every figure is modelled,
// not timed.
//
// Usage: runtime_step_bench

#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "bench/committed_batches.h"
#include "core/cost_profile.h"
#include "core/runtime_step.h"
#include "io/cost_profile_file.h"
#include "io/schedule_run.h"
#include "io/workload.h"

namespace dcpsched::bench {
namespace {

[[noreturn]] void Fail(absl::string_view what) {
  std::cerr << "runtime_step_bench: " << what << "\n";
  std::exit(1);
}

SchedulingProblem Problem(const Batch& batch, const CostProfile& profile,
                          std::optional<std::int64_t> vpp_group) {
  absl::StatusOr<std::vector<Sample>> samples = GenerateLognormalWorkload(batch.workload);
  if (!samples.ok()) Fail(samples.status().message());
  SchedulingProblem problem;
  problem.samples = *std::move(samples);
  problem.parameters.dp_size = batch.dp_size;
  problem.parameters.cp_size = batch.cp_size;
  problem.parameters.max_seq_len_per_rank = batch.mslpr;
  problem.parameters.vpp_group = vpp_group;
  problem.cost_profile = profile;
  return problem;
}

RuntimeConfig Pipeline(std::int64_t stages, std::int64_t virtual_stages) {
  RuntimeConfig config;
  config.pipeline.stages = stages;
  config.pipeline.virtual_stages = virtual_stages;
  return config;
}

RuntimeConfig Interleaving() {
  RuntimeConfig config = Pipeline(4, 2);
  config.pipeline.microbatch_group_size = 4;
  return config;
}

RuntimeConfig Barrier() {
  RuntimeConfig config;
  config.path = RuntimePath::kLegacy;
  return config;
}

// The run's step on `config`, in ms.
double StepMs(const ScheduleRun& run, const RuntimeConfig& config) {
  absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(run.schedule, *run.time, config);
  if (!step.ok()) Fail(step.status().message());
  return step->step_seconds * 1e3;
}

// `scheduler`'s run of `problem`, scheduled for `config`.
ScheduleRun RunFor(SchedulerKind scheduler, SchedulingProblem problem,
                   const RuntimeConfig& config) {
  problem.runtime = config;
  return RunScheduler(scheduler, std::move(problem));
}

// " 519.6 (35) |": cost_aware's step when it schedules for `config`, and
// its microbatch count.
std::string CostAwareCell(const SchedulingProblem& problem, const RuntimeConfig& config) {
  const ScheduleRun run = RunFor(SchedulerKind::kCostAware, problem, config);
  if (!run.status.ok()) Fail(run.status.message());
  return absl::StrFormat(" %.1f (%d) |", StepMs(run, config), run.schedule.microbatches.size());
}

// The per-rank budgets of the budget search: --mslpr x 1, 3/4, 1/2, 3/8, 1/4
// and 1/8.
constexpr std::pair<int, int> kSearchFractions[] = {{1, 1}, {3, 4}, {1, 2},
                                                     {3, 8}, {1, 4}, {1, 8}};

struct SearchResult {
  double step_ms = 0.0;
  std::int64_t microbatches = 0;
  std::int64_t budget = 0;
};

// The budget search: the barrier-minimising cost_aware at each budget, the
// fastest on `config`.
SearchResult BudgetSearch(const SchedulingProblem& problem, const RuntimeConfig& config) {
  std::optional<SearchResult> best;
  for (const auto& [numerator, denominator] : kSearchFractions) {
    SchedulingProblem at_budget = problem;
    at_budget.parameters.max_seq_len_per_rank =
        problem.parameters.max_seq_len_per_rank * numerator / denominator;
    const ScheduleRun run = RunFor(SchedulerKind::kCostAware, at_budget, Barrier());
    if (!run.status.ok()) continue;
    absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(run.schedule, *run.time, config);
    if (!step.ok()) continue;
    if (!best.has_value() || step->step_seconds * 1e3 < best->step_ms) {
      best = SearchResult{step->step_seconds * 1e3,
                          static_cast<std::int64_t>(run.schedule.microbatches.size()),
                          at_budget.parameters.max_seq_len_per_rank};
    }
  }
  if (!best.has_value()) Fail("the budget search found no schedule");
  return *best;
}

// cost_aware against packing_aware and the budget search at P = 2, 4 and 8,
// with the geometric mean of cost_aware's speed-up over the search.
void PrintSearchTable(const CostProfile& profile) {
  std::cout << absl::StrFormat(
      "\n%s: cost_aware against the budget search\n\n"
      "| batch | P | packing_aware ms | budget search ms (microbatches, budget) | "
      "cost_aware ms (microbatches) | over packing_aware | over the search |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
      profile.name);
  double log_sum = 0.0;
  int count = 0;
  for (const Batch& batch : CommittedBatches()) {
    const SchedulingProblem problem = Problem(batch, profile, std::nullopt);
    const ScheduleRun packing_aware = RunScheduler(SchedulerKind::kPackingAware, problem);
    if (!packing_aware.status.ok()) Fail(packing_aware.status.message());
    for (const std::int64_t stages : {2, 4, 8}) {
      const RuntimeConfig config = Pipeline(stages, 1);
      const double upstream_ms = StepMs(packing_aware, config);
      const SearchResult search = BudgetSearch(problem, config);
      const ScheduleRun cost_aware = RunFor(SchedulerKind::kCostAware, problem, config);
      if (!cost_aware.status.ok()) Fail(cost_aware.status.message());
      const double cost_aware_ms = StepMs(cost_aware, config);
      log_sum += std::log(search.step_ms / cost_aware_ms);
      ++count;
      std::cout << absl::StrFormat(
          "| `%s` | %d | %.1f | %.1f (%d, %d) | %.1f (%d) | %.2fx | %.3fx |\n", batch.flags,
          stages, upstream_ms, search.step_ms, search.microbatches, search.budget,
          cost_aware_ms, cost_aware.schedule.microbatches.size(), upstream_ms / cost_aware_ms,
          search.step_ms / cost_aware_ms);
    }
  }
  std::cout << absl::StrFormat("\ngeometric mean over the search: %.3fx (%d cases)\n",
                               std::exp(log_sum / count), count);
}

void PrintTable(const CostProfile& profile) {
  std::cout << absl::StrFormat("\n%s\n\n", profile.name);
  std::cout << "| batch (`dcpsched schedule` flags, seed 5154) | scheduler | microbatches | "
               "barrier ms | P = 1 | P = 2 | P = 4 | P = 8 | P = 4, V = 2 (microbatches) |\n"
               "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const Batch& batch : CommittedBatches()) {
    const SchedulingProblem problem = Problem(batch, profile, std::nullopt);
    const SchedulingProblem aligned = Problem(batch, profile, 4);
    for (const SchedulerKind scheduler : kAllSchedulers) {
      if (scheduler == SchedulerKind::kCostAware) {
        std::string row = absl::StrFormat("| `%s` | %s | |", batch.flags,
                                          SchedulerName(scheduler));
        const ScheduleRun barrier = RunFor(scheduler, problem, Barrier());
        if (!barrier.status.ok()) Fail(barrier.status.message());
        absl::StrAppendFormat(&row, " %.1f (%d) |", barrier.time->step_seconds * 1e3,
                              barrier.schedule.microbatches.size());
        for (const std::int64_t stages : {1, 2, 4, 8}) {
          absl::StrAppend(&row, CostAwareCell(problem, Pipeline(stages, 1)));
        }
        absl::StrAppend(&row, CostAwareCell(aligned, Interleaving()), "\n");
        std::cout << row;
        continue;
      }
      const ScheduleRun run = RunScheduler(scheduler, problem);
      const ScheduleRun interleaved = RunScheduler(scheduler, aligned);
      std::string row = absl::StrFormat("| `%s` | %s |", batch.flags, SchedulerName(scheduler));
      if (!run.status.ok() || !interleaved.status.ok()) {
        absl::StrAppend(&row, " cannot schedule: ",
                        (run.status.ok() ? interleaved.status : run.status).message(),
                        " | | | | | | | |\n");
        std::cout << row;
        continue;
      }
      absl::StrAppendFormat(&row, " %d | %.1f |", run.schedule.microbatches.size(),
                            run.time->step_seconds * 1e3);
      for (const std::int64_t stages : {1, 2, 4, 8}) {
        absl::StrAppendFormat(&row, " %.1f |", StepMs(run, Pipeline(stages, 1)));
      }
      absl::StrAppendFormat(&row, " %.1f (%d) |\n", StepMs(interleaved, Interleaving()),
                            interleaved.schedule.microbatches.size());
      std::cout << row;
    }
  }
}

}  // namespace
}  // namespace dcpsched::bench

int main(int argc, char** /*argv*/) {
  using namespace dcpsched;
  if (argc != 1) bench::Fail("usage: runtime_step_bench");
  for (const char* name : {"h200-llama3-8b", "h200-llama3-8b-graphs"}) {
    absl::StatusOr<CostProfile> profile = LoadCostProfile(name);
    if (!profile.ok()) bench::Fail(profile.status().message());
    bench::PrintTable(*profile);
  }
  for (const char* name : {"h200-llama3-8b", "h200-llama3-8b-graphs"}) {
    absl::StatusOr<CostProfile> profile = LoadCostProfile(name);
    if (!profile.ok()) bench::Fail(profile.status().message());
    bench::PrintSearchTable(*profile);
  }
  return 0;
}

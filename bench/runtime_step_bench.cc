// Every scheduler's step on the committed batches (bench/committed_batches.h)
// as Megatron-LM's runtime runs it (core/runtime_step.h): under the barrier
// model, without pipelining, 1F1B at P = 2, 4 and 8, and interleaved 1F1B
// at P = 4, V = 2 (scheduled with --vpp 4, so that interleaving can run the
// microbatch count), under both shipped 8B profiles. One layer per pipeline
// stage, forward 1/3 of a layer. Prints the markdown tables of
// docs/runtime_step.md. Every figure is modelled, not timed.
//
// Usage: runtime_step_bench

#include <cstdint>
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

// The run's step on `config`, in ms.
double StepMs(const ScheduleRun& run, const RuntimeConfig& config) {
  absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(run.schedule, *run.time, config);
  if (!step.ok()) Fail(step.status().message());
  return step->step_seconds * 1e3;
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
      RuntimeConfig interleaving = Pipeline(4, 2);
      interleaving.pipeline.microbatch_group_size = 4;
      absl::StrAppendFormat(&row, " %.1f (%d) |\n", StepMs(interleaved, interleaving),
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
  return 0;
}

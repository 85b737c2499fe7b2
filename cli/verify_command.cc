#include "cli/verify_command.h"

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cost_profile_flag.h"
#include "cli/exit_codes.h"
#include "core/checker.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "io/schedule_file.h"

namespace dcpsched {
namespace {

// Whether the scheduler that made a schedule (the document's "scheduler")
// promises the work cap, invariant 5: cost_aware, which schedules by a cost
// profile, promises every invariant but that one (core/cost_aware.h).
bool PromisesWorkCap(const std::string& scheduler) { return scheduler != "cost_aware"; }

// The invariants the checker judged: 10 only under a cap; 11 is the
// runtime's CP groups; 5 only where the scheduler promises it.
std::string HeldInvariants(const DynamicCpOptions& options, bool work_cap) {
  const std::string cap =
      options.max_num_seqs.has_value()
          ? absl::StrCat(", 10 (max_num_seqs ", *options.max_num_seqs, ")")
          : "";
  if (work_cap) return absl::StrCat("invariants 1-6, 8", cap, " and 11 hold");
  return absl::StrCat("invariants 1-4, 6, 8", cap,
                      " and 11 hold; 5 (work cap) is not checked: cost_aware "
                      "promises every invariant but it");
}

// The lines on the schedule's GPU time by `profile` and its step on
// `runtime`, or why it has none; `*refused` is the runtime's refusal of the
// schedule, if it refuses it.
std::string TimeLines(const ScheduleFile& file, const CostProfile& profile,
                      const RuntimeConfig& runtime, absl::Status* refused) {
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      file.samples, file.schedule, profile,
      GpuTimeOptions{.max_seq_len_per_rank = file.options.max_seq_len_per_rank});
  if (!time.ok()) {
    return absl::StrCat("time (", profile.name, "): not measured: ",
                        time.status().message(), "\n");
  }
  std::string text = absl::StrFormat(
      "time (%s): barrier step %.3f ms, lower bound %.3f ms, GPU efficiency %.4f; %s\n",
      profile.name, time->step_seconds * 1e3, time->bound_seconds * 1e3,
      time->gpu_efficiency,
      time->communication_modelled
          ? "communication MODELLED, not measured (docs/cost_model.md)"
          : "compute only, communication not modelled (docs/cost_model.md)");
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(file.schedule, *time, runtime);
  if (!step.ok()) {
    *refused = step.status();
    return text;
  }
  absl::StrAppendFormat(
      &text,
      "step (%s): %.3f ms, busiest rank %.3f ms, bubble %.3f ms, at least %.3f ms "
      "(docs/runtime_step.md)\n",
      DescribeRuntime(runtime), step->step_seconds * 1e3, step->busiest_rank_seconds * 1e3,
      step->bubble_seconds * 1e3, step->bound_seconds * 1e3);
  return text;
}

}  // namespace

VerifyCommand::VerifyCommand(CLI::App& command) : runtime_flags_(command) {
  command
      .add_option("FILE", file_,
                  "Schedule file (JSON, docs/schedule_json.md), or - for "
                  "standard input")
      ->type_name("FILE")
      ->required();
  AddCostProfileFlag(command, &cost_profile_);
}

int VerifyCommand::Run(std::ostream& out, std::ostream& err) const {
  std::optional<CostProfile> profile;
  if (const int loaded = LoadCostProfileFlag(cost_profile_, err, &profile);
      loaded != kExitSuccess) {
    return loaded;
  }
  const absl::StatusOr<ScheduleFile> file = ReadScheduleFile(file_);
  if (!file.ok()) {
    err << "dcpsched: " << file.status().message() << "\n";
    return kExitUsage;
  }
  RuntimeConfig runtime;
  if (const int built = runtime_flags_.Build(file->options.total_gpus, file->options.vpp_group,
                                             profile.has_value(), err, &runtime);
      built != kExitSuccess) {
    return built;
  }
  const bool work_cap = PromisesWorkCap(file->scheduler);
  std::vector<Violation> violations =
      FindViolations(file->samples, file->schedule, file->options);
  if (!work_cap) {
    std::erase_if(violations, [](const Violation& violation) {
      return violation.invariant == Invariant::kWorkCap;
    });
  }
  for (const Violation& violation : violations) {
    out << "invariant " << static_cast<int>(violation.invariant) << " ("
        << InvariantName(violation.invariant) << "): " << violation.message
        << "\n";
  }
  if (violations.empty()) {
    const std::size_t count = file->schedule.microbatches.size();
    out << "ok: " << count << (count == 1 ? " microbatch" : " microbatches")
        << " of G = " << file->options.total_gpus << " ranks, "
        << file->samples.size() << (file->samples.size() == 1 ? " sample" : " samples")
        << "; " << HeldInvariants(file->options, work_cap) << " (docs/specification.md)\n";
  }
  absl::Status refused;
  if (profile.has_value()) out << TimeLines(*file, *profile, runtime, &refused);
  if (!refused.ok()) {
    err << "dcpsched: the " << DescribeRuntime(runtime) << " cannot run this schedule of "
        << file->schedule.microbatches.size() << " microbatches: " << refused.message()
        << "\n";
    return FinishOutput(out, err, kExitUsage);
  }
  return FinishOutput(out, err, violations.empty() ? kExitSuccess : kExitWrong);
}

}  // namespace dcpsched

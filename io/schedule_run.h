// One scheduling problem (a global batch, a topology and its limits) and the
// result of running one scheduler on it: the schedule, its quality and how
// long the scheduler took. The text report (report.h), the JSON forms
// (schedule_json.h) and the picture (schedule_svg.h) all describe a
// ScheduleRun.
//
// A run holds its schedule in compact form (core/compact_schedule.h), each
// microbatch as its CP groups, as the schedulers build it natively
// (ScheduleDynamicCpCompact and the others), and its quality by group
// (core/quality.h), so a run costs O(samples + groups) whatever G is. The
// per-rank form is derived on request (ExpandSchedule), for output that lists
// every rank.
//
// With a cost profile (core/cost_profile.h) the problem is also measured in
// GPU seconds: each run then carries its ScheduleTime (core/gpu_time.h)
// beside its len^2 quality, and its step as the problem's runtime runs it
// (core/runtime_step.h), and every output shows them. Without one, nothing
// about a run or its output changes.
//
// The three schedulers name samples differently: the dynamic-CP ones by id,
// dp_balanced by position in its lens list. A ScheduleRun always holds ids,
// so runs of different schedulers on the same batch can be compared.

#ifndef DCPSCHED_IO_SCHEDULE_RUN_H_
#define DCPSCHED_IO_SCHEDULE_RUN_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/quality.h"
#include "core/runtime_step.h"
#include "core/types.h"

namespace dcpsched {

enum class SchedulerKind { kPackingAware, kDpBalanced, kLegacy, kCostAware };

// Every scheduler, in the order comparison tables list them. cost_aware
// schedules by a cost profile (core/cost_aware.h), so a problem without one
// cannot run it: RunAllSchedulers and the "auto" comparison leave it out.
inline constexpr std::array<SchedulerKind, 4> kAllSchedulers = {
    SchedulerKind::kPackingAware, SchedulerKind::kDpBalanced,
    SchedulerKind::kLegacy, SchedulerKind::kCostAware};

// "packing_aware", "dp_balanced", "legacy" (the golden files' names) or
// "cost_aware".
absl::string_view SchedulerName(SchedulerKind scheduler);

// Whether `scheduler` can run on a problem with (`has_cost_profile`) or
// without a cost profile: all but cost_aware run without one.
bool SchedulerRunsOn(SchedulerKind scheduler, bool has_cost_profile);

// The inverse of SchedulerName; InvalidArgument listing the names otherwise.
absl::StatusOr<SchedulerKind> ParseSchedulerName(absl::string_view name);

// Topology and limits, shared by every scheduler of one comparison. The
// dynamic-CP schedulers see only G = dp_size * cp_size; dp_balanced uses
// both factors (and max_num_seqs); min_cp_size plays no part in it.
struct RunParameters {
  std::int64_t dp_size = 2;
  std::int64_t cp_size = 4;
  // True when the user gave only G: then dp_size = G and cp_size = 1, which
  // is what dp_balanced runs with, and reports say so.
  bool cp_size_implied = false;
  std::int64_t max_seq_len_per_rank = 2048;
  std::int64_t min_cp_size = 1;
  std::optional<std::int64_t> vpp_group;
  std::optional<std::int64_t> max_num_seqs;

  std::int64_t total_gpus() const { return dp_size * cp_size; }
};

// InvalidArgument, naming the parameter and its allowed range, unless
// 1 <= dp_size, cp_size and dp_size * cp_size <= 65536, max_num_seqs >= 1
// when set, and the dynamic-CP options are valid (validate.h).
absl::Status ValidateRunParameters(const RunParameters& parameters);

DynamicCpOptions ToDynamicCpOptions(const RunParameters& parameters);
DpBalancedOptions ToDpBalancedOptions(const RunParameters& parameters);

// A global batch to schedule and where it came from.
struct SchedulingProblem {
  // One line, e.g. the generator's parameters or the lengths file's path.
  std::string workload_description;
  std::vector<Sample> samples;
  RunParameters parameters;
  // When set (valid, ValidateCostProfile), runs are also measured in GPU
  // seconds by it.
  std::optional<CostProfile> cost_profile;
  // The runtime whose step each run reports, with a cost profile
  // (CheckRuntimeConfig accepts it for G ranks): by default dev without
  // pipelining.
  RuntimeConfig runtime;
};

// What one scheduler made of a SchedulingProblem.
struct ScheduleRun {
  SchedulerKind scheduler = SchedulerKind::kPackingAware;
  // OK, or why the scheduler (or measuring its schedule) failed; the other
  // fields are then empty.
  absl::Status status;
  // The schedule by sample id (dp_balanced's positions mapped back to ids),
  // in compact form.
  CompactSchedule schedule;
  ScheduleQuality quality;
  // The schedule's GPU time, when the problem has a cost profile.
  std::optional<ScheduleTime> time;
  // Its step as the problem's runtime runs it, with `time`.
  std::optional<RuntimeStep> step;
  // Wall time of the scheduler call alone, on a steady clock.
  double elapsed_ms = 0.0;
  // Non-empty when the scheduler was not run at all: why (a report says so
  // instead of a result). `status` is then OK and the rest empty.
  std::string skipped;
  // cost_aware only: whose schedule it returned ("planned" or
  // "packing_aware", CostAwareSourceName) and why, in one line.
  std::string source;
  std::string source_reason;
};

// A run of `scheduler` that was left out, and why.
ScheduleRun SkippedRun(SchedulerKind scheduler, std::string why);

// Runs `scheduler` on `problem` (parameters are assumed validated; an
// invalid one comes back as the run's status) and measures the result.
// cost_aware without a cost profile comes back as InvalidArgument saying
// to add one.
ScheduleRun RunScheduler(SchedulerKind scheduler,
                         const SchedulingProblem& problem);

// The run of `scheduler` whose answer was `schedule` (by sample id):
// `schedule` measured against `problem` (in GPU seconds too when it has a
// cost profile; the bound then allows dp_balanced's cp_size), or the reason
// it cannot be. Its elapsed_ms is 0. For tests, and for schedules made elsewhere.
ScheduleRun MeasureRun(SchedulerKind scheduler,
                       const SchedulingProblem& problem,
                       CompactSchedule schedule);

// RunScheduler for each of kAllSchedulers that runs on `problem`
// (SchedulerRunsOn), in that order.
std::vector<ScheduleRun> RunAllSchedulers(const SchedulingProblem& problem);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_SCHEDULE_RUN_H_

// Fuzz target: the cost-aware scheduler (core/cost_aware.h) keeps its
// promises on any problem and profile.
//
// The input decodes to a dynamic-CP problem (fuzz_input.h, as
// fuzz_packing_aware's), then to a cost profile: one of the shipped ones, or
// (the last choice) a small profile of curves read from the remaining bytes,
// valid but not monotone. An exhausted input reads as the first shipped
// profile, so every fuzz_packing_aware input is a fuzz_cost_aware input too.
// Then the rest of the input decodes to a runtime (core/runtime_step.h: P,
// V, group size, layers, forward share, EP size, path; exhausted, dev
// without pipelining), which cost_aware schedules for.
//
// ScheduleCostAware must fail exactly as docs/specification.md prescribes
// (InvalidArgument where the problem is outside "Valid input", judged by
// IsValidBySpec, or where the runtime can run no microbatch count, with
// CheckRuntimeConfig's error; otherwise FailedPrecondition at most), and on
// success: its schedule keeps every invariant the checker knows but the work
// cap (5), runtime groups (11) included; the runtime runs its microbatch
// count; its step is what the runtime step model says, no less than the
// model's bound, and no more than packing-aware's on the same runtime where
// that one is runnable there; its barrier time is no less than the barrier
// bound; and a second call returns the same schedule.
//
// Then packing-aware's schedule and cost_aware's are stepped on the runtime:
// MeasureRuntimeStep refuses exactly what CheckRuntimeConfig refuses for
// their microbatch counts, with InvalidArgument; otherwise busiest work <=
// bound <= step (up to rounding at P > 1), without pipelining the step is
// at most the barrier model's, and the legacy step of one layer is
// MeasureScheduleTime's bit for bit.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/packing_aware.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/cost_profile_file.h"
#include "io/problem_text.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_cost_aware";
// Relative slack for sums that agree in exact arithmetic.
constexpr double kSlack = 1e-9;

// A valid curve of 1 to 4 points read from `data`.
MeasuredCurve DecodeCurve(FuzzedDataProvider& data) {
  MeasuredCurve curve;
  const int points = data.ConsumeIntegralInRange<int>(1, 4);
  std::int64_t size = data.ConsumeIntegralInRange<std::int64_t>(1, 512);
  for (int i = 0; i < points; ++i) {
    curve.sizes.push_back(size);
    // 1e-7 .. 1 s, by tenths of a decade.
    const int tenths = data.ConsumeIntegralInRange<int>(-70, 0);
    double seconds = 1.0;
    for (int t = 0; t < -tenths; ++t) seconds /= 1.2589254117941673;  // 10^0.1
    curve.seconds.push_back(seconds);
    size += data.ConsumeIntegralInRange<std::int64_t>(1, 1 << 14);
  }
  return curve;
}

// The profile the rest of `data` chooses (see the file comment).
CostProfile DecodeProfile(FuzzedDataProvider& data) {
  const std::vector<std::string> names = ShippedCostProfileNames();
  const auto choice = data.ConsumeIntegralInRange<std::size_t>(0, names.size());
  if (choice < names.size()) {
    absl::StatusOr<CostProfile> profile = LoadCostProfile(names[choice]);
    if (profile.ok()) return *std::move(profile);
  }
  CostProfile profile;
  profile.name = "decoded";
  profile.causal_attention = DecodeCurve(data);
  profile.full_attention = DecodeCurve(data);
  profile.non_attention = DecodeCurve(data);
  return profile;
}

// A runtime read from `data`: P 1-8, V 1-3, N 0-8, L 1-3, one of four
// forward shares, EP none or 1-8, dev or legacy.
RuntimeConfig DecodeRuntime(FuzzedDataProvider& data) {
  RuntimeConfig config;
  config.pipeline.stages = 1 + data.ConsumeIntegralInRange<std::int64_t>(0, 7);
  config.pipeline.virtual_stages = 1 + data.ConsumeIntegralInRange<std::int64_t>(0, 2);
  config.pipeline.microbatch_group_size = data.ConsumeIntegralInRange<std::int64_t>(0, 8);
  config.layers_per_stage = 1 + data.ConsumeIntegralInRange<std::int64_t>(0, 2);
  constexpr double kShares[] = {1.0 / 3.0, 0.25, 0.5, 0.9};
  config.forward_share = kShares[data.ConsumeIntegralInRange<int>(0, 3)];
  if (const std::int64_t ep = data.ConsumeIntegralInRange<std::int64_t>(0, 8); ep > 0) {
    config.expert_parallel_size = ep;
  }
  if (data.ConsumeBool()) config.path = RuntimePath::kLegacy;
  return config;
}

ScheduleTime TimeOf(const DynamicCpProblem& problem, const CompactSchedule& schedule,
                    const CostProfile& profile) {
  absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      problem.samples, schedule, profile,
      GpuTimeOptions{.max_seq_len_per_rank = problem.options.max_seq_len_per_rank});
  return time.ok() ? *std::move(time) : ScheduleTime{};
}

// OK if `config` runs some microbatch count on G ranks: CheckRuntimeConfig at
// a count its pipeline shape accepts whenever the shape is valid.
absl::Status RuntimeRunsSomeCount(const RuntimeConfig& config, std::int64_t total_gpus) {
  const PipelineShape& shape = config.pipeline;
  const std::int64_t group =
      shape.microbatch_group_size == 0 ? shape.stages : shape.microbatch_group_size;
  return CheckRuntimeConfig(config, total_gpus, shape.virtual_stages > 1 ? group : 0);
}

// What is wrong with cost_aware's answer to (`problem`, `profile`,
// `config`), if anything.
absl::Status CheckCostAware(const DynamicCpProblem& problem, const CostProfile& profile,
                            const RuntimeConfig& config) {
  const absl::StatusOr<CostAwareResult> result = ScheduleCostAware(
      problem.samples, problem.options, profile, CostAwareOptions{.runtime = config});
  const bool valid = IsValidBySpec(problem);
  if (!result.ok()) {
    if (valid) {
      const absl::Status runs = RuntimeRunsSomeCount(config, problem.options.total_gpus);
      if (!runs.ok() ? result.status() == runs
                     : result.status().code() == absl::StatusCode::kFailedPrecondition) {
        return absl::OkStatus();
      }
    } else if (result.status().code() == absl::StatusCode::kInvalidArgument) {
      return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat("gives ", result.status().ToString(), " for ",
                                            valid ? "a valid" : "an invalid", " problem"));
  }
  if (!valid) return absl::InternalError("accepts a problem outside the specification's limits");
  for (const Violation& violation :
       FindViolations(problem.samples, result->schedule, problem.options)) {
    if (violation.invariant == Invariant::kWorkCap) continue;
    return absl::InternalError(absl::StrCat("breaks invariant ",
                                            static_cast<int>(violation.invariant), " (",
                                            InvariantName(violation.invariant),
                                            "): ", violation.message));
  }
  if (problem.samples.empty()) return absl::OkStatus();
  const ScheduleTime time = TimeOf(problem, result->schedule, profile);
  if (time.step_seconds < time.bound_seconds * (1.0 - kSlack)) {
    return absl::InternalError(absl::StrCat("takes ", time.step_seconds,
                                            " s under the barrier, below its bound ",
                                            time.bound_seconds));
  }
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(result->schedule, time, config);
  if (!step.ok()) {
    return absl::InternalError(absl::StrCat("returns a schedule its runtime refuses: ",
                                            step.status().ToString()));
  }
  if (step->step_seconds != result->step_seconds) {
    return absl::InternalError(absl::StrCat("claims ", result->step_seconds,
                                            " s but its schedule takes ", step->step_seconds,
                                            " s"));
  }
  if (step->step_seconds < step->bound_seconds * (1.0 - kSlack)) {
    return absl::InternalError(absl::StrCat("takes ", step->step_seconds,
                                            " s, below the bound ", step->bound_seconds));
  }
  const absl::StatusOr<CompactSchedule> packing_aware =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  if (packing_aware.ok()) {
    const absl::StatusOr<RuntimeStep> upstream =
        MeasureRuntimeStep(*packing_aware, TimeOf(problem, *packing_aware, profile), config);
    if (upstream.ok() && step->step_seconds > upstream->step_seconds) {
      return absl::InternalError(absl::StrCat("takes ", step->step_seconds,
                                              " s, slower than packing-aware's ",
                                              upstream->step_seconds, " s"));
    }
  }
  const absl::StatusOr<CostAwareResult> again = ScheduleCostAware(
      problem.samples, problem.options, profile, CostAwareOptions{.runtime = config});
  if (!again.ok() || again->schedule != result->schedule) {
    return absl::InternalError("a second call returns another schedule");
  }
  return absl::OkStatus();
}

// What is wrong with the runtime step of `schedule` on `config`, if anything.
absl::Status CheckRuntimeStep(const DynamicCpProblem& problem, const CompactSchedule& schedule,
                              const CostProfile& profile, const RuntimeConfig& config) {
  if (schedule.microbatches.empty()) return absl::OkStatus();
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      problem.samples, schedule, profile,
      GpuTimeOptions{.max_seq_len_per_rank = problem.options.max_seq_len_per_rank});
  if (!time.ok()) return absl::InternalError(time.status().ToString());
  const absl::Status accepted = CheckRuntimeConfig(
      config, problem.options.total_gpus,
      static_cast<std::int64_t>(schedule.microbatches.size()));
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(schedule, *time, config);
  if (step.status() != accepted) {
    return absl::InternalError(absl::StrCat("the runtime step gives ", step.status().ToString(),
                                            " where the config check gives ",
                                            accepted.ToString()));
  }
  if (!step.ok()) {
    if (step.status().code() == absl::StatusCode::kInvalidArgument) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("refuses with ", step.status().ToString()));
  }
  const double slack = config.pipeline.stages == 1 ? 0.0 : kSlack;
  if (step->busiest_rank_seconds > step->bound_seconds ||
      step->bound_seconds > step->step_seconds * (1.0 + slack)) {
    return absl::InternalError(absl::StrCat(
        "busiest ", step->busiest_rank_seconds, " s, bound ", step->bound_seconds,
        " s and step ", step->step_seconds, " s are out of order"));
  }
  if (config.pipeline.stages > 1) return absl::OkStatus();
  RuntimeConfig barrier = config;
  barrier.path = RuntimePath::kLegacy;
  const absl::StatusOr<RuntimeStep> legacy = MeasureRuntimeStep(schedule, *time, barrier);
  if (!legacy.ok() || step->step_seconds > legacy->step_seconds) {
    return absl::InternalError("without pipelining the step exceeds the barrier model's");
  }
  if (config.layers_per_stage == 1 && legacy->step_seconds != time->step_seconds) {
    return absl::InternalError(absl::StrCat("the legacy step ", legacy->step_seconds,
                                            " s is not the barrier model's ",
                                            time->step_seconds, " s"));
  }
  return absl::OkStatus();
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider provider(data, size);
  const DynamicCpProblem problem = DecodeDynamicCpProblem(provider);
  const CostProfile profile = DecodeProfile(provider);
  const RuntimeConfig config = DecodeRuntime(provider);
  const std::string where =
      absl::StrCat(FormatProblem(problem), " profile=", profile.name,
                   " runtime=", DescribeRuntime(config), " N=",
                   config.pipeline.microbatch_group_size);
  if (const absl::Status status = CheckCostAware(problem, profile, config); !status.ok()) {
    ReportAndAbort(kTarget, "cost_aware breaks a promise", status, where);
  }
  if (!IsValidBySpec(problem)) return;
  const absl::StatusOr<CompactSchedule> packing_aware =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  const absl::StatusOr<CostAwareResult> cost_aware = ScheduleCostAware(
      problem.samples, problem.options, profile, CostAwareOptions{.runtime = config});
  for (const CompactSchedule* schedule :
       {packing_aware.ok() ? &*packing_aware : nullptr,
        cost_aware.ok() ? &cost_aware->schedule : nullptr}) {
    if (schedule == nullptr) continue;
    if (const absl::Status status = CheckRuntimeStep(problem, *schedule, profile, config);
        !status.ok()) {
      ReportAndAbort(kTarget, "the runtime step model breaks a promise", status, where);
    }
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

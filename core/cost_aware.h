// The cost-aware dynamic-CP scheduler: a schedule Megatron-LM's runtime can
// run, as fast as it can find under a measured cost profile.
//
// What it guarantees. For a valid problem and profile, its schedule keeps
// every invariant of docs/specification.md but the len^2 work cap (5): no
// empty rank, each sample once on one contiguous run, a power-of-two CP size
// or G, the token budget, cp_min and min_cp_size, a microbatch count that is
// a multiple of vpp_group, max_num_seqs, and the runtime's groups (11). It
// is never slower under the profile than the packing-aware scheduler's
// schedule where that one is runnable (it keeps the faster of the two, and
// says which). Where packing-aware fails or is refused (invariant 11), it
// still returns a schedule when it finds one, and says so. The same input
// gives the same schedule, bit for bit.
//
// What it optimises: the step time of docs/cost_model.md, the sum over
// microbatches of the slowest rank (MeasureScheduleTime, core/gpu_time.h).
// Under a measured profile that is not len^2: a rank's tokens cost
// non-attention time, and a short sample on a wide group pays the ring's
// per-step cost on tiny chunks. So the choice that matters is each
// sample's CP size and which samples share a microbatch, not filling wide
// groups with short samples.
//
// How. It plans a schedule for each of a series of targets T, a time per
// microbatch (core/cost_aware_plan.h: each sample takes the smallest
// runtime size at which it alone fits under T, samples of a size stack into
// groups under T and the token budget, groups pack slowest first into
// microbatches of runtime blocks, and free ranks are filled by splitting or
// widening groups), and keeps the fastest plan, the first on ties. The
// targets: +infinity (tokens alone), then 0.8, 0.8^2, ... times the slowest
// sample alone at its smallest size, at most 24, down to the first below
// the longest sample's fastest time alone (core/cost_aware_targets.h); the
// descent stops at the first target that finds nothing faster once a plan
// exists (below the best target, samples only widen further). Batches of at
// most 1024 samples x runtime sizes also try +infinity with every sample on
// at least each wider size (with few samples, one rank's budget, not the
// time, decides the count). Where the best plan came from a finite target T, it tries T x
// 0.8^-0.5 and T x 0.8^0.5. Then it keeps the faster of that plan and
// packing-aware's runnable schedule. Where no target reaches a multiple of
// vpp_group, it falls back to spreading the samples over such counts
// (core/cost_aware_fallback.h).
//
// What it does not attempt: a proven optimum (the exhaustive oracle,
// oracle/exhaustive_time_oracle.h, measures the gap on tiny instances);
// moving samples between microbatches after they are packed; modelling
// communication beyond what the profile models (the shipped profiles are
// compute only); the len^2 work cap, which a measured profile replaces.
//
// Time: a plan per target tried (5 on 8192 samples at G = 512, up to about
// 30 on small batches), each O(n log n + groups x free ranks) (and, for a
// microbatch the greedy fill cannot fill, at most 256 moves of search),
// plus packing-aware's own run. On 8192 samples at G = 512 about 11 ms of CPU
// against packing-aware's 1.5 ms (docs/cost_aware.md).

#ifndef DCPSCHED_CORE_COST_AWARE_H_
#define DCPSCHED_CORE_COST_AWARE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/runtime_step.h"
#include "core/types.h"

namespace dcpsched {

struct CostAwareOptions {
  // The runtime whose step it minimises (core/runtime_step.h): by default
  // Megatron-LM dev's, without pipelining.
  RuntimeConfig runtime;
  // Also run packing-aware and keep its schedule where it is runnable and
  // not slower. Off only to study the planner alone: the guarantee of never
  // being slower than packing-aware then no longer holds.
  bool keep_packing_aware_if_faster = true;
};

// Which schedule the scheduler returned.
enum class CostAwareSource {
  kPlanned,       // its own plan
  kPackingAware,  // packing-aware's schedule, runnable and not slower
};

// "planned" or "packing_aware".
absl::string_view CostAwareSourceName(CostAwareSource source);

struct CostAwareResult {
  CompactSchedule schedule;
  CostAwareSource source = CostAwareSource::kPlanned;
  // One line: why this schedule, e.g. "planned: 412.3 ms against
  // packing-aware's 451.0 ms", or why packing-aware's could not be used.
  std::string reason;
  // The schedule's step under the profile and the runtime.
  double step_seconds = 0.0;
  // The same step in full: each rank's finish, the bubble and the bound.
  RuntimeStep runtime_step;
  // The per-rank token budget its microbatches were packed under: at most
  // max_seq_len_per_rank.
  std::int64_t token_budget = 0;
  // Packing-aware's step under the same runtime, for its schedule as it
  // returns it, where that schedule is runnable.
  std::optional<double> packing_aware_step_seconds;
};

// Schedules `samples` under `profile`. InvalidArgument for an invalid
// problem (ValidateDynamicCpProblem) or profile (ValidateCostProfile).
// FailedPrecondition, saying what to change, where it finds no runnable
// schedule: fewer samples than vpp_group (every microbatch needs one), or no
// split of the samples into a multiple of vpp_group microbatches that the
// token budget, max_num_seqs and the runtime's groups allow.
absl::StatusOr<CostAwareResult> ScheduleCostAware(absl::Span<const Sample> samples,
                                                  const DynamicCpOptions& options,
                                                  const CostProfile& profile,
                                                  const CostAwareOptions& cost_aware = {});

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COST_AWARE_H_

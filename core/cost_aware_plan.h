// One cost-aware schedule for one target time: the cost-aware scheduler
// (core/cost_aware.h) makes one of these per target it tries and keeps the
// fastest.
//
// For a target T (seconds per microbatch), PlanForTarget:
//  1. gives each sample the smallest runtime size (from sizes()[smallest_size]
//     up) at which it alone takes at most T on each rank (a long sample widens until it fits under T; a
//     short one keeps its smallest size, since a wide group of tiny chunks
//     pays the ring's per-step cost), or, where none does, the size at which
//     it is fastest;
//  2. stacks the samples of each size, slowest first, into CP groups: the
//     best fit by the tokens left (RoomIndex, core/room_index.h), then the
//     newest groups of its size, then groups of a larger size with room; a
//     group takes a sample while its ranks stay within the token budget,
//     max_num_seqs and T;
//  3. packs the groups, slowest first, into microbatches of G ranks (first
//     fit by width), so that slow groups share microbatches: a
//     microbatch takes as long as its slowest group;
//  4. fills each microbatch's free ranks by the move that leaves it fastest:
//     splitting a group of several samples into two, or doubling a group's
//     size where the runtime has the doubled size; where those moves, made
//     greedily, leave free ranks that no group fits (G not a power of two),
//     the fastest fill a bounded search over the same moves finds; where
//     none, its samples go on all G ranks, in as many microbatches as the
//     token budget and max_num_seqs need;
//  5. splits microbatches (the one with the most samples first) until their
//     number is a multiple of vpp_group: into halves by ranks, or, where a
//     half then has to go on all G ranks, into its fastest group and the
//     rest, if that makes fewer microbatches.
// Groups are laid out largest first, so each starts at a multiple of its
// size: every group is one of the runtime's aligned blocks (invariant 11).
// Each step is a function of core/cost_aware_plan_steps.h, which says
// exactly what it does.

#ifndef DCPSCHED_CORE_COST_AWARE_PLAN_H_
#define DCPSCHED_CORE_COST_AWARE_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/sample_costs.h"

namespace dcpsched {

// One CP group being planned: `size` ranks, each holding `members`
// (indices into the batch) in order, and each rank's tokens and seconds.
struct PlannedGroup {
  std::int64_t size = 0;
  // Index of `size` in SampleCosts::sizes().
  std::size_t size_index = 0;
  std::vector<std::size_t> members;
  double tokens = 0.0;
  double attention = 0.0;
  double seconds = 0.0;
};

// One microbatch being planned: groups whose sizes add up to at most G.
struct PlannedMicrobatch {
  std::vector<PlannedGroup> groups;
};

struct Plan {
  std::vector<PlannedMicrobatch> microbatches;
  // Sum over microbatches of the slowest group's seconds.
  double step_seconds = 0.0;
};

// The plan for target `target_seconds` (> 0; +infinity packs by tokens
// alone), no sample on fewer than sizes()[smallest_size] ranks (0: each at
// its own smallest; larger: wider groups, whose pooled budget packs samples
// that one rank's budget cannot pair). FailedPrecondition when the
// microbatches cannot be split to a multiple of vpp_group (too few samples
// to split further).
absl::StatusOr<Plan> PlanForTarget(SampleCosts& costs, double target_seconds,
                                   std::size_t smallest_size = 0);

// The plan with exactly the samples of `microbatch_members`, one microbatch
// each, each packed and filled as above (a microbatch the token budget or
// max_num_seqs cannot hold on all G ranks is split): the fallback when no
// target reaches a multiple of vpp_group.
Plan PlanForPartition(SampleCosts& costs,
                      const std::vector<std::vector<std::size_t>>& microbatch_members);

// The plan as a compact schedule: groups largest first from rank 0, ids in
// member order, microbatches in plan order.
CompactSchedule PlanToCompact(const SampleCosts& costs, const Plan& plan);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COST_AWARE_PLAN_H_

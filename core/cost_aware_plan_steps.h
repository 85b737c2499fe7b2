// The steps of the cost-aware planner (core/cost_aware_plan.h), one
// function each, so that properties (properties/
// cost_aware_plan_steps_properties.cc) can hold each step to what it says
// here: a plan's validity does not show which step chose badly. Only the
// planner and its properties use these; callers want PlanForTarget.
//
// Every group's tokens, attention and seconds are its members' sums, added
// in member order, as MeasureScheduleTime adds them.

#ifndef DCPSCHED_CORE_COST_AWARE_PLAN_STEPS_H_
#define DCPSCHED_CORE_COST_AWARE_PLAN_STEPS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/cost_aware_plan.h"
#include "core/sample_costs.h"

namespace dcpsched::plan_steps {

// How many groups, from the best fit by tokens up, a sample tries before it
// opens a group of its own: a bound keeps stacking O(n log n).
inline constexpr std::size_t kStackTries = 2;
// How many of a size's most recently opened groups a sample tries next:
// where the target, not the tokens, limits a group, the best fit by tokens
// is the slowest group, and the newest are the emptiest.
inline constexpr std::size_t kRecentGroups = 4;
// How many microbatches, from the first with a free rank, a group may try.
inline constexpr std::size_t kMicrobatchWindow = 64;
// How many moves the search for a fill tries where the greedy moves fail.
inline constexpr std::size_t kFillSearchMoves = 256;

// The slowest group's seconds (0 for no group).
double MicrobatchSeconds(const PlannedMicrobatch& microbatch);

// Step 1: per sample, the index of its size for `target`: the first from
// max(first_size, floor) up at which it alone takes at most `target`, or,
// where none does, the first of the fastest from there up.
std::vector<std::size_t> ChooseSizes(SampleCosts& costs, double target, std::size_t floor);

// Step 2: `members` stacked into groups. Samples are placed one by one in
// stacking order: size index (of `sizes`) descending, then seconds alone at
// that size descending, then length descending, then index ascending. A
// sample goes to the first group that can take it, among: up to kStackTries
// open groups of its size from the best fit by tokens up (RoomIndex), the
// kRecentGroups groups of its size opened last, then, size by size, up to
// kStackTries of each larger size; else it opens a group of its own. A group
// takes a sample while its tokens per rank stay within the budget, its
// members within max_num_seqs, and (for a finite target) its seconds within
// `target`. Groups come in the order they were opened, members in the
// order they came. `presorted`: `members` already come in stacking order
// for the samples at their first size, which saves sorting them again.
std::vector<PlannedGroup> StackGroups(SampleCosts& costs, std::vector<std::size_t> members,
                                      const std::vector<std::size_t>& sizes, double target,
                                      bool presorted);

// Step 3: `groups` in order of seconds descending, then size descending,
// then their order in `groups`; each to the first microbatch, among the
// kMicrobatchWindow from the first with a free rank, that has room for its
// size, else to a new microbatch.
std::vector<PlannedMicrobatch> PackMicrobatches(std::vector<PlannedGroup> groups,
                                                std::int64_t total_gpus);

// `group` (>= 2 members) as two groups of its size: members by attention
// descending (stable), the first to the first half, each next to the
// second half while that one is empty or faster than the first.
std::pair<PlannedGroup, PlannedGroup> SplitGroup(SampleCosts& costs, const PlannedGroup& group);

// Step 4, greedy: while `microbatch` has free ranks, makes the move that
// uses no more ranks than are free and is least by (the microbatch's
// seconds after it, its group's seconds after minus before, split before
// widen, group index): splitting a group of >= 2 members (SplitGroup; the
// second half goes last), or widening a group to twice its size where the
// runtime has that size. False, leaving the moves made, where no move fits.
bool FillByMoves(SampleCosts& costs, PlannedMicrobatch& microbatch);

// Step 4, searched: the fastest way to leave `microbatch` with no free rank
// by splits, widenings and moving one sample out of a group of >= 2 into a
// group of its own at size max(first_size, floor), found depth first within
// kFillSearchMoves moves (the first found on ties); none where no sequence
// of moves fills it within that bound.
std::optional<PlannedMicrobatch> FillBySearch(SampleCosts& costs, std::size_t floor,
                                              const PlannedMicrobatch& microbatch);

// The samples of `microbatch`, group by group in member order, on all G
// ranks: each to the last microbatch while the token budget and
// max_num_seqs let it, else to a new one.
std::vector<PlannedMicrobatch> OnAllRanks(SampleCosts& costs,
                                          const PlannedMicrobatch& microbatch);

// Step 4 for one microbatch: as it is when it has no free rank; else
// FillByMoves's microbatch where that fills it; else FillBySearch's; else
// OnAllRanks of the microbatch as FillByMoves left it.
std::vector<PlannedMicrobatch> Fill(SampleCosts& costs, std::size_t floor,
                                    PlannedMicrobatch microbatch);

// `microbatch` (>= 2 members) in two: one group is split by SplitGroup;
// more groups go, slowest first (stable), the first to the first half,
// each next to the second while it is empty or has fewer ranks.
std::pair<PlannedMicrobatch, PlannedMicrobatch> SplitMicrobatch(SampleCosts& costs,
                                                                PlannedMicrobatch microbatch);

// `microbatch` (>= 2 groups) as the rest and its group g alone.
std::pair<PlannedMicrobatch, PlannedMicrobatch> PeelGroup(PlannedMicrobatch microbatch,
                                                          std::size_t g);

// Step 5: while the number of microbatches is not a multiple of
// vpp_group, the first of those with the most members (>= 2) is replaced by
// its halves (SplitMicrobatch), each filled (Fill); where that makes more
// than two microbatches, each PeelGroup of it, filled, is tried instead,
// and one is kept where it makes fewer microbatches, or as many and
// strictly faster in sum. The first part takes the microbatch's place, the
// rest go last. FailedPrecondition where every microbatch holds one sample.
absl::Status AlignToVpp(SampleCosts& costs, std::size_t floor,
                        std::vector<PlannedMicrobatch>& microbatches);

// The plan: `microbatches` slowest first (stable), and its step time.
Plan Finish(std::vector<PlannedMicrobatch> microbatches);

}  // namespace dcpsched::plan_steps

#endif  // DCPSCHED_CORE_COST_AWARE_PLAN_STEPS_H_

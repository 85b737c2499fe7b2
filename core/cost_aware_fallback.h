// The cost-aware scheduler's fallback (core/cost_aware.h) where no target it
// tries reaches a microbatch count that is a multiple of vpp_group.
//
// Why it is needed. A plan for a target (core/cost_aware_plan.h) splits its
// microbatches until their number is a multiple of vpp_group, and fails
// when every microbatch already holds one sample. Some batches admit a
// runnable schedule all the same, at another count: at G = 10 with
// vpp_group 4 and max_num_seqs 1, for example, the targets may all end at
// counts of one sample each that are not multiples of 4, while six samples
// spread over four microbatches fit.
//
// What it does. For each count that is a multiple of vpp_group, from the
// most the samples allow (one sample per microbatch) down to the fewest the
// token budget allows (the batch's tokens over G x max_seq_len_per_rank,
// rounded up), it spreads the samples over that many microbatches in two
// ways and plans each microbatch (PlanForPartition): longest first, each to
// the one with the fewest tokens so far; and the longest each alone, the
// rest together in one (short samples fill the ranks that long ones leave:
// at G = 5 under max_num_seqs 1, two 5502-token samples on mslpr 4096 and
// three one-token ones fit only as 5502 + 1 + 1 + 1 and 5502). It keeps the
// fastest plan (the first, from the most microbatches down, the balanced
// spread first, on ties) whose count is still a multiple (a microbatch that the budget or max_num_seqs cannot hold
// is split, which can break the multiple). Where the most and the fewest
// are 32 or more multiples apart, it steps by a sixteenth of the distance:
// about 17 counts.
//
// What it does not attempt: other spreads than longest-first to the
// lightest, or a count the stride skips.

#ifndef DCPSCHED_CORE_COST_AWARE_FALLBACK_H_
#define DCPSCHED_CORE_COST_AWARE_FALLBACK_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/cost_aware_plan.h"
#include "core/sample_costs.h"

namespace dcpsched {

// The samples (indices into the batch) spread over `count` (>= 1)
// microbatches: longest first (ties by index), each to the microbatch with
// the fewest tokens so far (ties: the first). Each microbatch lists its
// samples in the order they came.
std::vector<std::vector<std::size_t>> SpreadOverMicrobatches(const SampleCosts& costs,
                                                             std::int64_t count);

// The samples in `count` (>= 1) microbatches: the count - 1 longest (ties
// by index) each alone, from the second microbatch on, and every other
// sample in the first, longest first.
std::vector<std::vector<std::size_t>> SpreadLongestAlone(const SampleCosts& costs,
                                                         std::int64_t count);

// The fastest plan over the counts and spreads above, or none where no
// count yields a multiple of vpp_group (or the samples are fewer than the
// fewest count).
std::optional<Plan> PlanOverMicrobatchCounts(SampleCosts& costs);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COST_AWARE_FALLBACK_H_

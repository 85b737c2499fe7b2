// The CP groups Megatron-LM's runtime has: which schedules it can run.
//
// A schedule is a plan; Megatron-LM's runtime executes it with process groups
// it created once, at start-up. With dynamic context parallelism
// (`initialize_model_parallel(..., dynamic_context_parallel=True)`, dev's
// `create_dynamic_dp_cp_groups`) it creates, for every size 2^i with
// i < floor(log2(G)) and 2^i >= min_cp_size, the aligned blocks of ranks
// [k * 2^i, (k + 1) * 2^i) (the last one cut at G), and it has the whole
// DPxCP group of G ranks. For each microbatch, a rank takes as its CP size c
// the number of ranks that hold its first sample, asks the runtime for the
// group of size c that holds it (all G ranks when c is G; a size never
// created raises KeyError), and splits every sample it holds over that group.
//
// So a rank can run its microbatch only if that group exists and each sample
// on the rank is held by exactly that group's ranks: the specification's
// invariant 11 (runtime groups). A schedule can keep invariants 1-10 and still
// break it: at G = 12 the runtime creates sizes 1, 2 and 4 only, so a sample on
// 8 ranks cannot run; a group of 4 on ranks 2-5 is not one the runtime has.
//
// The runtime refuses an odd G at start-up, before any schedule; that is not a
// property of a schedule, and the rule here is applied as written for any G.

#ifndef DCPSCHED_CORE_RUNTIME_GROUPS_H_
#define DCPSCHED_CORE_RUNTIME_GROUPS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// A run of ranks [first_rank, first_rank + size).
struct RankBlock {
  std::int64_t first_rank = 0;
  std::int64_t size = 0;

  friend bool operator==(const RankBlock&, const RankBlock&) = default;
};

// True if the runtime has CP groups of `size` ranks for options.total_gpus
// and options.min_cp_size: size is G, or a power of two below 2^floor(log2 G)
// and at least min_cp_size.
bool RuntimeHasGroupSize(std::int64_t size, const DynamicCpOptions& options);

// The group the runtime hands rank `rank` (in [0, G)) when its CP size is
// `cp_size`: all G ranks when cp_size is G; the created block of cp_size ranks
// that holds the rank (cut at G); nullopt when the runtime has no groups of
// that size, or when the rank is not in [0, G) (a microbatch wider than G).
std::optional<RankBlock> RuntimeGroupOf(std::int64_t rank, std::int64_t cp_size,
                                        const DynamicCpOptions& options);

// The sizes the runtime creates, as messages list them:
// "1, 2, 4 and 12 (all ranks)".
std::string RuntimeGroupSizes(const DynamicCpOptions& options);

// Why the runtime cannot run the rank(s) `where` names ("microbatch 0 ranks
// 0-7: each"), whose first sample `first_id` is held by `cp_size` ranks
// (`held_by`, e.g. "ranks 0-7"), when it creates no group of that size: one
// line naming the group and the sizes it does create.
std::string UncreatedGroupMessage(const std::string& where, SampleId first_id,
                                  const std::string& held_by, std::int64_t cp_size,
                                  const DynamicCpOptions& options);

// Why the runtime cannot run the rank(s) `where` names when they are at or
// past G: it has no group for them.
std::string PastTheLastRankMessage(const std::string& where,
                                   const DynamicCpOptions& options);

// Why the runtime cannot run the rank(s) `where` names, whose runtime group of
// `cp_size` ranks (from their first sample `first_id`) is `group`, when sample
// `id` on them is held by `held_by` instead.
std::string MisplacedSampleMessage(const std::string& where, SampleId first_id,
                                   std::int64_t cp_size, const RankBlock& group,
                                   SampleId id, const std::string& held_by);

// Invariant 11 for a schedule in which every sample is held by exactly one CP
// group, as the schedulers build them: OK if the runtime can run every
// group; otherwise FailedPrecondition naming invariant 11, the first group it
// cannot run, the sizes it creates and what the user can change. The
// schedulers return it where upstream returns a schedule its runtime cannot
// run. Linear in the number of groups.
absl::Status CheckSchedulerOutputRunnable(const CompactSchedule& schedule,
                                          const DynamicCpOptions& options,
                                          const char* scheduler);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_RUNTIME_GROUPS_H_

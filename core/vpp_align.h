// Virtual-pipeline alignment of a dynamic-CP schedule (upstream's
// align_sample_id_groups).
//
// With interleaved pipeline parallelism the number of microbatches must be a
// multiple of microbatch_group_size_per_vp_stage. Alignment splits
// microbatches at a CP-group boundary near the middle and widens the CP
// groups of each half until it covers all G ranks again, so no sample is
// dropped or duplicated.

#ifndef DCPSCHED_CORE_VPP_ALIGN_H_
#define DCPSCHED_CORE_VPP_ALIGN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// Returns `schedule` with microbatches split until their number is a multiple
// of `vpp_group` (>= 1). Every microbatch's groups must tile the same number
// of ranks (>= 1), and no group may be empty. Works on groups, never on
// per-rank lists: its cost is linear in the size of the compact form. A split
// half is returned in the form CompactFromRanks gives (no two neighbouring
// groups hold equal lists). Errors: InvalidArgument for a malformed schedule
// or vpp_group < 1; FailedPrecondition when no microbatch can be split any
// more, or when widening a half would need more ranks than it has (upstream
// then hangs or returns a microbatch wider than G).
absl::StatusOr<CompactSchedule> AlignToVppGroup(CompactSchedule schedule,
                                                std::int64_t vpp_group);

// The same on the per-rank form (every microbatch the same number of ranks,
// none empty): ExpandSchedule of the alignment of CompactFromRanks(schedule).
absl::StatusOr<Schedule> AlignToVppGroup(Schedule schedule,
                                         std::int64_t vpp_group);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_VPP_ALIGN_H_

// Random damage done to a schedule, so that checkers are judged on schedules
// that break invariants, not only on the valid ones the schedulers return.
//
// Each damage is one a hand-edited file, a buggy scheduler or a bad merge
// could make: an id dropped from a rank or a microbatch, added to a run of
// ranks (an unknown id, a sample of another microbatch, one already there),
// moved, its run widened or narrowed by a rank, the shortest sample of a
// microbatch moved onto its busiest rank (over the token budget, and over
// the work cap only where the cap's exact value decides), a list emptied,
// shuffled or repeated, ranks swapped, dropped or added, the CP groups
// misaligned (every list shifted), nested (a sample spread onto the next
// group) or merged into a size the runtime never creates, microbatches
// dropped, repeated, swapped or added empty. The options change too, within
// their limits or just past them: max_num_seqs around the busiest rank's
// count, vpp_group, min_cp_size, a smaller max_seq_len_per_rank.

#ifndef DCPSCHED_PROPERTIES_SCHEDULE_DAMAGE_H_
#define DCPSCHED_PROPERTIES_SCHEDULE_DAMAGE_H_

#include <ostream>
#include <string>
#include <vector>

#include "core/types.h"
#include "rapidcheck.h"

namespace dcpsched::properties {

struct DamagedSchedule {
  Schedule schedule;
  DynamicCpOptions options;
  std::vector<std::string> damages;  // what was done, in order, for counterexamples
};

// `schedule` of `samples` under `options`, with one to four damages done to
// it, or none in one case of sixteen (a checker must also pass what is
// intact).
rc::Gen<DamagedSchedule> GenDamagedSchedule(const std::vector<Sample>& samples,
                                            const Schedule& schedule,
                                            const DynamicCpOptions& options);

void showValue(const DamagedSchedule& damaged, std::ostream& os);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_SCHEDULE_DAMAGE_H_

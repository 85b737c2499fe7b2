// The schedule checker (core/checker.h) judged against the reference
// checker (oracle/reference_checker.h), on any schedule: real, damaged or
// read from a file.
//
// The schedulers' own schedules keep every invariant, so on them a checker
// that misses a violation, or reports one at the wrong place, goes unseen.
// This check compares every finding instead: the property tests run it on
// real schedules with random damage done to them (properties/
// schedule_damage.h), and the fuzz target fuzz_schedule_file on whatever
// schedule a file holds.

#ifndef DCPSCHED_PROPERTIES_CHECKER_REFERENCE_CHECK_H_
#define DCPSCHED_PROPERTIES_CHECKER_REFERENCE_CHECK_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched::properties {

// OK when FindViolations(samples, schedule, options) finds exactly the
// reference checker's findings (invariant, microbatch, rank and ids, as
// multisets), lists them in invariant, then microbatch, then rank order,
// each with a message, and CheckSchedule returns OK exactly when there is
// none and otherwise the first of them, formatted "invariant N (name): ...".
// Otherwise an error that names what only one of the two found.
absl::Status CheckFindViolationsMatchesReference(absl::Span<const Sample> samples,
                                                 const Schedule& schedule,
                                                 const DynamicCpOptions& options);

// On the compact form: a microbatch whose groups are no compact form (judged
// here: the first starts past rank 0, a group has size < 1, a gap or an
// overlap, a group ending past the largest rank number, or equal
// neighbouring lists) is exactly one finding located in it, invariant 1 at
// no rank, with no ids and a message that names its first defect: the
// checker does not read it further.
absl::Status CheckMalformedMicrobatchesAreReportedOnce(absl::Span<const Sample> samples,
                                                       const CompactSchedule& schedule,
                                                       const DynamicCpOptions& options);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_CHECKER_REFERENCE_CHECK_H_

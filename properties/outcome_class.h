// The kind of outcome a scheduler gave, as one short label.
//
// The exhaustive check (tests/exhaustive_check.cc) counts its problems by
// outcome, per scheduler: a schedule, or each kind of refusal the
// specification names ("When each scheduler returns FailedPrecondition",
// "Valid input"), so a report says how many problems of a set end in, say,
// an upstream schedule its runtime cannot run (invariant 11) rather than
// only "FailedPrecondition". python/dcpsched/conformance/exhaustive.py
// classifies dcpsched's Python errors with the same labels, from the same
// message prefixes.

#ifndef DCPSCHED_PROPERTIES_OUTCOME_CLASS_H_
#define DCPSCHED_PROPERTIES_OUTCOME_CLASS_H_

#include <string>

#include "absl/status/status.h"

namespace dcpsched::properties {

// "schedule" for OK; otherwise the status code's name and the kind its
// message names, e.g. "FailedPrecondition: upstream returns a schedule its
// runtime cannot run (invariant 11)"; a message of no listed kind gives
// "<code>: other" (a new kind of refusal shows up in the counts, not
// hidden under a known one).
std::string OutcomeClass(const absl::Status& status);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_OUTCOME_CLASS_H_

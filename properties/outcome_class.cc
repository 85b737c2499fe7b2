#include "properties/outcome_class.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace dcpsched::properties {
namespace {

struct Kind {
  absl::StatusCode code;
  absl::string_view message_part;  // a part of the message that names the kind
  absl::string_view label;
};

// The kinds, each by a part of its message that no other kind's has
// (core/validate.cc, core/packing_aware.cc, core/legacy.cc,
// core/vpp_align.cc, core/dp_balanced.cc, core/runtime_groups.cc).
constexpr Kind kKinds[] = {
    {absl::StatusCode::kFailedPrecondition, "upstream returns a schedule its runtime cannot run",
     "upstream returns a schedule its runtime cannot run (invariant 11)"},
    {absl::StatusCode::kFailedPrecondition, "packing-aware fill step",
     "packing-aware fill step past the last rank (upstream IndexError)"},
    {absl::StatusCode::kFailedPrecondition, "legacy fill step: there should be",
     "legacy fill step finds no group (upstream AssertionError)"},
    {absl::StatusCode::kFailedPrecondition, "legacy fill step: widening",
     "legacy fill step past the last rank (upstream IndexError)"},
    {absl::StatusCode::kFailedPrecondition, "upstream loops forever",
     "VPP alignment: upstream loops forever"},
    {absl::StatusCode::kFailedPrecondition, "upstream returns such a microbatch",
     "VPP alignment: upstream returns a microbatch wider than G"},
    {absl::StatusCode::kFailedPrecondition, "no tail microbatch has enough ids to split",
     "VPP alignment: no microbatch left to split (upstream AssertionError)"},
    {absl::StatusCode::kFailedPrecondition, "cannot be split again",
     "VPP alignment: split group not decreasing (upstream AssertionError)"},
    {absl::StatusCode::kFailedPrecondition, "dp_balanced: not enough samples to move",
     "dp_balanced: not enough samples to move (upstream AssertionError)"},
    {absl::StatusCode::kInvalidArgument, "requires CP size",
     "a sample needs more than G ranks"},
    {absl::StatusCode::kInvalidArgument, "min_cp_size is", "min_cp_size is not a power of two <= G"},
    {absl::StatusCode::kInvalidArgument, "the legacy scheduler takes no cap",
     "legacy takes no max_num_seqs"},
    {absl::StatusCode::kInvalidArgument, "more than one packed sequence holds",
     "dp_balanced: a sample longer than mslpr * cp_size"},
};

}  // namespace

std::string OutcomeClass(const absl::Status& status) {
  if (status.ok()) return "schedule";
  const std::string code = absl::StatusCodeToString(status.code());
  for (const Kind& kind : kKinds) {
    if (status.code() == kind.code && absl::StrContains(status.message(), kind.message_part)) {
      return absl::StrCat(code, ": ", kind.label);
    }
  }
  return absl::StrCat(code, ": other");
}

}  // namespace dcpsched::properties

// Fuzz target: the legacy bucket scheduler keeps the specification's invariants and
// equals the reference oracle.
//
// On a decoded problem (fuzz_input.h): inside the specification's "Valid input" (judged by
// IsValidBySpec), the legacy schedule passes the schedule checker or the
// scheduler fails with FailedPrecondition, as upstream does, or, with
// max_num_seqs set (a cap the legacy scheduler does not take), it fails with
// InvalidArgument; outside, it fails with InvalidArgument. Valid or not, it equals the oracle's legacy
// schedule, or both fail with the same status code.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/legacy.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/problem_text.h"
#include "properties/problem_checks.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_legacy";

// Outside the specification's limits the legacy scheduler must fail with InvalidArgument.
absl::Status CheckInvalidIsRejected(const DynamicCpProblem& problem) {
  const absl::Status status = ScheduleLegacy(problem.samples, problem.options).status();
  if (status.code() == absl::StatusCode::kInvalidArgument) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("ScheduleLegacy gives ", status.ToString(),
                                          " for an invalid problem, not INVALID_ARGUMENT"));
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider provider(data, size);
  const DynamicCpProblem problem = DecodeDynamicCpProblem(provider);
  if (IsValidBySpec(problem)) {
    if (const absl::Status status = properties::CheckLegacyKeepsInvariants(problem); !status.ok()) {
      ReportAndAbort(kTarget, "legacy breaks a property", status, FormatProblem(problem));
    }
    if (!problem.options.max_num_seqs.has_value()) {
      if (const absl::Status status = properties::CheckUnrunnableIsRefused(problem, true);
          !status.ok()) {
        ReportAndAbort(kTarget, "legacy does not refuse exactly the unrunnable schedules", status,
                       FormatProblem(problem));
      }
    }
  } else if (const absl::Status status = CheckInvalidIsRejected(problem); !status.ok()) {
    ReportAndAbort(kTarget, "legacy mishandles an invalid problem", status, FormatProblem(problem));
  }
  if (const absl::Status status = properties::CheckLegacyMatchesReference(problem); !status.ok()) {
    ReportAndAbort(kTarget, "legacy differs from the oracle", status, FormatProblem(problem));
  }
  if (const absl::Status status = properties::CheckLegacyCompactMatchesPerRank(problem);
      !status.ok()) {
    ReportAndAbort(kTarget, "legacy compact schedule is not the per-rank schedule", status,
                   FormatProblem(problem));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

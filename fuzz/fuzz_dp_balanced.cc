// Fuzz target: the dp_balanced core equals the reference oracle.
//
// On a decoded dp_balanced problem (fuzz_input.h), valid or not, the core's
// schedule equals the oracle's exactly, or both fail with the same status
// code.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_input.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_dp_balanced";

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider provider(data, size);
  const properties::DpBalancedProblem problem = DecodeDpBalancedProblem(provider);
  if (const absl::Status status = properties::CheckDpBalancedMatchesOracle(problem); !status.ok()) {
    ReportAndAbort(kTarget, "dp_balanced differs from the oracle", status,
                   FormatDpBalancedProblem(problem));
  }
  if (const absl::Status status = properties::CheckDpBalancedCompactMatchesPerRank(problem);
      !status.ok()) {
    ReportAndAbort(kTarget, "dp_balanced compact schedule is not the per-rank schedule", status,
                   FormatDpBalancedProblem(problem));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

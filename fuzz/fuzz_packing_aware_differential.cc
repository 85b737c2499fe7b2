// Fuzz target: the packing-aware core equals the reference oracle.
//
// On a decoded problem (fuzz_input.h), valid or not, the core's step and
// schedule equal the oracle's exactly (ids, lengths, leftovers, exec times
// bit for bit), or both fail with the same status code.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/problem_text.h"
#include "properties/problem_checks.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_packing_aware_differential";

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider provider(data, size);
  const DynamicCpProblem problem = DecodeDynamicCpProblem(provider);
  if (const absl::Status status = properties::CheckStepMatchesOracle(problem); !status.ok()) {
    ReportAndAbort(kTarget, "step differs from the oracle", status, FormatProblem(problem));
  }
  if (const absl::Status status = properties::CheckScheduleMatchesOracle(problem); !status.ok()) {
    ReportAndAbort(kTarget, "schedule differs from the oracle", status, FormatProblem(problem));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

// Fuzz target: problem text parses without crashing and round-trips.
//
// The input bytes are the one-line form of a problem (io/problem_text.h).
// ParseProblem must not crash; when it succeeds, FormatProblem then
// ParseProblem gives the same problem.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/problem_text.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_problem_text";

absl::Status CheckRoundTrip(const DynamicCpProblem& problem) {
  const std::string formatted = FormatProblem(problem);
  const absl::StatusOr<DynamicCpProblem> reparsed = ParseProblem(formatted);
  if (!reparsed.ok()) {
    return absl::InternalError(
        absl::StrCat("the formatted problem does not parse: ", reparsed.status().ToString(),
                     "; formatted: ", formatted));
  }
  if (!(*reparsed == problem)) {
    return absl::InternalError(
        absl::StrCat("format then parse changes the problem; formatted: ", formatted,
                     "; parsed back: ", FormatProblem(*reparsed)));
  }
  return absl::OkStatus();
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<DynamicCpProblem> problem = ParseProblem(text);
  if (!problem.ok()) return;
  if (const absl::Status status = CheckRoundTrip(*problem); !status.ok()) {
    ReportAndAbort(kTarget, "problem text does not round-trip", status, absl::CEscape(text));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

// Fuzz target: lengths files parse without crashing and round-trip.
//
// The input bytes are a lengths file (io/lengths_file.h). ParseLengthsFile
// must not crash; when it succeeds, FormatLengthsFile then ParseLengthsFile
// gives the same samples.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/lengths_file.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_lengths_file";

absl::Status CheckRoundTrip(const std::vector<Sample>& samples) {
  const std::string formatted = FormatLengthsFile(samples);
  const absl::StatusOr<std::vector<Sample>> reparsed = ParseLengthsFile(formatted);
  if (!reparsed.ok()) {
    return absl::InternalError(
        absl::StrCat("the formatted file does not parse: ", reparsed.status().ToString(),
                     "; formatted: ", absl::CEscape(formatted)));
  }
  if (*reparsed == samples) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("format then parse changes the samples; formatted: ", absl::CEscape(formatted)));
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  const absl::string_view contents(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<std::vector<Sample>> samples = ParseLengthsFile(contents);
  if (!samples.ok()) return;
  if (const absl::Status status = CheckRoundTrip(*samples); !status.ok()) {
    ReportAndAbort(kTarget, "lengths file does not round-trip", status, absl::CEscape(contents));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

// Fuzz target: schedule files parse without crashing, round-trip, and the
// schedule checker judges whatever schedule they hold without crashing.
//
// The input bytes are a schedule file (io/schedule_file.h), the input of
// `dcpsched verify`. ParseScheduleFile must not crash; when it succeeds,
// FormatScheduleFile then ParseScheduleFile gives the same file (the same
// per-rank schedule: a compact file's neighbouring groups with equal lists
// come back as one group; checked up to 65536 ranks over all microbatches),
// and FindViolations / CheckSchedule (core/checker.h) agree on the
// schedule, however broken it is.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "fuzz/fuzz_input.h"
#include "io/schedule_file.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_schedule_file";

// A compact file of a few bytes per microbatch can stand for 65536 rank
// lists each; the round trip writes them all (form 1 is per rank), so it is
// checked only up to this many ranks over all microbatches, which keeps an
// input within the fuzzer's time and memory limits. The checker judges
// every file.
constexpr std::int64_t kMaxRoundTripRanks = std::int64_t{1} << 16;

std::int64_t TotalRanks(const CompactSchedule& schedule) {
  std::int64_t ranks = 0;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    if (!microbatch.groups.empty()) {
      ranks += microbatch.groups.back().first_rank + microbatch.groups.back().size;
    }
  }
  return ranks;
}

absl::Status CheckRoundTrip(const ScheduleFile& file) {
  if (TotalRanks(file.schedule) > kMaxRoundTripRanks) return absl::OkStatus();
  const std::string formatted = FormatScheduleFile(file);
  absl::StatusOr<ScheduleFile> reparsed = ParseScheduleFile(formatted);
  if (!reparsed.ok()) {
    return absl::InternalError(
        absl::StrCat("the formatted file does not parse: ", reparsed.status().ToString(),
                     "; formatted: ", absl::CEscape(formatted)));
  }
  ScheduleFile expected = file;
  expected.format = kScheduleFileFormat;
  const absl::StatusOr<Schedule> ranks = ExpandSchedule(file.schedule);
  if (!ranks.ok()) return ranks.status();
  expected.schedule = CompactFromRanks(*ranks);
  if (*reparsed == expected) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("format then parse changes the file; formatted: ", absl::CEscape(formatted)));
}

// The checker's two entry points must agree: OK exactly when no violation.
absl::Status CheckVerdictsAgree(const ScheduleFile& file) {
  const std::vector<Violation> violations =
      FindViolations(file.samples, file.schedule, file.options);
  const absl::Status verdict = CheckSchedule(file.samples, file.schedule, file.options);
  if (violations.empty() == verdict.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("FindViolations found ", violations.size(),
                                          " violations but CheckSchedule says ",
                                          verdict.ToString()));
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  const absl::string_view contents(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<ScheduleFile> file = ParseScheduleFile(contents);
  if (!file.ok()) return;
  if (const absl::Status status = CheckRoundTrip(*file); !status.ok()) {
    ReportAndAbort(kTarget, "schedule file does not round-trip", status, absl::CEscape(contents));
  }
  if (const absl::Status status = CheckVerdictsAgree(*file); !status.ok()) {
    ReportAndAbort(kTarget, "checker verdicts disagree", status, absl::CEscape(contents));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

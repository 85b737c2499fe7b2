// Fuzz target: schedule files parse without crashing, round-trip, and the
// schedule checker judges whatever schedule they hold without crashing.
//
// The input bytes are a schedule file (io/schedule_file.h), the input of
// `dcpsched verify`. ParseScheduleFile must not crash; when it succeeds,
// FormatScheduleFile then ParseScheduleFile gives the same file (the same
// per-rank schedule: a compact file's neighbouring groups with equal lists
// come back as one group; checked up to 65536 ranks over all microbatches),
// and FindViolations / CheckSchedule (core/checker.h) agree on the
// schedule, however broken it is. A schedule that is a per-rank schedule's
// compact form (its groups tile each microbatch, no two neighbours hold
// equal lists) is also judged by the reference checker
// (oracle/reference_checker.h), which must find exactly what FindViolations
// finds (properties/checker_reference_check.h), up to 2^16 rank-list entries.

#include <algorithm>
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
#include "properties/checker_reference_check.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_schedule_file";

// A compact file of a few bytes per microbatch can stand for 65536 rank
// lists each; the round trip writes them all (form 1 is per rank), so it is
// checked only up to this many ranks over all microbatches, which keeps an
// input within the fuzzer's time and memory limits. The checker judges
// every file.
constexpr std::int64_t kMaxRoundTripRanks = std::int64_t{1} << 16;

// The per-rank schedule holds sum(group size x ids) entries; the reference
// checker reads each, so it judges files only up to this many.
constexpr std::int64_t kMaxReferenceEntries = std::int64_t{1} << 16;

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

std::int64_t TotalEntries(const CompactSchedule& schedule) {
  std::int64_t entries = 0;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    for (const CpGroupIds& group : microbatch.groups) {
      if (group.size > kMaxReferenceEntries) return kMaxReferenceEntries + 1;
      entries += group.size * static_cast<std::int64_t>(std::max<std::size_t>(group.ids.size(), 1));
      if (entries > kMaxReferenceEntries) return entries;
    }
  }
  return entries;
}

// The checker against the reference checker, on a file whose schedule is
// the compact form of a per-rank one (the only kind the reference reads).
absl::Status CheckMatchesReference(const ScheduleFile& file) {
  if (TotalEntries(file.schedule) > kMaxReferenceEntries) return absl::OkStatus();
  const absl::StatusOr<Schedule> ranks = ExpandSchedule(file.schedule);
  if (!ranks.ok() || !(CompactFromRanks(*ranks) == file.schedule)) return absl::OkStatus();
  return properties::CheckFindViolationsMatchesReference(file.samples, *ranks, file.options);
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
  if (const absl::Status status = CheckMatchesReference(*file); !status.ok()) {
    ReportAndAbort(kTarget, "checker and reference checker disagree", status,
                   absl::CEscape(contents));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

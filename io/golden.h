// Golden vectors: cases produced by running the upstream Python scheduler
// (format: the specification's "Golden vectors", one JSON object per line), and the check
// that runs one case through the core and compares the result exactly.

#ifndef DCPSCHED_IO_GOLDEN_H_
#define DCPSCHED_IO_GOLDEN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/types.h"

namespace dcpsched {

// One golden case as written in a .jsonl file.
struct GoldenCase {
  std::string name;
  std::string kind;       // "step" or "schedule"
  std::string scheduler;  // "packing_aware", "legacy" or "dp_balanced"
  std::int64_t total_gpus = 0;
  std::int64_t dp_size = 0;
  std::int64_t cp_size = 0;
  std::int64_t max_seq_len_per_rank = 0;
  std::int64_t min_cp_size = 1;
  std::optional<std::int64_t> vpp_group;
  // dp_balanced's cap on the samples of a packed sequence, or packing_aware's
  // on the samples of a rank (Megatron-LM PR #6479; null in vectors from
  // commits without it). Legacy refuses a set cap.
  std::optional<std::int64_t> max_num_seqs;
  std::vector<Sample> samples;

  bool expect_ok = false;
  std::string expect_error;                      // when !expect_ok
  std::optional<PackedMicrobatch> expect_step;   // kind "step", expect_ok
  std::optional<Schedule> expect_schedule;       // kind "schedule", expect_ok
};

// Parses one line. InvalidArgument (naming the field) if it is not a golden
// case.
absl::StatusOr<GoldenCase> ParseGoldenCase(std::string_view json_line);

// The options the case gives the dynamic-CP schedulers (packing_aware,
// legacy), and those it gives dp_balanced.
DynamicCpOptions DynamicCpOptionsOf(const GoldenCase& golden_case);
DpBalancedOptions DpBalancedOptionsOf(const GoldenCase& golden_case);

// True for a packing_aware or legacy schedule case whose expected schedule
// (upstream's) breaks invariant 11: Megatron-LM's runtime cannot run it
// (core/runtime_groups.h). Such a case is an expected refusal of its own
// kind, "upstream returns a schedule its runtime cannot run"; the file keeps
// upstream's schedule unchanged.
bool ExpectsUnrunnableSchedule(const GoldenCase& golden_case);

// Runs `golden_case` through the core. OK if the core's answer equals the
// expected one exactly (exec times bit for bit) or, for an ok:false case, the
// core rejects the input; otherwise an error whose message says what differs.
// For a case that ExpectsUnrunnableSchedule, OK if the core reproduces
// upstream's schedule exactly (ScheduleDynamicCpAsUpstream,
// ScheduleLegacyAsUpstream) and the scheduler itself refuses it with
// FailedPrecondition naming invariant 11.
absl::Status CheckGoldenCase(const GoldenCase& golden_case);

// Result of checking every line of one file.
struct GoldenFileReport {
  std::int64_t passed = 0;
  std::int64_t failed = 0;
  // Of the passed cases, those that ExpectsUnrunnableSchedule.
  std::int64_t unrunnable = 0;
  // One line per failing case: "<file>:<line> <name>: <what differs>".
  std::vector<std::string> failures;
};

// Checks every non-empty line of the file at `path` ("-": standard input).
// parse counts as a failure. NotFound if the file cannot be read.
absl::StatusOr<GoldenFileReport> CheckGoldenFile(const std::string& path);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_GOLDEN_H_

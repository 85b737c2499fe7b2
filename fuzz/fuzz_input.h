// The one input decoder shared by the structured fuzz targets, its inverse
// (FuzzInputWriter, for seeds and tests), and the judge of valid input.
//
// The decoder turns libFuzzer's bytes into scheduling problems that break
// schedulers: G of 1..64 including 3, 5, 6, 7, 12, 14 and 24, sometimes up to
// 4096 (65536 as a literal, e.g. in a seed), sometimes out of range; budgets
// from 1 to 2^31-1 and beyond; min_cp_size mostly 1, else mostly a power of
// two up to G; VPP groups mostly none or 1..4; max_num_seqs, behind a key
// so that inputs from before it decode as they did, mostly 1..4, sometimes
// larger or below 1; lengths at k * mslpr - 1,
// k * mslpr and k * mslpr + 1, tiny, realistic (128..8192), in runs of equal
// lengths, mostly clamped to what G ranks hold and else sometimes out of
// range; ids usually distinct, occasionally duplicated. Every value is read with
// FuzzedDataProvider::ConsumeIntegralInRange<std::int64_t>, one field after
// the other, so any byte string decodes to some problem (an exhausted input
// reads as the smallest choice everywhere), and FuzzInputWriter can write the
// bytes back for a chosen problem: the writer picks, per field, one of the
// decoder's choices that yields the wanted value.
//
// Every decoded input is small enough for one run to take milliseconds, with
// the reference oracle and under AddressSanitizer: at most kMaxSamples
// samples, and at most kRankSampleBudget ranks times samples (G * n), except
// that two samples are always allowed up to G = kRankSampleBudget, and one
// beyond (so G = 65536 is reachable). Hand-made schedules are bounded too
// (kMaxSchedule*).

#ifndef DCPSCHED_FUZZ_FUZZ_INPUT_H_
#define DCPSCHED_FUZZ_FUZZ_INPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "fuzzer/FuzzedDataProvider.h"
#include "properties/generators.h"

namespace dcpsched::fuzz {

// Most samples in one decoded problem.
inline constexpr std::int64_t kMaxSamples = 200;
// Most ranks times samples (G * n) in one decoded problem with a G in range.
inline constexpr std::int64_t kRankSampleBudget = 4096;
// Widest hand-made microbatch (one more with a "rank too many" defect), and
// most microbatches in a hand-made schedule. Alignment may split every CP
// group of a schedule, each split widening runs in O(width^2): these keep a
// hand-made schedule with a huge vpp_group to milliseconds.
inline constexpr std::int64_t kMaxScheduleWidth = 64;
inline constexpr std::int64_t kMaxScheduleMicrobatches = 8;
// Most ids on one rank of a literal hand-made microbatch.
inline constexpr std::int64_t kMaxIdsPerRank = 8;

// Most samples a decoded problem over `ranks` ranks may hold: kMaxSamples,
// lowered so that ranks * samples <= kRankSampleBudget, but 2 at least when
// ranks <= kRankSampleBudget and 1 above. A rank count outside 1..65536 (an
// invalid problem) allows kMaxSamples.
std::int64_t MaxSamplesFor(std::int64_t ranks);

// A dynamic-CP problem, valid or not (see the file comment).
DynamicCpProblem DecodeDynamicCpProblem(FuzzedDataProvider& data);

// A dp_balanced problem, valid or not: dp and cp sizes mostly small, lengths
// biased around k * mslpr * cp_size, max_num_seqs and vpp_group sometimes set.
properties::DpBalancedProblem DecodeDpBalancedProblem(FuzzedDataProvider& data);

// A hand-made schedule for VPP alignment: microbatches of one width made of
// runs of equal id lists (run sizes mostly powers of two, largest first,
// fresh ids), sometimes malformed (runs growing left to right, an empty rank,
// a ragged width, an id list repeated far from its run), or literal
// microbatches of any shape (with small ids that repeat across ranks in any
// pattern, or with any int64 ids). At most kMaxScheduleMicrobatches
// microbatches of at most kMaxScheduleWidth ranks (+1).
Schedule DecodeSchedule(FuzzedDataProvider& data);

// What the VPP-alignment target aligns: vpp_group (mostly 1..8, sometimes
// < 1 or huge), then the schedule.
struct VppAlignInput {
  std::int64_t vpp_group = 1;
  Schedule schedule;

  friend bool operator==(const VppAlignInput&, const VppAlignInput&) = default;
};
VppAlignInput DecodeVppAlignInput(FuzzedDataProvider& data);

// What one input of a structured fuzz target decodes to: a dynamic-CP
// problem (fuzz_packing_aware, fuzz_packing_aware_differential, fuzz_legacy),
// a dp_balanced problem (fuzz_dp_balanced) or a VPP-alignment input
// (fuzz_vpp_align).
using TargetInput = std::variant<DynamicCpProblem, properties::DpBalancedProblem, VppAlignInput>;

// What `bytes` decode to for the structured fuzz target named `target`, as
// that target decodes them; nullopt if `target` is not a structured target
// (the text targets parse their input instead).
std::optional<TargetInput> DecodeTargetInput(absl::string_view target,
                                             absl::Span<const std::uint8_t> bytes);

// The specification's "Valid input", written from docs/specification.md alone (it does not call
// core/validate.h, so it can judge the core's errors): G in 1..65536, mslpr
// in 1..2^31-1, min_cp_size a power of two in 1..G, vpp_group and
// max_num_seqs absent or >= 1, every length in 1..2^26, ids unique, and
// cp_min(len) <= G for every sample. (A valid problem with max_num_seqs set
// is still one the legacy scheduler refuses: it takes no cap.)
bool IsValidBySpec(const DynamicCpProblem& problem);

// Readable one-line forms of the non-dynamic-CP inputs, for failure reports.
std::string FormatDpBalancedProblem(const properties::DpBalancedProblem& problem);
std::string FormatSchedule(const Schedule& schedule);
std::string FormatVppAlignInput(const VppAlignInput& input);
// The one-line form of any TargetInput: FormatProblem (io/problem_text.h),
// FormatDpBalancedProblem or FormatVppAlignInput.
std::string FormatTargetInput(const TargetInput& input);

// Prints one line to stderr, "dcpsched <target>: <what>: <status>; input:
// <input>", and aborts, so that libFuzzer (or the corpus replay test) reports
// the input as a crash. `what` is a short phrase without ':' saying what
// broke; fuzz/run_fuzzers.sh names the stored regression after it.
[[noreturn]] void ReportAndAbort(absl::string_view target, absl::string_view what,
                                 const absl::Status& status, absl::string_view input);

// Writes the bytes that the Decode* functions above turn back into a chosen
// input, for seed corpora and tests. Write what one target decodes, in the
// order it decodes it, then take Bytes():
//
//   FuzzInputWriter writer;
//   CHECK_OK(writer.WriteDynamicCpProblem(problem));
//   FuzzedDataProvider data(writer.Bytes().data(), writer.Bytes().size());
//   DecodeDynamicCpProblem(data) == problem
//
// FuzzedDataProvider reads integers from the end of the buffer, most
// significant byte first; the writer records every value in read order and
// Bytes() emits them reversed.
class FuzzInputWriter {
 public:
  // Each writes what the matching Decode* reads. InvalidArgument, writing
  // nothing, if the decoder cannot produce the input: more samples than
  // MaxSamplesFor allows, or a schedule beyond the kMaxSchedule* limits.
  absl::Status WriteDynamicCpProblem(const DynamicCpProblem& problem);
  absl::Status WriteDpBalancedProblem(const properties::DpBalancedProblem& problem);
  absl::Status WriteSchedule(const Schedule& schedule);
  absl::Status WriteVppAlignInput(const VppAlignInput& input);

  // One ConsumeIntegralInRange<std::int64_t>(min, max) that returns `value`
  // (min <= value <= max).
  void WriteInRange(std::int64_t value, std::int64_t min, std::int64_t max);

  // The input for everything written so far.
  std::vector<std::uint8_t> Bytes() const;

 private:
  // Bytes in the order the decoder consumes them.
  std::vector<std::uint8_t> consumed_;
};

}  // namespace dcpsched::fuzz

#endif  // DCPSCHED_FUZZ_FUZZ_INPUT_H_

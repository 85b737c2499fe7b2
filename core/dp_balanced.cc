#include "core/dp_balanced.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

// A packed sequence: positions in `lens`, in input order.
using PackedSequence = std::vector<SampleId>;

// Packs positions in order: a sample joins the open sequence while the
// sequence's tokens stay within `capacity` and it holds fewer than
// `max_num_seqs` samples; otherwise it opens the next one. Every length is
// at most `capacity` (validated), so no sequence is empty.
std::vector<PackedSequence> PackInOrder(
    absl::Span<const std::int64_t> lens, std::int64_t capacity,
    const std::optional<std::int64_t>& max_num_seqs) {
  std::vector<PackedSequence> packed;
  PackedSequence open;
  std::int64_t open_tokens = 0;
  for (std::size_t position = 0; position < lens.size(); ++position) {
    const std::int64_t len = lens[position];
    const bool fits_tokens = open_tokens + len <= capacity;
    const bool fits_count =
        !max_num_seqs.has_value() ||
        static_cast<std::int64_t>(open.size()) < *max_num_seqs;
    if (!(fits_tokens && fits_count)) {
      packed.push_back(std::move(open));
      open.clear();
      open_tokens = 0;
    }
    open.push_back(static_cast<SampleId>(position));
    open_tokens += len;
  }
  if (!open.empty()) packed.push_back(std::move(open));
  return packed;
}

absl::Status NotEnoughSamplesError(std::size_t num_samples,
                                   std::size_t num_sequences,
                                   const std::string& multiple,
                                   const std::string& needed) {
  return absl::FailedPreconditionError(absl::StrCat(
      "dp_balanced: not enough samples to move. The ", num_samples,
      " samples pack into ", num_sequences,
      " sequences; making that a multiple of dp_size * vpp_group (", multiple,
      ") needs ", needed, " more single-sample sequences, but only ",
      num_samples - num_sequences,
      " samples can be moved out of the others; use more samples, or a "
      "smaller dp_size or vpp_group"));
}

// Appends single-sample sequences until the number of sequences is a
// multiple of dp_size * vpp_group. The cursor starts at the last packed
// sequence and only moves left: it pops the last position of the sequence
// under it while that holds more than one, else steps left. The cursor may
// reach sequence 0, as on upstream's dev branch (`assert i >= 0`); an older
// upstream stopped before sequence 0 (`assert i > 0`). The golden vectors
// (tests/golden/dp_balanced_schedule.jsonl) follow the dev branch: five of
// their cases split sequence 0.
absl::Status MoveToMultiple(std::vector<PackedSequence>& packed,
                            std::size_t num_samples,
                            const DpBalancedOptions& options) {
  if (packed.empty()) return absl::OkStatus();
  const std::uint64_t dp_size = static_cast<std::uint64_t>(options.dp_size);
  const std::uint64_t vpp_group =
      static_cast<std::uint64_t>(options.vpp_group.value_or(1));
  if (vpp_group > std::numeric_limits<std::uint64_t>::max() / dp_size) {
    // The multiple exceeds any number of samples, and packed.size() >= 1 is
    // not a multiple of it.
    return NotEnoughSamplesError(
        num_samples, packed.size(),
        absl::StrCat(options.dp_size, " * ", vpp_group, ", over 2^64"),
        absl::StrCat("over ", std::numeric_limits<std::uint64_t>::max() -
                                  packed.size()));
  }
  const std::uint64_t multiple = dp_size * vpp_group;
  const std::uint64_t count = packed.size();
  std::uint64_t to_move = (multiple - count % multiple) % multiple;
  // Each sequence can give up all but one of its samples.
  if (to_move > num_samples - count) {
    return NotEnoughSamplesError(num_samples, packed.size(),
                                 absl::StrCat(multiple), absl::StrCat(to_move));
  }
  std::size_t cursor = packed.size() - 1;
  while (to_move > 0) {
    if (packed[cursor].size() > 1) {
      const SampleId moved = packed[cursor].back();
      packed[cursor].pop_back();
      packed.push_back(PackedSequence{moved});
      --to_move;
    } else {
      // Cannot underflow: the check above guarantees enough movable samples
      // at or left of the cursor.
      --cursor;
    }
  }
  return absl::OkStatus();
}

// Microbatch i gives rank j the packed sequence i * dp_size + j / cp_size:
// DP replica d is one CP group, ranks [d * cp_size, (d + 1) * cp_size),
// holding the replica's whole sequence. Packed sequences are disjoint and
// never empty, so no two neighbouring groups hold equal lists.
CompactSchedule LayOut(std::vector<PackedSequence> packed,
                       const DpBalancedOptions& options) {
  const std::size_t dp_size = static_cast<std::size_t>(options.dp_size);
  CompactSchedule schedule;
  schedule.microbatches.resize(packed.size() / dp_size);
  for (std::size_t i = 0; i < schedule.microbatches.size(); ++i) {
    std::vector<CpGroupIds>& groups = schedule.microbatches[i].groups;
    groups.reserve(dp_size);
    for (std::size_t d = 0; d < dp_size; ++d) {
      groups.push_back(CpGroupIds{static_cast<std::int64_t>(d) * options.cp_size,
                                  options.cp_size,
                                  std::move(packed[i * dp_size + d])});
    }
  }
  return schedule;
}

}  // namespace

absl::StatusOr<CompactSchedule> ScheduleDpBalancedCompact(
    absl::Span<const std::int64_t> lens, const DpBalancedOptions& options) {
  if (absl::Status status = ValidateDpBalancedProblem(lens, options);
      !status.ok()) {
    return status;
  }
  // At most (2^31 - 1) * 65536 < 2^47 after validation.
  const std::int64_t capacity = options.max_seq_len_per_rank * options.cp_size;
  std::vector<PackedSequence> packed =
      PackInOrder(lens, capacity, options.max_num_seqs);
  if (absl::Status status = MoveToMultiple(packed, lens.size(), options);
      !status.ok()) {
    return status;
  }
  return LayOut(std::move(packed), options);
}

absl::StatusOr<Schedule> ScheduleDpBalanced(absl::Span<const std::int64_t> lens,
                                            const DpBalancedOptions& options) {
  absl::StatusOr<CompactSchedule> compact = ScheduleDpBalancedCompact(lens, options);
  if (!compact.ok()) return compact.status();
  return ExpandSchedule(*compact);
}

}  // namespace dcpsched

// Fuzz target: VPP alignment equals the reference oracle and keeps samples.
//
// On a decoded hand-made schedule and vpp_group (fuzz_input.h), valid or
// malformed, AlignToVppGroup equals the oracle's alignment exactly, or both
// fail with the same status code. On success also:
//  - the count grew by exactly (-count) mod vpp_group (one microbatch per
//    split), and nothing changed when that is 0;
//  - every microbatch keeps the input's width and has no empty rank;
//  - the ids are the input's ids, none dropped, none invented;
//  - when the input is canonical (its ranks form runs of identical id lists,
//    each id in one run of the whole schedule, as the scheduler builds
//    them): every input run is in exactly one output microbatch, as one
//    contiguous run of identical lists whose size is the input size times a
//    power of two (splits cut between runs; widening doubles runs).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/types.h"
#include "core/vpp_align.h"
#include "fuzz/fuzz_input.h"
#include "properties/problem_checks.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_vpp_align";

using IdList = std::vector<SampleId>;

// One maximal block of consecutive ranks holding identical id lists.
struct Run {
  const IdList* ids = nullptr;
  std::int64_t size = 0;
};

std::vector<Run> RunsOf(const Microbatch& microbatch) {
  std::vector<Run> runs;
  for (const IdList& ids : microbatch.rank_ids) {
    if (!runs.empty() && *runs.back().ids == ids) {
      ++runs.back().size;
    } else {
      runs.push_back(Run{&ids, 1});
    }
  }
  return runs;
}

// For a canonical schedule, the size of each run keyed by its id list; for
// any other, nullopt.
std::optional<absl::flat_hash_map<IdList, std::int64_t>> CanonicalRuns(const Schedule& schedule) {
  absl::flat_hash_map<IdList, std::int64_t> runs;
  absl::flat_hash_set<SampleId> seen;
  for (const Microbatch& microbatch : schedule.microbatches) {
    for (const Run& run : RunsOf(microbatch)) {
      if (run.ids->empty()) return std::nullopt;
      for (const SampleId id : *run.ids) {
        if (!seen.insert(id).second) return std::nullopt;
      }
      runs.emplace(*run.ids, run.size);
    }
  }
  return runs;
}

absl::flat_hash_set<SampleId> IdsOf(const Schedule& schedule) {
  absl::flat_hash_set<SampleId> ids;
  for (const Microbatch& microbatch : schedule.microbatches) {
    for (const IdList& rank : microbatch.rank_ids) ids.insert(rank.begin(), rank.end());
  }
  return ids;
}

absl::Status Violation(absl::string_view what) { return absl::InternalError(what); }

absl::Status CheckCanonicalRuns(const absl::flat_hash_map<IdList, std::int64_t>& input_runs,
                                const Schedule& aligned) {
  absl::flat_hash_set<IdList> found;
  for (std::size_t m = 0; m < aligned.microbatches.size(); ++m) {
    for (const Run& run : RunsOf(aligned.microbatches[m])) {
      const std::string where =
          absl::StrCat("microbatch ", m, " run [", absl::StrJoin(*run.ids, ","), "]");
      const auto it = input_runs.find(*run.ids);
      if (it == input_runs.end()) return Violation(absl::StrCat(where, " is no input run"));
      if (!found.insert(*run.ids).second) return Violation(absl::StrCat(where, " appears twice"));
      const std::int64_t factor = run.size / it->second;
      if (run.size % it->second != 0 || (factor & (factor - 1)) != 0) {
        return Violation(
            absl::StrCat(where, " has ", run.size, " ranks; its input run had ", it->second));
      }
    }
  }
  if (found.size() == input_runs.size()) return absl::OkStatus();
  return Violation(absl::StrCat(input_runs.size() - found.size(), " input runs are missing"));
}

// The properties of a successful alignment of `input` (see the file comment).
absl::Status CheckAligned(const VppAlignInput& input, const Schedule& aligned) {
  if (input.vpp_group < 1) return Violation("vpp_group < 1 is accepted");
  const Schedule& schedule = input.schedule;
  const auto count = static_cast<std::int64_t>(schedule.microbatches.size());
  const std::int64_t remainder = (input.vpp_group - count % input.vpp_group) % input.vpp_group;
  const auto aligned_count = static_cast<std::int64_t>(aligned.microbatches.size());
  if (aligned_count - count != remainder) {
    return Violation(
        absl::StrCat(count, " microbatches became ", aligned_count, ", not ", count + remainder));
  }
  if (remainder == 0 && !(aligned == schedule))
    return Violation("nothing to split, yet the schedule changed");
  if (count == 0) return absl::OkStatus();
  const std::size_t width = schedule.microbatches.front().rank_ids.size();
  for (std::size_t m = 0; m < aligned.microbatches.size(); ++m) {
    const auto& ranks = aligned.microbatches[m].rank_ids;
    if (ranks.size() != width) {
      return Violation(
          absl::StrCat("microbatch ", m, " has ", ranks.size(), " ranks, not ", width));
    }
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (ranks[r].empty())
        return Violation(absl::StrCat("microbatch ", m, " rank ", r, " is empty"));
    }
  }
  if (IdsOf(aligned) != IdsOf(schedule)) return Violation("the ids differ from the input's");
  const auto input_runs = CanonicalRuns(schedule);
  if (!input_runs.has_value()) return absl::OkStatus();
  return CheckCanonicalRuns(*input_runs, aligned);
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider provider(data, size);
  const VppAlignInput input = DecodeVppAlignInput(provider);
  if (const absl::Status status =
          properties::CheckAlignmentMatchesOracle(input.schedule, input.vpp_group);
      !status.ok()) {
    ReportAndAbort(kTarget, "alignment differs from the oracle", status,
                   FormatVppAlignInput(input));
  }
  if (const absl::Status status =
          properties::CheckAlignmentCompactMatchesPerRank(input.schedule, input.vpp_group);
      !status.ok()) {
    ReportAndAbort(kTarget, "compact alignment is not the per-rank alignment", status,
                   FormatVppAlignInput(input));
  }
  const absl::StatusOr<Schedule> aligned = AlignToVppGroup(input.schedule, input.vpp_group);
  if (!aligned.ok()) return;
  if (const absl::Status status = CheckAligned(input, *aligned); !status.ok()) {
    ReportAndAbort(kTarget, "alignment breaks a property", status, FormatVppAlignInput(input));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

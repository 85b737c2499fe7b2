#include "core/checker.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/runtime_groups.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

constexpr std::int64_t kNone = -1;
// Ids listed in one message at most; the rest are counted.
constexpr std::size_t kMaxIdsInMessage = 10;

std::string IdList(const std::vector<SampleId>& ids) {
  if (ids.size() <= kMaxIdsInMessage) return absl::StrJoin(ids, ", ");
  return absl::StrCat(
      absl::StrJoin(ids.begin(), ids.begin() + kMaxIdsInMessage, ", "),
      " and ", ids.size() - kMaxIdsInMessage, " more");
}

// Where a sample was first found: its microbatch and its run of ranks there.
struct Placement {
  std::int64_t microbatch = kNone;
  std::int64_t first_rank = kNone;
  std::int64_t last_rank = kNone;
  std::int64_t ranks = 0;  // distinct ranks holding it: its CP size
  std::int64_t reported_elsewhere_in = kNone;
  std::size_t last_group = 0;  // the group of microbatch `microbatch` it was last in
};

// The ranks of one group, as messages name them: "microbatch m rank r", or
// "microbatch m ranks a-b: each" for a group of several ranks (every rank of
// a group holds the same ids, so a finding about one is about each).
std::string Where(std::int64_t microbatch, const CpGroupIds& group) {
  return absl::StrCat("microbatch ", microbatch, " ",
                      RankRange(group.first_rank, group.size),
                      group.size == 1 ? "" : ": each");
}

// Works on the compact form: every finding about a group's ids holds for each
// of its ranks, so it is made once per group, located at its first rank. The
// cost is linear in the groups and ids, whatever G.
class ScheduleChecker {
 public:
  ScheduleChecker(absl::Span<const Sample> samples,
                  const CompactSchedule& schedule,
                  const DynamicCpOptions& options)
      : samples_(samples),
        schedule_(schedule),
        options_(options),
        placements_(samples.size()) {
    index_of_id_.reserve(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      index_of_id_.emplace(samples[i].id, i);
    }
  }

  std::vector<Violation> Run() && {
    const auto count = static_cast<std::int64_t>(schedule_.microbatches.size());
    for (std::int64_t m = 0; m < count; ++m) CheckMicrobatch(m);
    CheckEverySamplePlaced();
    CheckVppMultiple();
    std::stable_sort(violations_.begin(), violations_.end(),
                     [](const Violation& a, const Violation& b) {
                       return std::make_tuple(a.invariant, a.microbatch, a.rank) <
                              std::make_tuple(b.invariant, b.microbatch, b.rank);
                     });
    return std::move(violations_);
  }

 private:
  void Report(Invariant invariant, std::int64_t microbatch, std::int64_t rank,
              std::vector<SampleId> ids, std::string message) {
    violations_.push_back(
        Violation{invariant, microbatch, rank, std::move(ids), std::move(message)});
  }

  // Invariant 1 on the compact form: the groups tile [0, G), none empty. A
  // microbatch whose groups do not tile is reported and not read further.
  void CheckMicrobatch(std::int64_t m) {
    const CompactMicrobatch& microbatch =
        schedule_.microbatches[static_cast<std::size_t>(m)];
    const absl::StatusOr<std::int64_t> width =
        MicrobatchWidth(microbatch, static_cast<std::size_t>(m));
    if (!width.ok()) {
      Report(Invariant::kNoEmptyRank, m, kNone, {},
             std::string(width.status().message()));
      return;
    }
    if (*width != options_.total_gpus) {
      Report(Invariant::kNoEmptyRank, m, kNone, {},
             absl::StrCat("microbatch ", m, " has ", *width,
                          " ranks, expected total_gpus=", options_.total_gpus));
    }
    const std::vector<std::size_t> placed_here = PlaceIds(m, microbatch);
    CheckCpSizes(m, placed_here);
    CheckRankLoads(m, microbatch, placed_here);
    CheckSequenceCap(m, microbatch);
    CheckRuntimeGroups(m, microbatch);
  }

  // Where the known sample at `index` is held in its microbatch, as messages
  // name it: "ranks 0-7", or "6 ranks within ranks 0-9" when not contiguous.
  std::string HeldBy(std::size_t index) const {
    const Placement& placement = placements_[index];
    const std::int64_t span = placement.last_rank - placement.first_rank + 1;
    if (span == placement.ranks) return RankRange(placement.first_rank, span);
    return absl::StrCat(placement.ranks, " ranks within ",
                        RankRange(placement.first_rank, span));
  }

  // The index of `id` if it is an input sample placed in microbatch m.
  std::optional<std::size_t> BelongingIndex(SampleId id, std::int64_t m) const {
    const auto found = index_of_id_.find(id);
    if (found == index_of_id_.end()) return std::nullopt;
    if (placements_[found->second].microbatch != m) return std::nullopt;
    return found->second;
  }

  // Invariant 11, once per group: its ranks share their first sample, hence
  // their CP size c and (when the first rank's is right) their runtime group,
  // so the first rank speaks for all. A group whose first id does not belong
  // here is left to invariant 2, and so is every such id.
  void CheckRuntimeGroups(std::int64_t m, const CompactMicrobatch& microbatch) {
    for (const CpGroupIds& group : microbatch.groups) {
      if (group.ids.empty()) continue;
      const std::optional<std::size_t> first = BelongingIndex(group.ids.front(), m);
      if (!first.has_value()) continue;
      const std::int64_t cp = placements_[*first].ranks;
      const std::optional<RankBlock> runtime_group =
          RuntimeGroupOf(group.first_rank, cp, options_);
      if (!runtime_group.has_value()) {
        Report(Invariant::kRuntimeGroups, m, group.first_rank, {group.ids.front()},
               group.first_rank >= options_.total_gpus
                   ? PastTheLastRankMessage(Where(m, group), options_)
                   : UncreatedGroupMessage(Where(m, group), group.ids.front(),
                                           HeldBy(*first), cp, options_));
        continue;
      }
      std::vector<SampleId> elsewhere;
      for (const SampleId id : group.ids) {
        const std::optional<std::size_t> index = BelongingIndex(id, m);
        if (index.has_value() && !HeldExactlyBy(*index, *runtime_group)) {
          elsewhere.push_back(id);
        }
      }
      if (elsewhere.empty()) continue;
      const std::size_t shown = *BelongingIndex(elsewhere.front(), m);
      std::string message = MisplacedSampleMessage(
          Where(m, group), group.ids.front(), cp, *runtime_group,
          elsewhere.front(), HeldBy(shown));
      if (elsewhere.size() > 1) absl::StrAppend(&message, " (ids ", IdList(elsewhere), ")");
      Report(Invariant::kRuntimeGroups, m, group.first_rank, std::move(elsewhere),
             std::move(message));
    }
  }

  bool HeldExactlyBy(std::size_t index, const RankBlock& block) const {
    const Placement& placement = placements_[index];
    return placement.first_rank == block.first_rank && placement.ranks == block.size &&
           placement.last_rank == block.first_rank + block.size - 1;
  }

  // Invariant 10: under max_num_seqs, no rank holds more samples than that,
  // counting every id it holds.
  void CheckSequenceCap(std::int64_t m, const CompactMicrobatch& microbatch) {
    if (!options_.max_num_seqs.has_value()) return;
    for (const CpGroupIds& group : microbatch.groups) {
      const auto count = static_cast<std::int64_t>(group.ids.size());
      if (count <= *options_.max_num_seqs) continue;
      Report(Invariant::kSequenceCap, m, group.first_rank, group.ids,
             absl::StrCat(Where(m, group), " holds ", count,
                          " samples > max_num_seqs ", *options_.max_num_seqs,
                          " (ids ", IdList(group.ids), ")"));
    }
  }

  // Records where each id of microbatch m sits; reports empty groups, unknown
  // ids, ids seen before in another microbatch, ids twice in one group's list
  // and runs that are not contiguous. Returns the samples first found here.
  std::vector<std::size_t> PlaceIds(std::int64_t m,
                                    const CompactMicrobatch& microbatch) {
    std::vector<std::size_t> placed_here;
    for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
      const CpGroupIds& group = microbatch.groups[g];
      const std::int64_t first = group.first_rank;
      const std::int64_t last = group.first_rank + group.size - 1;
      if (group.ids.empty()) {
        Report(Invariant::kNoEmptyRank, m, first, {},
               absl::StrCat(Where(m, group), " holds no sample"));
      }
      for (const SampleId id : group.ids) {
        const auto found = index_of_id_.find(id);
        if (found == index_of_id_.end()) {
          Report(Invariant::kEachSampleOnce, m, first, {id},
                 absl::StrCat(Where(m, group), " holds id ", id,
                              ", which is not an input sample"));
          continue;
        }
        Placement& placement = placements_[found->second];
        if (placement.microbatch == kNone) {
          placement = Placement{m, first, last, group.size, kNone, g};
          placed_here.push_back(found->second);
        } else if (placement.microbatch != m) {
          if (placement.reported_elsewhere_in != m) {
            placement.reported_elsewhere_in = m;
            Report(Invariant::kEachSampleOnce, m, first, {id},
                   absl::StrCat("sample ", id, " is in microbatch ",
                                placement.microbatch, " and again in ",
                                "microbatch ", m, " rank ", first));
          }
        } else if (placement.last_group == g) {
          Report(Invariant::kEachSampleOnce, m, first, {id},
                 absl::StrCat(Where(m, group), " holds sample ", id, " twice"));
        } else {
          if (placement.last_rank != first - 1) {
            Report(Invariant::kEachSampleOnce, m, first, {id},
                   absl::StrCat("sample ", id, " in microbatch ", m,
                                " is on ranks ", placement.first_rank, "-",
                                placement.last_rank, " and again on rank ",
                                first, ": not one contiguous run"));
          }
          placement.last_rank = last;
          placement.ranks += group.size;
          placement.last_group = g;
        }
      }
    }
    return placed_here;
  }

  void CheckCpSizes(std::int64_t m, const std::vector<std::size_t>& placed_here) {
    for (const std::size_t index : placed_here) {
      const Sample& sample = samples_[index];
      const Placement& placement = placements_[index];
      const std::int64_t cp = placement.ranks;
      if (!IsPowerOfTwo(cp) && cp != options_.total_gpus) {
        Report(Invariant::kPowerOfTwoCp, m, placement.first_rank, {sample.id},
               absl::StrCat("sample ", sample.id, " in microbatch ", m,
                            " has CP size ", cp,
                            ", neither a power of two nor total_gpus=",
                            options_.total_gpus));
      }
      const std::int64_t minimum = MinCpSize(
          sample.len, options_.max_seq_len_per_rank, options_.min_cp_size);
      if (cp < minimum) {
        Report(Invariant::kMinimumCp, m, placement.first_rank, {sample.id},
               absl::StrCat("sample ", sample.id, " (length ", sample.len,
                            ") in microbatch ", m, " has CP size ", cp,
                            ", below its minimum ", minimum));
      }
    }
  }

  // Per-rank tokens and work, summed in list order from 0, against the token
  // budget and the microbatch's work cap: once per group, whose ranks all
  // carry the same load.
  void CheckRankLoads(std::int64_t m, const CompactMicrobatch& microbatch,
                      const std::vector<std::size_t>& placed_here) {
    if (placed_here.empty()) return;
    std::int64_t tallest = 0;
    for (const std::size_t index : placed_here) {
      tallest = std::max(tallest, samples_[index].len);
    }
    const double cap = WorkCap(tallest, options_.max_seq_len_per_rank);
    const double budget = static_cast<double>(options_.max_seq_len_per_rank);
    for (const CpGroupIds& group : microbatch.groups) {
      double tokens = 0.0;
      double work = 0.0;
      std::vector<SampleId> counted;
      for (const SampleId id : group.ids) {
        const auto found = index_of_id_.find(id);
        if (found == index_of_id_.end()) continue;
        const Placement& placement = placements_[found->second];
        if (placement.microbatch != m) continue;
        const std::int64_t len = samples_[found->second].len;
        tokens += TokensPerRank(len, placement.ranks);
        work += Work(len, placement.ranks);
        counted.push_back(id);
      }
      if (tokens > budget) {
        Report(Invariant::kTokenBudget, m, group.first_rank, counted,
               absl::StrFormat("%s holds %.17g tokens > max_seq_len_per_rank "
                               "%d (ids %s)",
                               Where(m, group), tokens,
                               options_.max_seq_len_per_rank, IdList(counted)));
      }
      if (work > cap) {
        Report(Invariant::kWorkCap, m, group.first_rank, counted,
               absl::StrFormat("%s carries work %.17g > cap %.17g of its "
                               "microbatch (ids %s)",
                               Where(m, group), work, cap, IdList(counted)));
      }
    }
  }

  void CheckEverySamplePlaced() {
    std::vector<SampleId> missing;
    for (std::size_t i = 0; i < samples_.size(); ++i) {
      if (placements_[i].microbatch == kNone) missing.push_back(samples_[i].id);
    }
    if (missing.empty()) return;
    const std::string message =
        absl::StrCat(missing.size(), " input sample(s) in no microbatch: ids ",
                     IdList(missing));
    Report(Invariant::kEachSampleOnce, kNone, kNone, std::move(missing), message);
  }

  void CheckVppMultiple() {
    if (!options_.vpp_group.has_value() || *options_.vpp_group <= 1) return;
    const auto count = static_cast<std::int64_t>(schedule_.microbatches.size());
    if (count % *options_.vpp_group == 0) return;
    Report(Invariant::kVppMultiple, kNone, kNone, {},
           absl::StrCat(count, " microbatches is not a multiple of vpp_group=",
                        *options_.vpp_group));
  }

  const absl::Span<const Sample> samples_;
  const CompactSchedule& schedule_;
  const DynamicCpOptions& options_;
  absl::flat_hash_map<SampleId, std::size_t> index_of_id_;
  std::vector<Placement> placements_;  // by sample index
  std::vector<Violation> violations_;
};

}  // namespace

const char* InvariantName(Invariant invariant) {
  switch (invariant) {
    case Invariant::kNoEmptyRank:
      return "no empty rank";
    case Invariant::kEachSampleOnce:
      return "each sample once";
    case Invariant::kPowerOfTwoCp:
      return "power-of-two CP size";
    case Invariant::kTokenBudget:
      return "token budget";
    case Invariant::kWorkCap:
      return "work cap";
    case Invariant::kMinimumCp:
      return "minimum CP size";
    case Invariant::kVppMultiple:
      return "VPP multiple";
    case Invariant::kSequenceCap:
      return "sequence cap";
    case Invariant::kRuntimeGroups:
      return "runtime groups";
  }
  return "unknown invariant";
}

std::vector<Violation> FindViolations(absl::Span<const Sample> samples,
                                      const CompactSchedule& schedule,
                                      const DynamicCpOptions& options) {
  if (!ValidateDynamicCpProblem(samples, options).ok()) return {};
  return ScheduleChecker(samples, schedule, options).Run();
}

std::vector<Violation> FindViolations(absl::Span<const Sample> samples,
                                      const Schedule& schedule,
                                      const DynamicCpOptions& options) {
  return FindViolations(samples, CompactFromRanks(schedule), options);
}

absl::Status CheckSchedule(absl::Span<const Sample> samples,
                           const CompactSchedule& schedule,
                           const DynamicCpOptions& options) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options);
      !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the problem is not valid: ", status.message()));
  }
  const std::vector<Violation> violations =
      ScheduleChecker(samples, schedule, options).Run();
  if (violations.empty()) return absl::OkStatus();
  const Violation& first = violations.front();
  return absl::InvalidArgumentError(
      absl::StrCat("invariant ", static_cast<int>(first.invariant), " (",
                   InvariantName(first.invariant), "): ", first.message));
}

absl::Status CheckSchedule(absl::Span<const Sample> samples,
                           const Schedule& schedule,
                           const DynamicCpOptions& options) {
  return CheckSchedule(samples, CompactFromRanks(schedule), options);
}

}  // namespace dcpsched

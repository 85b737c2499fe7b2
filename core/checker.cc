#include "core/checker.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/cost_model.h"
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

bool IsPowerOfTwo(std::int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

// Where a sample was first found: its microbatch and its run of ranks there.
struct Placement {
  std::int64_t microbatch = kNone;
  std::int64_t first_rank = kNone;
  std::int64_t last_rank = kNone;
  std::int64_t ranks = 0;  // distinct ranks holding it: its CP size
  std::int64_t reported_elsewhere_in = kNone;
};

class ScheduleChecker {
 public:
  ScheduleChecker(absl::Span<const Sample> samples, const Schedule& schedule,
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

  static std::string Where(std::int64_t microbatch, std::int64_t rank) {
    return absl::StrCat("microbatch ", microbatch, " rank ", rank);
  }

  void CheckMicrobatch(std::int64_t m) {
    const auto& ranks = schedule_.microbatches[static_cast<std::size_t>(m)].rank_ids;
    const auto width = static_cast<std::int64_t>(ranks.size());
    if (width != options_.total_gpus) {
      Report(Invariant::kNoEmptyRank, m, kNone, {},
             absl::StrCat("microbatch ", m, " has ", width,
                          " ranks, expected total_gpus=", options_.total_gpus));
    }
    const std::vector<std::size_t> placed_here = PlaceIds(m, ranks);
    CheckCpSizes(m, placed_here);
    CheckRankLoads(m, ranks, placed_here);
  }

  // Records where each id of microbatch m sits; reports empty ranks, unknown
  // ids, ids seen before in another microbatch, ids twice on one rank and
  // runs that are not contiguous. Returns the samples first found here.
  std::vector<std::size_t> PlaceIds(
      std::int64_t m, const std::vector<std::vector<SampleId>>& ranks) {
    std::vector<std::size_t> placed_here;
    for (std::int64_t r = 0; r < static_cast<std::int64_t>(ranks.size()); ++r) {
      const std::vector<SampleId>& ids = ranks[static_cast<std::size_t>(r)];
      if (ids.empty()) {
        Report(Invariant::kNoEmptyRank, m, r, {},
               absl::StrCat(Where(m, r), " holds no sample"));
      }
      for (const SampleId id : ids) {
        const auto found = index_of_id_.find(id);
        if (found == index_of_id_.end()) {
          Report(Invariant::kEachSampleOnce, m, r, {id},
                 absl::StrCat(Where(m, r), " holds id ", id,
                              ", which is not an input sample"));
          continue;
        }
        Placement& placement = placements_[found->second];
        if (placement.microbatch == kNone) {
          placement = Placement{m, r, r, 1, kNone};
          placed_here.push_back(found->second);
        } else if (placement.microbatch != m) {
          if (placement.reported_elsewhere_in != m) {
            placement.reported_elsewhere_in = m;
            Report(Invariant::kEachSampleOnce, m, r, {id},
                   absl::StrCat("sample ", id, " is in microbatch ",
                                placement.microbatch, " and again in ",
                                Where(m, r)));
          }
        } else if (placement.last_rank == r) {
          Report(Invariant::kEachSampleOnce, m, r, {id},
                 absl::StrCat(Where(m, r), " holds sample ", id, " twice"));
        } else {
          if (placement.last_rank != r - 1) {
            Report(Invariant::kEachSampleOnce, m, r, {id},
                   absl::StrCat("sample ", id, " in microbatch ", m,
                                " is on ranks ", placement.first_rank, "-",
                                placement.last_rank, " and again on rank ", r,
                                ": not one contiguous run"));
          }
          placement.last_rank = r;
          ++placement.ranks;
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
  // budget and the microbatch's work cap.
  void CheckRankLoads(std::int64_t m,
                      const std::vector<std::vector<SampleId>>& ranks,
                      const std::vector<std::size_t>& placed_here) {
    if (placed_here.empty()) return;
    std::int64_t tallest = 0;
    for (const std::size_t index : placed_here) {
      tallest = std::max(tallest, samples_[index].len);
    }
    const double cap = WorkCap(tallest, options_.max_seq_len_per_rank);
    const double budget = static_cast<double>(options_.max_seq_len_per_rank);
    for (std::int64_t r = 0; r < static_cast<std::int64_t>(ranks.size()); ++r) {
      double tokens = 0.0;
      double work = 0.0;
      std::vector<SampleId> counted;
      for (const SampleId id : ranks[static_cast<std::size_t>(r)]) {
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
        Report(Invariant::kTokenBudget, m, r, counted,
               absl::StrFormat("%s holds %.17g tokens > max_seq_len_per_rank "
                               "%d (ids %s)",
                               Where(m, r), tokens,
                               options_.max_seq_len_per_rank, IdList(counted)));
      }
      if (work > cap) {
        Report(Invariant::kWorkCap, m, r, counted,
               absl::StrFormat("%s carries work %.17g > cap %.17g of its "
                               "microbatch (ids %s)",
                               Where(m, r), work, cap, IdList(counted)));
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
  const Schedule& schedule_;
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
  }
  return "unknown invariant";
}

std::vector<Violation> FindViolations(absl::Span<const Sample> samples,
                                      const Schedule& schedule,
                                      const DynamicCpOptions& options) {
  if (!ValidateDynamicCpProblem(samples, options).ok()) return {};
  return ScheduleChecker(samples, schedule, options).Run();
}

absl::Status CheckSchedule(absl::Span<const Sample> samples,
                           const Schedule& schedule,
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

}  // namespace dcpsched

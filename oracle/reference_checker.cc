#include "oracle/reference_checker.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "core/types.h"
#include "oracle/reference_definitions.h"

namespace dcpsched::oracle {
namespace {

using RankIds = std::vector<std::vector<SampleId>>;

// A rank opens a CP group when its list differs from its left neighbour's.
bool OpensGroup(const RankIds& ranks, std::size_t r) {
  return r == 0 || ranks[r] != ranks[r - 1];
}

class ReferenceChecker {
 public:
  ReferenceChecker(absl::Span<const Sample> samples, const Schedule& schedule,
                   const DynamicCpOptions& options)
      : samples_(samples), schedule_(schedule), options_(options) {
    for (const Sample& sample : samples) len_of_[sample.id] = sample.len;
  }

  std::vector<ReferenceFinding> Run() && {
    FindHomes();
    for (std::size_t m = 0; m < schedule_.microbatches.size(); ++m) {
      CheckMicrobatch(static_cast<std::int64_t>(m));
    }
    CheckEverySamplePlaced();
    CheckVppMultiple();
    std::sort(findings_.begin(), findings_.end());
    return std::move(findings_);
  }

 private:
  void Find(int invariant, std::int64_t m, std::int64_t rank, std::vector<SampleId> ids) {
    findings_.push_back(ReferenceFinding{invariant, m, rank, std::move(ids)});
  }

  // A sample belongs to the first microbatch any of whose ranks holds it.
  void FindHomes() {
    for (std::size_t m = 0; m < schedule_.microbatches.size(); ++m) {
      for (const auto& rank : schedule_.microbatches[m].rank_ids) {
        for (const SampleId id : rank) {
          if (len_of_.contains(id) && !home_.contains(id)) {
            home_[id] = static_cast<std::int64_t>(m);
          }
        }
      }
    }
  }

  bool BelongsTo(SampleId id, std::int64_t m) const {
    const auto found = home_.find(id);
    return found != home_.end() && found->second == m;
  }

  // The ranks of microbatch m that hold each sample belonging to it, in
  // order, each rank once.
  std::map<SampleId, std::vector<std::int64_t>> RanksOfSamples(std::int64_t m,
                                                               const RankIds& ranks) const {
    std::map<SampleId, std::vector<std::int64_t>> ranks_of;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      for (const SampleId id : ranks[r]) {
        if (!BelongsTo(id, m)) continue;
        std::vector<std::int64_t>& holding = ranks_of[id];
        if (holding.empty() || holding.back() != static_cast<std::int64_t>(r)) {
          holding.push_back(static_cast<std::int64_t>(r));
        }
      }
    }
    return ranks_of;
  }

  void CheckMicrobatch(std::int64_t m) {
    const RankIds& ranks = schedule_.microbatches[static_cast<std::size_t>(m)].rank_ids;
    if (static_cast<std::int64_t>(ranks.size()) != options_.total_gpus) Find(1, m, -1, {});
    CheckIdsOnce(m, ranks);
    std::map<SampleId, std::int64_t> cp_of;
    for (const auto& [id, holding] : RanksOfSamples(m, ranks)) {
      CheckRuns(m, id, holding);
      const auto cp = static_cast<std::int64_t>(holding.size());
      cp_of[id] = cp;
      if (!IsPowerOfTwo(cp) && cp != options_.total_gpus) Find(3, m, holding.front(), {id});
      if (cp < CpMin(len_of_.at(id), options_.max_seq_len_per_rank, options_.min_cp_size)) {
        Find(6, m, holding.front(), {id});
      }
    }
    CheckRankLoads(m, ranks, cp_of);
    CheckRuntimeGroups(m, ranks);
  }

  // `holding` (a sample's ranks, increasing, each once) is [first, end).
  static bool HeldByExactly(const std::vector<std::int64_t>& holding,
                            const std::pair<std::int64_t, std::int64_t>& group) {
    return static_cast<std::int64_t>(holding.size()) == group.second - group.first &&
           holding.front() == group.first && holding.back() == group.second - 1;
  }

  // Invariant 11, rank by rank: the rank's first sample (when it belongs
  // here) is held by c ranks; the runtime hands the rank its group of size
  // c, and every sample on the rank that belongs here must be held by
  // exactly that group's ranks. A CP group is reported once, at its first
  // rank, with what its first breaking rank shows.
  void CheckRuntimeGroups(std::int64_t m, const RankIds& ranks) {
    const std::map<SampleId, std::vector<std::int64_t>> ranks_of = RanksOfSamples(m, ranks);
    std::int64_t group_start = 0;
    std::int64_t reported_group = -1;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (OpensGroup(ranks, r)) group_start = static_cast<std::int64_t>(r);
      if (ranks[r].empty() || !BelongsTo(ranks[r].front(), m)) continue;
      if (reported_group == group_start) continue;
      const SampleId first = ranks[r].front();
      const auto cp = static_cast<std::int64_t>(ranks_of.at(first).size());
      const std::optional<std::pair<std::int64_t, std::int64_t>> group = RuntimeGroupBounds(
          static_cast<std::int64_t>(r), cp, options_.total_gpus, options_.min_cp_size);
      std::vector<SampleId> broken;
      if (!group.has_value()) {
        broken.push_back(first);
      } else {
        for (const SampleId id : ranks[r]) {
          if (BelongsTo(id, m) && !HeldByExactly(ranks_of.at(id), *group)) broken.push_back(id);
        }
      }
      if (broken.empty()) continue;
      Find(11, m, group_start, std::move(broken));
      reported_group = group_start;
    }
  }

  // Invariants 1 and 2 within the lists of one microbatch: an empty CP
  // group, an unknown id (each time), a sample that belongs to an earlier
  // microbatch (once, where first seen here), an id again in one list.
  void CheckIdsOnce(std::int64_t m, const RankIds& ranks) {
    std::map<SampleId, bool> seen_from_elsewhere;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (!OpensGroup(ranks, r)) continue;
      const auto rank = static_cast<std::int64_t>(r);
      if (ranks[r].empty()) Find(1, m, rank, {});
      std::map<SampleId, int> times_in_list;
      for (const SampleId id : ranks[r]) {
        if (!len_of_.contains(id)) {
          Find(2, m, rank, {id});
        } else if (!BelongsTo(id, m)) {
          if (!seen_from_elsewhere[id]) Find(2, m, rank, {id});
          seen_from_elsewhere[id] = true;
        } else if (++times_in_list[id] > 1) {
          Find(2, m, rank, {id});
        }
      }
    }
  }

  // Invariant 2: a sample's ranks in its microbatch are one contiguous run;
  // each further run is a finding at its first rank.
  void CheckRuns(std::int64_t m, SampleId id, const std::vector<std::int64_t>& holding) {
    for (std::size_t i = 1; i < holding.size(); ++i) {
      if (holding[i] != holding[i - 1] + 1) Find(2, m, holding[i], {id});
    }
  }

  // Invariants 4, 5 and 10, once per CP group: the tokens and work of the
  // samples that belong here, summed in list order from 0, and the length
  // of the whole list.
  void CheckRankLoads(std::int64_t m, const RankIds& ranks,
                      const std::map<SampleId, std::int64_t>& cp_of) {
    std::int64_t tallest = 0;
    for (const auto& [id, cp] : cp_of) tallest = std::max(tallest, len_of_.at(id));
    const double cap = WorkCap(tallest, options_.max_seq_len_per_rank);
    const auto budget = static_cast<double>(options_.max_seq_len_per_rank);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (!OpensGroup(ranks, r)) continue;
      const auto rank = static_cast<std::int64_t>(r);
      double tokens = 0.0;
      double work = 0.0;
      std::vector<SampleId> counted;
      for (const SampleId id : ranks[r]) {
        if (!BelongsTo(id, m)) continue;
        tokens += TokensPerRank(len_of_.at(id), cp_of.at(id));
        work += Work(len_of_.at(id), cp_of.at(id));
        counted.push_back(id);
      }
      if (tokens > budget) Find(4, m, rank, counted);
      if (work > cap) Find(5, m, rank, counted);
      if (options_.max_num_seqs.has_value() &&
          static_cast<std::int64_t>(ranks[r].size()) > *options_.max_num_seqs) {
        Find(10, m, rank, ranks[r]);
      }
    }
  }

  void CheckEverySamplePlaced() {
    std::vector<SampleId> missing;
    for (const Sample& sample : samples_) {
      if (!home_.contains(sample.id)) missing.push_back(sample.id);
    }
    if (!missing.empty()) Find(2, -1, -1, missing);
  }

  void CheckVppMultiple() {
    const std::int64_t vpp = options_.vpp_group.value_or(1);
    const auto count = static_cast<std::int64_t>(schedule_.microbatches.size());
    if (vpp > 1 && count % vpp != 0) Find(8, -1, -1, {});
  }

  const absl::Span<const Sample> samples_;
  const Schedule& schedule_;
  const DynamicCpOptions& options_;
  std::map<SampleId, std::int64_t> len_of_;
  std::map<SampleId, std::int64_t> home_;  // the microbatch each placed sample belongs to
  std::vector<ReferenceFinding> findings_;
};

}  // namespace

std::vector<ReferenceFinding> ReferenceFindViolations(absl::Span<const Sample> samples,
                                                      const Schedule& schedule,
                                                      const DynamicCpOptions& options) {
  if (!ValidateDynamicCpProblem(samples, options).ok()) return {};
  return ReferenceChecker(samples, schedule, options).Run();
}

}  // namespace dcpsched::oracle

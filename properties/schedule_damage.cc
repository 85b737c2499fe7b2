#include "properties/schedule_damage.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/types.h"
#include "properties/generators.h"
#include "rapidcheck.h"

namespace dcpsched::properties {
namespace {

using RankIds = std::vector<std::vector<SampleId>>;

std::size_t Pick(std::size_t count) { return *rc::gen::inRange<std::size_t>(0, count); }

// Any input id, or an id some rank holds (which may be a stranger after an
// earlier damage), or one no input sample has.
SampleId PickId(const std::vector<Sample>& samples, const Schedule& schedule) {
  switch (*GenCase(4)) {
    case 0:
    case 1:
      if (!samples.empty()) return samples[Pick(samples.size())].id;
      break;
    case 2:
      for (const Microbatch& microbatch : schedule.microbatches) {
        for (const auto& rank : microbatch.rank_ids) {
          if (!rank.empty()) return rank[Pick(rank.size())];
        }
      }
      break;
    default:
      break;
  }
  SampleId largest = 0;
  for (const Sample& sample : samples) largest = std::max(largest, sample.id);
  return largest < std::numeric_limits<SampleId>::max() ? largest + 1
                                                        : std::numeric_limits<SampleId>::min();
}

// The first and last rank of m that hold `id`, or nothing.
bool RunOf(const RankIds& ranks, SampleId id, std::size_t& first, std::size_t& last) {
  bool found = false;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (std::find(ranks[r].begin(), ranks[r].end(), id) == ranks[r].end()) continue;
    if (!found) first = r;
    last = r;
    found = true;
  }
  return found;
}

void EraseEverywhere(RankIds& ranks, SampleId id) {
  for (auto& rank : ranks) std::erase(rank, id);
}

// Adds `id` to ranks [first, first + count) of `ranks`, at the end of each
// list or at its front.
void AddToRun(RankIds& ranks, SampleId id, std::size_t first, std::size_t count, bool at_end) {
  for (std::size_t r = first; r < first + count && r < ranks.size(); ++r) {
    if (at_end) {
      ranks[r].push_back(id);
    } else {
      ranks[r].insert(ranks[r].begin(), id);
    }
  }
}

// A run of ranks of `ranks` (not empty): its first rank and length, mostly
// short, sometimes all of them.
std::pair<std::size_t, std::size_t> PickRun(const RankIds& ranks) {
  const std::size_t first = Pick(ranks.size());
  const std::size_t room = ranks.size() - first;
  const std::size_t count = *rc::gen::weightedOneOf<std::size_t>(
      {{3, rc::gen::just<std::size_t>(1)},
       {2, rc::gen::inRange<std::size_t>(1, std::min<std::size_t>(room, 4) + 1)},
       {1, rc::gen::just(room)}});
  return {first, count};
}

// The shortest sample of m's lists, taken off its ranks and put on the rank
// that carries the most work (len^2 over the ranks holding each sample).
std::string MoveShortestOntoBusiest(RankIds& ranks, const std::vector<Sample>& samples) {
  std::map<SampleId, std::int64_t> len_of;
  for (const Sample& sample : samples) len_of[sample.id] = sample.len;
  std::map<SampleId, std::int64_t> ranks_holding;
  for (const auto& rank : ranks) {
    for (const SampleId id : rank) ++ranks_holding[id];
  }
  SampleId shortest = 0;
  std::int64_t shortest_len = std::numeric_limits<std::int64_t>::max();
  for (const auto& [id, count] : ranks_holding) {
    const auto found = len_of.find(id);
    if (found != len_of.end() && found->second < shortest_len) {
      shortest = id;
      shortest_len = found->second;
    }
  }
  if (shortest_len == std::numeric_limits<std::int64_t>::max()) return "nothing to move";
  std::size_t busiest = 0;
  double most = -1.0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    double work = 0.0;
    for (const SampleId id : ranks[r]) {
      const auto found = len_of.find(id);
      if (found == len_of.end()) continue;
      work += static_cast<double>(found->second) * static_cast<double>(found->second) /
              static_cast<double>(ranks_holding[id]);
    }
    if (work > most) {
      most = work;
      busiest = r;
    }
  }
  EraseEverywhere(ranks, shortest);
  ranks[busiest].push_back(shortest);
  return absl::StrCat("moved shortest ", shortest, " onto busiest rank ", busiest);
}

// Invariant 11's damages (runtime_groups.h): each keeps every sample on one
// contiguous run where it can, so only the runtime's groups are wrong.
// Rotates every rank's list `shift` ranks to the right: aligned CP groups
// become misaligned ones (the group wrapping past the last rank is split).
std::string ShiftRanks(RankIds& ranks) {
  if (ranks.size() < 2) return "too few ranks to shift";
  const std::size_t shift = 1 + Pick(ranks.size() - 1);
  std::rotate(ranks.rbegin(), ranks.rbegin() + static_cast<std::ptrdiff_t>(shift),
              ranks.rend());
  return absl::StrCat("shifted every list ", shift, " ranks to the right");
}

// Puts the first id of the CP group at rank r onto the next group as well,
// at the end of its lists: that sample spans both groups while the others
// stay on one ([[0, 1], [0, 1], [1, 2], [1, 2]]: nested groups).
std::string NestIntoNextGroup(RankIds& ranks, std::size_t r) {
  if (ranks[r].empty()) return "nothing to nest";
  std::size_t next = r;
  while (next < ranks.size() && ranks[next] == ranks[r]) ++next;
  if (next == ranks.size()) return "no group after it to nest into";
  const SampleId id = ranks[r].front();
  const std::vector<SampleId> group = ranks[next];
  for (std::size_t q = next; q < ranks.size() && ranks[q] == group; ++q) {
    ranks[q].push_back(id);
  }
  return absl::StrCat("nested ", id, " into the group at rank ", next);
}

// Makes ranks 0 to w - 1 one CP group holding all their ids, w the largest
// power of two at most the width: at a G that is not a power of two, a
// size the runtime never creates (8 of 12).
std::string MergeLeadingPowerOfTwo(RankIds& ranks) {
  std::size_t width = 1;
  while (width * 2 <= ranks.size()) width *= 2;
  std::vector<SampleId> merged;
  for (std::size_t r = 0; r < width; ++r) {
    for (const SampleId id : ranks[r]) {
      if (std::find(merged.begin(), merged.end(), id) == merged.end()) merged.push_back(id);
    }
  }
  for (std::size_t r = 0; r < width; ++r) ranks[r] = merged;
  return absl::StrCat("merged ranks 0-", width - 1, " into one group");
}

// One damage to microbatch m (which has at least one rank), described.
std::string DamageRanks(RankIds& ranks, const std::vector<Sample>& samples,
                        const Schedule& schedule) {
  const std::size_t r = Pick(ranks.size());
  switch (*GenCase(14)) {
    case 11:
      return ShiftRanks(ranks);
    case 12:
      return NestIntoNextGroup(ranks, r);
    case 13:
      return MergeLeadingPowerOfTwo(ranks);
    case 0: {
      if (ranks[r].empty()) return "nothing to remove";
      const std::size_t at = Pick(ranks[r].size());
      const SampleId id = ranks[r][at];
      ranks[r].erase(ranks[r].begin() + static_cast<std::ptrdiff_t>(at));
      return absl::StrCat("removed ", id, " from rank ", r);
    }
    case 1: {
      const SampleId id = PickId(samples, schedule);
      EraseEverywhere(ranks, id);
      return absl::StrCat("removed ", id, " from every rank");
    }
    case 2: {
      const SampleId id = PickId(samples, schedule);
      const auto [first, count] = PickRun(ranks);
      const bool at_end = *rc::gen::arbitrary<bool>();
      AddToRun(ranks, id, first, count, at_end);
      return absl::StrCat("added ", id, " to ", count, " ranks from ", first,
                          at_end ? "" : " at the front");
    }
    case 3: {
      if (ranks[r].empty()) return "nothing to move";
      const SampleId id = ranks[r][Pick(ranks[r].size())];
      EraseEverywhere(ranks, id);
      const auto [first, count] = PickRun(ranks);
      AddToRun(ranks, id, first, count, true);
      return absl::StrCat("moved ", id, " to ", count, " ranks from ", first);
    }
    case 4: {
      if (ranks[r].empty()) return "nothing to widen or narrow";
      const SampleId id = ranks[r][Pick(ranks[r].size())];
      std::size_t first = 0;
      std::size_t last = 0;
      RunOf(ranks, id, first, last);
      switch (*GenCase(4)) {
        case 0:
          if (first == 0) return "no rank before the run";
          ranks[first - 1].push_back(id);
          return absl::StrCat("widened ", id, " onto rank ", first - 1);
        case 1:
          if (last + 1 == ranks.size()) return "no rank after the run";
          ranks[last + 1].push_back(id);
          return absl::StrCat("widened ", id, " onto rank ", last + 1);
        case 2:
          std::erase(ranks[first], id);
          return absl::StrCat("narrowed ", id, " off rank ", first);
        default:
          std::erase(ranks[last], id);
          return absl::StrCat("narrowed ", id, " off rank ", last);
      }
    }
    case 5:
      return MoveShortestOntoBusiest(ranks, samples);
    case 6:
      if (ranks[r].empty()) return "nothing to repeat";
      ranks[r].push_back(ranks[r][Pick(ranks[r].size())]);
      return absl::StrCat("repeated an id in rank ", r, "'s list");
    case 7:
      ranks[r].clear();
      return absl::StrCat("emptied rank ", r);
    case 8: {
      std::vector<SampleId>& list = ranks[r];
      list = *rc::gen::container<std::vector<SampleId>>(
          list.size(), rc::gen::elementOf(list.empty() ? std::vector<SampleId>{0} : list));
      return absl::StrCat("redrew rank ", r, "'s list from its own ids");
    }
    case 9: {
      const std::size_t other = Pick(ranks.size());
      std::swap(ranks[r], ranks[other]);
      return absl::StrCat("swapped ranks ", r, " and ", other);
    }
    default:
      switch (*GenCase(3)) {
        case 0:
          ranks.erase(ranks.begin() + static_cast<std::ptrdiff_t>(r));
          return absl::StrCat("dropped rank ", r);
        case 1:
          ranks.insert(ranks.begin() + static_cast<std::ptrdiff_t>(r), ranks[r]);
          return absl::StrCat("repeated rank ", r);
        default:
          ranks.emplace_back();
          return "added an empty rank";
      }
  }
}

std::string DamageMicrobatches(Schedule& schedule, std::int64_t gpus) {
  auto& microbatches = schedule.microbatches;
  const std::size_t m = Pick(microbatches.size());
  switch (*GenCase(4)) {
    case 0:
      microbatches.erase(microbatches.begin() + static_cast<std::ptrdiff_t>(m));
      return absl::StrCat("dropped microbatch ", m);
    case 1:
      microbatches.push_back(microbatches[m]);
      return absl::StrCat("repeated microbatch ", m, " at the end");
    case 2: {
      const std::size_t other = Pick(microbatches.size());
      std::swap(microbatches[m], microbatches[other]);
      return absl::StrCat("swapped microbatches ", m, " and ", other);
    }
    default:
      if (*rc::gen::arbitrary<bool>()) {
        microbatches.emplace_back();
        return "added a microbatch of no ranks";
      }
      microbatches.push_back(Microbatch{RankIds(static_cast<std::size_t>(gpus))});
      return "added a microbatch of G empty ranks";
  }
}

std::string DamageOptions(DynamicCpOptions& options, const Schedule& schedule) {
  std::int64_t busiest = 0;
  for (const Microbatch& microbatch : schedule.microbatches) {
    for (const auto& rank : microbatch.rank_ids) {
      busiest = std::max(busiest, static_cast<std::int64_t>(rank.size()));
    }
  }
  switch (*GenCase(4)) {
    case 0:
      options.max_num_seqs = *rc::gen::inRange<std::int64_t>(1, busiest + 2);
      return absl::StrCat("max_num_seqs ", *options.max_num_seqs);
    case 1:
      options.vpp_group = *rc::gen::inRange<std::int64_t>(1, 5);
      return absl::StrCat("vpp_group ", *options.vpp_group);
    case 2: {
      std::int64_t min_cp = 1;
      const int doublings = *rc::gen::inRange(0, 4);
      for (int i = 0; i < doublings && min_cp * 2 <= options.total_gpus; ++i) min_cp *= 2;
      options.min_cp_size = min_cp;
      return absl::StrCat("min_cp_size ", min_cp);
    }
    default:
      options.max_seq_len_per_rank =
          std::max<std::int64_t>(1, options.max_seq_len_per_rank -
                                        *rc::gen::inRange<std::int64_t>(
                                            1, options.max_seq_len_per_rank / 2 + 2));
      return absl::StrCat("max_seq_len_per_rank ", options.max_seq_len_per_rank);
  }
}

}  // namespace

rc::Gen<DamagedSchedule> GenDamagedSchedule(const std::vector<Sample>& samples,
                                            const Schedule& schedule,
                                            const DynamicCpOptions& options) {
  return rc::gen::exec([samples, schedule, options] {
    DamagedSchedule damaged{schedule, options, {}};
    const int count = *rc::gen::weightedOneOf<int>(
        {{1, rc::gen::just(0)}, {15, rc::gen::inRange(1, 5)}});
    for (int i = 0; i < count; ++i) {
      auto& microbatches = damaged.schedule.microbatches;
      const int kind = *GenCase(8);
      if (kind == 0 || microbatches.empty()) {
        if (microbatches.empty()) {
          damaged.damages.push_back("no microbatch to damage");
          continue;
        }
        damaged.damages.push_back(DamageMicrobatches(damaged.schedule, options.total_gpus));
      } else if (kind == 1) {
        damaged.damages.push_back(DamageOptions(damaged.options, damaged.schedule));
      } else {
        const std::size_t m = Pick(microbatches.size());
        RankIds& ranks = microbatches[m].rank_ids;
        if (ranks.empty()) {
          damaged.damages.push_back(absl::StrCat("microbatch ", m, " has no rank to damage"));
          continue;
        }
        damaged.damages.push_back(
            absl::StrCat("microbatch ", m, ": ", DamageRanks(ranks, samples, damaged.schedule)));
      }
    }
    return damaged;
  });
}

void showValue(const DamagedSchedule& damaged, std::ostream& os) {
  os << "damages: " << absl::StrJoin(damaged.damages, "; ");
}

}  // namespace dcpsched::properties

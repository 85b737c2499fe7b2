#include "core/cost_aware_plan.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/compact_schedule.h"
#include "core/cost_aware_plan_steps.h"
#include "core/cost_model.h"
#include "core/room_index.h"
#include "core/runtime_groups.h"
#include "core/sample_costs.h"

namespace dcpsched {
namespace plan_steps {
namespace {

// Whether `group` can take sample i within the token budget and max_num_seqs.
bool CanTake(const SampleCosts& costs, const PlannedGroup& group, std::size_t i) {
  const DynamicCpOptions& options = costs.options();
  if (options.max_num_seqs.has_value() &&
      static_cast<std::int64_t>(group.members.size()) >= *options.max_num_seqs) {
    return false;
  }
  return group.tokens + TokensPerRank(costs.sample(i).len, group.size) <=
         static_cast<double>(options.max_seq_len_per_rank);
}

// Whether `group` may take any further sample under max_num_seqs.
bool CanTakeAnother(const SampleCosts& costs, const PlannedGroup& group) {
  const DynamicCpOptions& options = costs.options();
  return !options.max_num_seqs.has_value() ||
         static_cast<std::int64_t>(group.members.size()) < *options.max_num_seqs;
}

// The seconds of `group` with sample i added (CanTake holds).
double SecondsWith(SampleCosts& costs, const PlannedGroup& group, std::size_t i) {
  const std::size_t k = group.size_index;
  return costs.RankSeconds(group.tokens + TokensPerRank(costs.sample(i).len, group.size),
                           group.attention + costs.Attention(i, k));
}

// Adds sample i to `group`'s members and sums, leaving its seconds stale.
void AddUnsealed(SampleCosts& costs, PlannedGroup& group, std::size_t i) {
  const std::size_t k = group.size_index;
  group.members.push_back(i);
  group.tokens += TokensPerRank(costs.sample(i).len, group.size);
  group.attention += costs.Attention(i, k);
}

void Add(SampleCosts& costs, PlannedGroup& group, std::size_t i) {
  AddUnsealed(costs, group, i);
  group.seconds = costs.RankSeconds(group.tokens, group.attention);
}

// A group of `size` ranks holding `members`, its per-rank sums added in
// member order (the order in which MeasureScheduleTime and the checker add
// them).
PlannedGroup MakeGroup(SampleCosts& costs, std::int64_t size,
                       const std::vector<std::size_t>& members) {
  PlannedGroup group{.size = size, .size_index = costs.SizeIndex(size)};
  for (const std::size_t i : members) AddUnsealed(costs, group, i);
  group.seconds = costs.RankSeconds(group.tokens, group.attention);
  return group;
}

std::int64_t UsedRanks(const PlannedMicrobatch& microbatch) {
  std::int64_t used = 0;
  for (const PlannedGroup& group : microbatch.groups) used += group.size;
  return used;
}

}  // namespace

double MicrobatchSeconds(const PlannedMicrobatch& microbatch) {
  double seconds = 0.0;
  for (const PlannedGroup& group : microbatch.groups) {
    seconds = std::max(seconds, group.seconds);
  }
  return seconds;
}

namespace {

std::size_t MemberCount(const PlannedMicrobatch& microbatch) {
  std::size_t count = 0;
  for (const PlannedGroup& group : microbatch.groups) count += group.members.size();
  return count;
}

}  // namespace

// Step 1: each sample's size index for `target`, at least `floor`.
std::vector<std::size_t> ChooseSizes(SampleCosts& costs, double target, std::size_t floor) {
  const std::size_t size_count = costs.sizes().size();
  std::vector<std::size_t> chosen(costs.sample_count());
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    std::size_t k = std::max(costs.first_size(i), floor);
    while (k < size_count && costs.Alone(i, k) > target) ++k;
    if (k == size_count) {
      k = std::max(costs.first_size(i), floor);
      for (std::size_t other = k + 1; other < size_count; ++other) {
        if (costs.Alone(i, other) < costs.Alone(i, k)) k = other;
      }
    }
    chosen[i] = k;
  }
  return chosen;
}

// Step 2: the samples `members` (each with its size index in `sizes`)
// stacked into groups, slowest first, within `target`.
// `presorted`: `members` are in the order of the key below at each
// sample's smallest size.
std::vector<PlannedGroup> StackGroups(SampleCosts& costs,
                                      std::vector<std::size_t> members,
                                      const std::vector<std::size_t>& sizes,
                                      double target, bool presorted) {
  // Sort keys side by side, so the sort reads no table.
  struct Key {
    std::size_t size;
    double seconds;
    std::int64_t len;
    std::size_t index;
  };
  const auto key_of = [&](std::size_t i) {
    return Key{sizes[i], costs.Alone(i, sizes[i]), costs.sample(i).len, i};
  };
  const auto before = [](const Key& a, const Key& b) {
    if (a.size != b.size) return a.size > b.size;
    if (a.seconds != b.seconds) return a.seconds > b.seconds;
    if (a.len != b.len) return a.len > b.len;
    return a.index < b.index;
  };
  // The samples at their smallest size keep the order sorted once
  // (`presorted`, when given) and stay at the front of `members`; only the
  // widened ones are sorted here, then merged in. (Indices, not keys, for
  // the many: a plan is made per target, and its buffers stay small.)
  std::vector<Key> moved;
  std::size_t kept = 0;
  for (const std::size_t i : members) {
    if (presorted && sizes[i] == costs.first_size(i)) {
      members[kept++] = i;
    } else {
      moved.push_back(key_of(i));
    }
  }
  std::sort(moved.begin(), moved.end(), before);
  if (!moved.empty()) {
    std::vector<std::size_t> merged;
    merged.reserve(members.size());
    std::size_t a = 0;
    for (const Key& key : moved) {
      while (a < kept && before(key_of(members[a]), key)) merged.push_back(members[a++]);
      merged.push_back(key.index);
    }
    merged.insert(merged.end(), members.begin() + static_cast<std::ptrdiff_t>(a),
                  members.begin() + static_cast<std::ptrdiff_t>(kept));
    members = std::move(merged);
  }
  std::vector<PlannedGroup> groups;
  groups.reserve(members.size());
  // Per size, its open groups by the tokens each rank has room for, and the
  // most recently opened ones.
  const double budget = static_cast<double>(costs.options().max_seq_len_per_rank);
  // Made on first use: most sizes never hold a group.
  std::vector<std::optional<RoomIndex>> by_room(costs.sizes().size());
  std::vector<std::vector<std::size_t>> recent(costs.sizes().size());
  const bool timed = std::isfinite(target);
  const auto fits = [&](std::size_t g, std::size_t i) {
    return CanTake(costs, groups[g], i) &&
           (!timed || SecondsWith(costs, groups[g], i) <= target);
  };
  const auto place = [&](std::size_t i) -> std::size_t {
    const std::size_t k = sizes[i];
    const auto fits_i = [&](std::size_t g) { return fits(g, i); };
    const auto best_fit = [&](std::size_t size) {
      if (!by_room[size].has_value() || by_room[size]->empty()) return RoomIndex::kNone;
      return by_room[size]->Find(TokensPerRank(costs.sample(i).len, costs.sizes()[size]),
                                kStackTries, fits_i);
    };
    if (const std::size_t g = best_fit(k); g != RoomIndex::kNone) return g;
    const std::vector<std::size_t>& last = recent[k];
    for (std::size_t r = last.size() > kRecentGroups ? last.size() - kRecentGroups : 0;
         r < last.size(); ++r) {
      if (fits(last[r], i)) return last[r];
    }
    for (std::size_t wider = k + 1; wider < costs.sizes().size(); ++wider) {
      if (const std::size_t g = best_fit(wider); g != RoomIndex::kNone) return g;
    }
    groups.push_back(PlannedGroup{.size = costs.sizes()[k], .size_index = k});
    recent[k].push_back(groups.size() - 1);
    return groups.size() - 1;
  };
  for (const std::size_t i : members) {
    const std::size_t g = place(i);
    const std::size_t k = groups[g].size_index;
    if (by_room[k].has_value()) by_room[k]->Erase(g);
    AddUnsealed(costs, groups[g], i);
    const double room = budget - groups[g].tokens;
    // A group with less room than a one-token sample needs is full.
    if (CanTakeAnother(costs, groups[g]) && room >= TokensPerRank(1, groups[g].size)) {
      if (!by_room[k].has_value()) by_room[k].emplace(budget);
      by_room[k]->Insert(g, room);
    }
  }
  for (PlannedGroup& group : groups) {
    group.seconds = costs.RankSeconds(group.tokens, group.attention);
  }
  return groups;
}

// Step 3: `groups` packed, slowest first, into microbatches of G ranks.
std::vector<PlannedMicrobatch> PackMicrobatches(std::vector<PlannedGroup> groups,
                                                std::int64_t total_gpus) {
  std::vector<std::size_t> order(groups.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (groups[a].seconds != groups[b].seconds) return groups[a].seconds > groups[b].seconds;
    if (groups[a].size != groups[b].size) return groups[a].size > groups[b].size;
    return a < b;
  });
  std::vector<PlannedMicrobatch> microbatches;
  std::vector<std::int64_t> used;
  std::size_t first_open = 0;
  for (const std::size_t g : order) {
    while (first_open < used.size() && used[first_open] == total_gpus) ++first_open;
    std::size_t m = first_open;
    const std::size_t last = std::min(used.size(), first_open + kMicrobatchWindow);
    while (m < last && used[m] + groups[g].size > total_gpus) ++m;
    if (m == last) {
      m = used.size();
      microbatches.emplace_back();
      used.push_back(0);
    }
    used[m] += groups[g].size;
    microbatches[m].groups.push_back(std::move(groups[g]));
  }
  return microbatches;
}

// The two halves of splitting `group` (>= 2 members): members by attention,
// largest first, each to the half whose ranks are faster so far.
std::pair<PlannedGroup, PlannedGroup> SplitGroup(SampleCosts& costs,
                                                  const PlannedGroup& group) {
  const std::size_t k = group.size_index;
  std::vector<std::size_t> members = group.members;
  std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
    return costs.Attention(a, k) > costs.Attention(b, k);
  });
  PlannedGroup first{.size = group.size, .size_index = k};
  PlannedGroup second{.size = group.size, .size_index = k};
  for (const std::size_t i : members) {
    if (first.members.empty()) {
      Add(costs, first, i);
    } else if (second.members.empty() || second.seconds < first.seconds) {
      Add(costs, second, i);
    } else {
      Add(costs, first, i);
    }
  }
  return {std::move(first), std::move(second)};
}

namespace {

// A way to fill free ranks of a microbatch with one of its groups.
struct FillMove {
  double microbatch_seconds = 0.0;  // the microbatch's time after it
  double change = 0.0;              // the group's time after minus before
  int kind = 0;                     // 0 split, 1 widen
  std::size_t group = 0;

  auto Key() const { return std::tie(microbatch_seconds, change, kind, group); }
};

// The moves of one group, cached while the group is unchanged.
struct GroupMoves {
  std::optional<std::pair<PlannedGroup, PlannedGroup>> split;
  std::optional<PlannedGroup> widened;
};

GroupMoves MovesOf(SampleCosts& costs, const PlannedGroup& group) {
  GroupMoves moves;
  if (group.members.size() >= 2) moves.split = SplitGroup(costs, group);
  const std::int64_t doubled = group.size * 2;
  if (doubled <= costs.options().total_gpus &&
      RuntimeHasGroupSize(doubled, costs.options())) {
    moves.widened = MakeGroup(costs, doubled, group.members);
  }
  return moves;
}

}  // namespace

// Step 4: fills the free ranks of `microbatch` by splitting and widening.
// False when no move can (its free ranks are then as before the last move).
bool FillByMoves(SampleCosts& costs, PlannedMicrobatch& microbatch) {
  const std::int64_t total_gpus = costs.options().total_gpus;
  std::int64_t free = total_gpus - UsedRanks(microbatch);
  std::vector<GroupMoves> moves;
  moves.reserve(microbatch.groups.size());
  for (const PlannedGroup& group : microbatch.groups) moves.push_back(MovesOf(costs, group));
  while (free > 0) {
    // The slowest and second slowest group, for the time without one.
    std::size_t slowest = 0;
    double second = 0.0;
    for (std::size_t g = 1; g < microbatch.groups.size(); ++g) {
      if (microbatch.groups[g].seconds > microbatch.groups[slowest].seconds) slowest = g;
    }
    for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
      if (g != slowest) second = std::max(second, microbatch.groups[g].seconds);
    }
    std::optional<FillMove> best;
    const auto consider = [&](FillMove move) {
      if (!best.has_value() || move.Key() < best->Key()) best = std::move(move);
    };
    for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
      const PlannedGroup& group = microbatch.groups[g];
      if (group.size > free) continue;
      const double others = g == slowest ? second : microbatch.groups[slowest].seconds;
      if (moves[g].split.has_value()) {
        const auto& [a, b] = *moves[g].split;
        const double part = std::max(a.seconds, b.seconds);
        consider({std::max(others, part), part - group.seconds, 0, g});
      }
      if (moves[g].widened.has_value()) {
        const double part = moves[g].widened->seconds;
        consider({std::max(others, part), part - group.seconds, 1, g});
      }
    }
    if (!best.has_value()) return false;
    const std::size_t g = best->group;
    if (best->kind == 0) {
      auto [a, b] = *std::move(moves[g].split);
      free -= a.size;
      microbatch.groups[g] = std::move(a);
      moves[g] = MovesOf(costs, microbatch.groups[g]);
      microbatch.groups.push_back(std::move(b));
      moves.push_back(MovesOf(costs, microbatch.groups.back()));
    } else {
      free -= microbatch.groups[g].size;
      microbatch.groups[g] = *std::move(moves[g].widened);
      moves[g] = MovesOf(costs, microbatch.groups[g]);
    }
  }
  return true;
}

namespace {

// Step 4 where the moves, made greedily, leave free ranks that no group fits
// (G not a power of two: at G = 5, whose groups have 1, 2 or 5 ranks, two
// one-rank groups widened to two leave one rank free): the same moves, and
// a sample leaving its group for one of its own (no smaller than
// sizes()[floor]), searched depth first from `microbatch` with `free` ranks
// free, at most `budget` moves in all, keeping in `best` the fastest
// microbatch found with no free rank.
void SearchFills(SampleCosts& costs, std::size_t floor, const PlannedMicrobatch& microbatch,
                 std::int64_t free, std::size_t& budget,
                 std::optional<PlannedMicrobatch>& best) {
  if (free == 0) {
    if (!best.has_value() || MicrobatchSeconds(microbatch) < MicrobatchSeconds(*best)) {
      best = microbatch;
    }
    return;
  }
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const PlannedGroup& group = microbatch.groups[g];
    if (group.size > free) continue;
    // Every move of `group` uses group.size free ranks.
    const GroupMoves moves = MovesOf(costs, group);
    if (moves.split.has_value()) {
      if (budget == 0) return;
      --budget;
      PlannedMicrobatch next = microbatch;
      next.groups[g] = moves.split->first;
      next.groups.push_back(moves.split->second);
      SearchFills(costs, floor, next, free - group.size, budget, best);
    }
    if (moves.widened.has_value()) {
      if (budget == 0) return;
      --budget;
      PlannedMicrobatch next = microbatch;
      next.groups[g] = *moves.widened;
      SearchFills(costs, floor, next, free - group.size, budget, best);
    }
  }
  // And one more move: a sample leaves a group of several for a group of
  // its own at its smallest size (at G = 7, whose groups have 1, 2 or 7
  // ranks, a one-token sample stacked beside a long one on two ranks fills
  // the last rank alone).
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const PlannedGroup& group = microbatch.groups[g];
    if (group.members.size() < 2) continue;
    for (std::size_t p = 0; p < group.members.size(); ++p) {
      const std::size_t i = group.members[p];
      const std::int64_t size = costs.sizes()[std::max(costs.first_size(i), floor)];
      if (size > free) continue;
      if (budget == 0) return;
      --budget;
      std::vector<std::size_t> rest = group.members;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(p));
      PlannedMicrobatch next = microbatch;
      next.groups[g] = MakeGroup(costs, group.size, std::move(rest));
      next.groups.push_back(MakeGroup(costs, size, {i}));
      SearchFills(costs, floor, next, free - size, budget, best);
    }
  }
}

}  // namespace

std::optional<PlannedMicrobatch> FillBySearch(SampleCosts& costs, std::size_t floor,
                                              const PlannedMicrobatch& microbatch) {
  std::size_t budget = kFillSearchMoves;
  std::optional<PlannedMicrobatch> best;
  SearchFills(costs, floor, microbatch, costs.options().total_gpus - UsedRanks(microbatch),
              budget, best);
  return best;
}

// The samples of `microbatch` on all G ranks, in as many microbatches as
// the token budget and max_num_seqs need.
std::vector<PlannedMicrobatch> OnAllRanks(SampleCosts& costs,
                                          const PlannedMicrobatch& microbatch) {
  std::vector<PlannedMicrobatch> result;
  const std::int64_t total_gpus = costs.options().total_gpus;
  for (const PlannedGroup& group : microbatch.groups) {
    for (const std::size_t i : group.members) {
      if (result.empty() || !CanTake(costs, result.back().groups[0], i)) {
        result.push_back(
            {{PlannedGroup{.size = total_gpus, .size_index = costs.sizes().size() - 1}}});
      }
      Add(costs, result.back().groups[0], i);
    }
  }
  return result;
}

// Step 4 for one microbatch: the filled microbatch, or more than one when
// its samples had to go on all G ranks.
std::vector<PlannedMicrobatch> Fill(SampleCosts& costs, std::size_t floor,
                                    PlannedMicrobatch microbatch) {
  if (UsedRanks(microbatch) < costs.options().total_gpus) {
    PlannedMicrobatch moved = microbatch;
    if (FillByMoves(costs, moved)) {
      microbatch = std::move(moved);
    } else if (std::optional<PlannedMicrobatch> searched = FillBySearch(costs, floor, microbatch)) {
      microbatch = *std::move(searched);
    } else {
      return OnAllRanks(costs, moved);
    }
  }
  std::vector<PlannedMicrobatch> filled;
  filled.push_back(std::move(microbatch));
  return filled;
}

namespace {

std::vector<PlannedMicrobatch> FillAll(SampleCosts& costs, std::size_t floor,
                                       std::vector<PlannedMicrobatch> microbatches) {
  std::vector<PlannedMicrobatch> filled;
  filled.reserve(microbatches.size());
  for (PlannedMicrobatch& microbatch : microbatches) {
    for (PlannedMicrobatch& part : Fill(costs, floor, std::move(microbatch))) {
      filled.push_back(std::move(part));
    }
  }
  return filled;
}

}  // namespace

// Splits `microbatch` (>= 2 samples) in two: its groups, slowest first, to
// the half with fewer ranks so far; one group is split into two groups.
std::pair<PlannedMicrobatch, PlannedMicrobatch> SplitMicrobatch(
    SampleCosts& costs, PlannedMicrobatch microbatch) {
  PlannedMicrobatch first;
  PlannedMicrobatch second;
  if (microbatch.groups.size() == 1) {
    auto [a, b] = SplitGroup(costs, microbatch.groups[0]);
    first.groups.push_back(std::move(a));
    second.groups.push_back(std::move(b));
    return {std::move(first), std::move(second)};
  }
  std::stable_sort(microbatch.groups.begin(), microbatch.groups.end(),
                   [](const PlannedGroup& a, const PlannedGroup& b) {
                     return a.seconds > b.seconds;
                   });
  std::int64_t first_ranks = 0;
  std::int64_t second_ranks = 0;
  for (PlannedGroup& group : microbatch.groups) {
    const bool to_second =
        !first.groups.empty() &&
        (second.groups.empty() || second_ranks < first_ranks);
    (to_second ? second_ranks : first_ranks) += group.size;
    (to_second ? second : first).groups.push_back(std::move(group));
  }
  return {std::move(first), std::move(second)};
}

// `microbatch` (>= 2 groups) as its group g alone and the rest: the other
// splits where halves by ranks cannot both be filled (at G = 5, four
// one-rank samples under max_num_seqs 1 fill 3 + 1 microbatches, not 2 + 2).
std::pair<PlannedMicrobatch, PlannedMicrobatch> PeelGroup(PlannedMicrobatch microbatch,
                                                          std::size_t g) {
  PlannedMicrobatch alone;
  alone.groups.push_back(std::move(microbatch.groups[g]));
  microbatch.groups.erase(microbatch.groups.begin() + static_cast<std::ptrdiff_t>(g));
  return {std::move(microbatch), std::move(alone)};
}

namespace {

double SecondsOf(const std::vector<PlannedMicrobatch>& microbatches) {
  double seconds = 0.0;
  for (const PlannedMicrobatch& microbatch : microbatches) {
    seconds += MicrobatchSeconds(microbatch);
  }
  return seconds;
}

// Both halves filled: two microbatches, or more where a half had to go on
// all G ranks.
std::vector<PlannedMicrobatch> FillHalves(
    SampleCosts& costs, std::size_t floor,
    std::pair<PlannedMicrobatch, PlannedMicrobatch> halves) {
  std::vector<PlannedMicrobatch> parts = Fill(costs, floor, std::move(halves.first));
  for (PlannedMicrobatch& part : Fill(costs, floor, std::move(halves.second))) {
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace

// Step 5: splits microbatches until their number is a multiple of vpp_group.
absl::Status AlignToVpp(SampleCosts& costs, std::size_t floor,
                        std::vector<PlannedMicrobatch>& microbatches) {
  const std::optional<std::int64_t>& vpp = costs.options().vpp_group;
  if (!vpp.has_value() || *vpp <= 1) return absl::OkStatus();
  while (static_cast<std::int64_t>(microbatches.size()) % *vpp != 0) {
    std::size_t chosen = microbatches.size();
    for (std::size_t m = 0; m < microbatches.size(); ++m) {
      if (MemberCount(microbatches[m]) < 2) continue;
      if (chosen == microbatches.size() ||
          MemberCount(microbatches[m]) > MemberCount(microbatches[chosen])) {
        chosen = m;
      }
    }
    if (chosen == microbatches.size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "every one of the ", microbatches.size(),
          " microbatches holds one sample, and their number is not a multiple of "
          "vpp_group=",
          *vpp));
    }
    std::vector<PlannedMicrobatch> parts =
        FillHalves(costs, floor, SplitMicrobatch(costs, microbatches[chosen]));
    // Where a half had to go on all G ranks, the split with one group
    // alone that makes the fewest microbatches, then the fastest.
    const std::size_t groups = microbatches[chosen].groups.size();
    const bool on_all_ranks = parts.size() > 2;
    for (std::size_t g = 0; on_all_ranks && groups >= 2 && g < groups; ++g) {
      std::vector<PlannedMicrobatch> peeled =
          FillHalves(costs, floor, PeelGroup(microbatches[chosen], g));
      if (peeled.size() < parts.size() ||
          (peeled.size() == parts.size() && SecondsOf(peeled) < SecondsOf(parts))) {
        parts = std::move(peeled);
      }
    }
    microbatches[chosen] = std::move(parts[0]);
    for (std::size_t p = 1; p < parts.size(); ++p) {
      microbatches.push_back(std::move(parts[p]));
    }
  }
  return absl::OkStatus();
}

// Orders the microbatches slowest first (stable) and sums the step.
Plan Finish(std::vector<PlannedMicrobatch> microbatches) {
  std::stable_sort(microbatches.begin(), microbatches.end(),
                   [](const PlannedMicrobatch& a, const PlannedMicrobatch& b) {
                     return MicrobatchSeconds(a) > MicrobatchSeconds(b);
                   });
  Plan plan{.microbatches = std::move(microbatches)};
  for (const PlannedMicrobatch& microbatch : plan.microbatches) {
    plan.step_seconds += MicrobatchSeconds(microbatch);
  }
  return plan;
}

}  // namespace plan_steps

using plan_steps::AlignToVpp;
using plan_steps::ChooseSizes;
using plan_steps::Fill;
using plan_steps::FillAll;
using plan_steps::Finish;
using plan_steps::PackMicrobatches;
using plan_steps::StackGroups;

absl::StatusOr<Plan> PlanForTarget(SampleCosts& costs, double target_seconds,
                                   std::size_t smallest_size) {
  const std::vector<std::size_t> sizes = ChooseSizes(costs, target_seconds, smallest_size);
  std::vector<PlannedMicrobatch> microbatches =
      FillAll(costs, smallest_size,
              PackMicrobatches(StackGroups(costs, costs.SmallestSizeOrder(), sizes,
                                           target_seconds, /*presorted=*/true),
                               costs.options().total_gpus));
  if (absl::Status status = AlignToVpp(costs, smallest_size, microbatches); !status.ok()) {
    return status;
  }
  return Finish(std::move(microbatches));
}

Plan PlanForPartition(SampleCosts& costs,
                      const std::vector<std::vector<std::size_t>>& microbatch_members) {
  std::vector<std::size_t> sizes(costs.sample_count());
  for (std::size_t i = 0; i < costs.sample_count(); ++i) sizes[i] = costs.first_size(i);
  std::vector<PlannedMicrobatch> microbatches;
  for (const std::vector<std::size_t>& members : microbatch_members) {
    for (PlannedMicrobatch& packed :
         PackMicrobatches(StackGroups(costs, members, sizes,
                                      std::numeric_limits<double>::infinity(),
                                      /*presorted=*/false),
                          costs.options().total_gpus)) {
      for (PlannedMicrobatch& filled : Fill(costs, 0, std::move(packed))) {
        microbatches.push_back(std::move(filled));
      }
    }
  }
  return Finish(std::move(microbatches));
}

CompactSchedule PlanToCompact(const SampleCosts& costs, const Plan& plan) {
  CompactSchedule schedule;
  schedule.microbatches.reserve(plan.microbatches.size());
  for (const PlannedMicrobatch& planned : plan.microbatches) {
    std::vector<const PlannedGroup*> groups;
    for (const PlannedGroup& group : planned.groups) groups.push_back(&group);
    std::stable_sort(groups.begin(), groups.end(),
                     [](const PlannedGroup* a, const PlannedGroup* b) {
                       return a->size > b->size;
                     });
    CompactMicrobatch microbatch;
    std::int64_t first_rank = 0;
    for (const PlannedGroup* group : groups) {
      CpGroupIds ids{.first_rank = first_rank, .size = group->size};
      for (const std::size_t i : group->members) ids.ids.push_back(costs.sample(i).id);
      first_rank += group->size;
      microbatch.groups.push_back(std::move(ids));
    }
    schedule.microbatches.push_back(std::move(microbatch));
  }
  return schedule;
}

}  // namespace dcpsched

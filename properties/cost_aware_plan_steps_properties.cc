// Properties of the cost-aware planner's steps (core/cost_aware_plan_steps.h),
// each held to what its header says: the plan properties check that every
// plan is valid, but a step that chooses worse than it says still makes a
// valid plan. Each property runs the steps before it on a drawn problem,
// profile, target and smallest size, as PlanForTarget runs them, and
// compares the step with a model of its description written here: sizes,
// members, tokens, attention and seconds, bit for bit. The fill search is
// held to the fastest fill of the whole tree of its moves where that tree
// has no more moves than its bound.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/cost_aware_plan.h"
#include "core/cost_aware_plan_steps.h"
#include "core/cost_model.h"
#include "core/cost_profile.h"
#include "core/room_index.h"
#include "core/runtime_groups.h"
#include "core/sample_costs.h"
#include "core/types.h"
#include "properties/cost_aware_plan_checks.h"
#include "properties/generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::cost_aware_plan_steps_properties {
namespace {

using plan_steps::MicrobatchSeconds;

// A problem of a few microbatches at any G, VPP and max_num_seqs most of
// the time, else any valid problem.
DynamicCpProblem AnyStepProblem() {
  return *rc::gen::arbitrary<bool>() ? *GenCountBoundProblem() : *GenValidProblem();
}

// A profile whose every curve is one point past any token count here, so
// every attention block and every rank's other work takes the same time:
// groups of different sizes and members then often tie in seconds, and the
// steps' tie-breaks decide.
CostProfile FlatProfile() {
  const MeasuredCurve flat{.sizes = {std::int64_t{1} << 30}, .seconds = {1e-3}};
  return CostProfile{.name = "flat",
                     .causal_attention = flat,
                     .full_attention = flat,
                     .non_attention = flat};
}

// A flat profile one time in four, else AnyProfile.
CostProfile AnyStepProfile() {
  return *rc::gen::inRange(0, 4) == 0 ? FlatProfile() : AnyProfile();
}

// A drawn problem (AnyStepProblem unless given) and profile
// (AnyStepProfile), and their cost table.
struct StepCase {
  explicit StepCase(DynamicCpProblem drawn = AnyStepProblem())
      : problem(std::move(drawn)),
        profile(AnyStepProfile()),
        costs(problem.samples, problem.options, profile) {}

  const DynamicCpProblem problem;
  const CostProfile profile;
  SampleCosts costs;
};

std::size_t AnySmallestSize(const SampleCosts& costs) {
  return static_cast<std::size_t>(
      *rc::gen::inRange<int>(0, static_cast<int>(costs.sizes().size())));
}

// A group of `size` ranks holding `members`, its sums added in member order.
PlannedGroup GroupOf(SampleCosts& costs, std::int64_t size, std::vector<std::size_t> members) {
  PlannedGroup group{.size = size, .size_index = costs.SizeIndex(size)};
  for (const std::size_t i : members) {
    group.tokens += TokensPerRank(costs.sample(i).len, size);
    group.attention += costs.Attention(i, group.size_index);
  }
  group.members = std::move(members);
  group.seconds = costs.RankSeconds(group.tokens, group.attention);
  return group;
}

std::int64_t RanksOf(const PlannedMicrobatch& microbatch) {
  std::int64_t ranks = 0;
  for (const PlannedGroup& group : microbatch.groups) ranks += group.size;
  return ranks;
}

void AssertSameGroups(const std::vector<PlannedGroup>& actual,
                      const std::vector<PlannedGroup>& expected) {
  RC_ASSERT(actual.size() == expected.size());
  for (std::size_t g = 0; g < actual.size(); ++g) {
    RC_ASSERT(actual[g].size == expected[g].size);
    RC_ASSERT(actual[g].size_index == expected[g].size_index);
    RC_ASSERT(actual[g].members == expected[g].members);
    RC_ASSERT(actual[g].tokens == expected[g].tokens);
    RC_ASSERT(actual[g].attention == expected[g].attention);
    RC_ASSERT(actual[g].seconds == expected[g].seconds);
  }
}

void AssertSameMicrobatches(const std::vector<PlannedMicrobatch>& actual,
                            const std::vector<PlannedMicrobatch>& expected) {
  RC_ASSERT(actual.size() == expected.size());
  for (std::size_t m = 0; m < actual.size(); ++m) {
    AssertSameGroups(actual[m].groups, expected[m].groups);
  }
}

// What the steps before step 3 give PlanForTarget at `target` and `floor`.
std::vector<PlannedGroup> StackedFor(SampleCosts& costs, double target, std::size_t floor) {
  return plan_steps::StackGroups(costs, costs.SmallestSizeOrder(),
                                 plan_steps::ChooseSizes(costs, target, floor), target,
                                 /*presorted=*/true);
}

std::vector<PlannedMicrobatch> PackedFor(SampleCosts& costs, double target, std::size_t floor) {
  return plan_steps::PackMicrobatches(StackedFor(costs, target, floor),
                                      costs.options().total_gpus);
}

std::vector<PlannedMicrobatch> FilledFor(SampleCosts& costs, double target, std::size_t floor) {
  std::vector<PlannedMicrobatch> filled;
  for (PlannedMicrobatch& microbatch : PackedFor(costs, target, floor)) {
    for (PlannedMicrobatch& part : plan_steps::Fill(costs, floor, std::move(microbatch))) {
      filled.push_back(std::move(part));
    }
  }
  return filled;
}

// --- step 1 ------------------------------------------------------------------

RC_GTEST_PROP(CostAwarePlanStepsProperties,
              ChooseSizesPicksTheFirstSizeUnderTheTargetElseTheFastest, ()) {
  StepCase step;
  SampleCosts& costs = step.costs;
  const double target = GenTarget(costs);
  const std::size_t floor = AnySmallestSize(costs);
  const std::vector<std::size_t> chosen = plan_steps::ChooseSizes(costs, target, floor);
  RC_ASSERT(chosen.size() == costs.sample_count());
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    const std::size_t from = std::max(costs.first_size(i), floor);
    std::optional<std::size_t> under;
    std::size_t fastest = from;
    for (std::size_t k = from; k < costs.sizes().size(); ++k) {
      if (!under.has_value() && costs.Alone(i, k) <= target) under = k;
      if (costs.Alone(i, k) < costs.Alone(i, fastest)) fastest = k;
    }
    RC_ASSERT(chosen[i] == under.value_or(fastest));
  }
}

// --- step 2 ------------------------------------------------------------------

// The open groups of one size as the header describes RoomIndex's order:
// by bucket of room (kRoomBuckets over [0, budget]), newest first within
// one.
class OpenGroups {
 public:
  explicit OpenGroups(double budget)
      : scale_(static_cast<double>(RoomIndex::kRoomBuckets - 1) / budget) {}

  void Open(std::size_t g, double room) { open_.push_back({g, room, stamp_++}); }
  void Close(std::size_t g) {
    std::erase_if(open_, [g](const Entry& entry) { return entry.group == g; });
  }
  // Up to `limit` groups that may have room for `need`, tightest bucket
  // first.
  std::vector<std::size_t> Candidates(double need, std::size_t limit) const {
    std::vector<Entry> candidates;
    for (const Entry& entry : open_) {
      if (Bucket(entry.room) >= Bucket(need)) candidates.push_back(entry);
    }
    std::sort(candidates.begin(), candidates.end(), [&](const Entry& a, const Entry& b) {
      return std::make_tuple(Bucket(a.room), b.stamp) < std::make_tuple(Bucket(b.room), a.stamp);
    });
    std::vector<std::size_t> groups;
    for (std::size_t c = 0; c < candidates.size() && c < limit; ++c) {
      groups.push_back(candidates[c].group);
    }
    return groups;
  }

 private:
  struct Entry {
    std::size_t group;
    double room;
    std::size_t stamp;
  };
  std::size_t Bucket(double room) const {
    const double last = static_cast<double>(RoomIndex::kRoomBuckets - 1);
    return static_cast<std::size_t>(std::clamp(room * scale_, 0.0, last));
  }

  double scale_;
  std::size_t stamp_ = 0;
  std::vector<Entry> open_;
};

// StackGroups as its header describes it.
std::vector<PlannedGroup> StackAsDescribed(SampleCosts& costs, std::vector<std::size_t> members,
                                           const std::vector<std::size_t>& sizes,
                                           double target) {
  const auto key = [&](std::size_t i) {
    return std::make_tuple(sizes[i], costs.Alone(i, sizes[i]), costs.sample(i).len);
  };
  std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
    return key(a) != key(b) ? key(a) > key(b) : a < b;
  });
  const DynamicCpOptions& options = costs.options();
  const double budget = static_cast<double>(options.max_seq_len_per_rank);
  const std::size_t max_members = options.max_num_seqs.has_value()
                                      ? static_cast<std::size_t>(*options.max_num_seqs)
                                      : std::numeric_limits<std::size_t>::max();
  std::vector<PlannedGroup> groups;
  std::vector<OpenGroups> open(costs.sizes().size(), OpenGroups(budget));
  const auto takes = [&](std::size_t g, std::size_t i) {
    const PlannedGroup& group = groups[g];
    const double tokens = group.tokens + TokensPerRank(costs.sample(i).len, group.size);
    return group.members.size() < max_members && tokens <= budget &&
           (std::isinf(target) ||
            costs.RankSeconds(tokens, group.attention + costs.Attention(i, group.size_index)) <=
                target);
  };
  for (const std::size_t i : members) {
    std::vector<std::size_t> tries;
    const std::size_t k = sizes[i];
    const auto best_fits = [&](std::size_t size) {
      return open[size].Candidates(TokensPerRank(costs.sample(i).len, costs.sizes()[size]),
                                   plan_steps::kStackTries);
    };
    for (const std::size_t g : best_fits(k)) tries.push_back(g);
    // The groups of its size opened last (groups are kept in the order
    // they were opened), oldest of them first.
    std::vector<std::size_t> recent;
    for (std::size_t g = groups.size(); g-- > 0 && recent.size() < plan_steps::kRecentGroups;) {
      if (groups[g].size_index == k) recent.insert(recent.begin(), g);
    }
    tries.insert(tries.end(), recent.begin(), recent.end());
    for (std::size_t wider = k + 1; wider < costs.sizes().size(); ++wider) {
      for (const std::size_t g : best_fits(wider)) tries.push_back(g);
    }
    const auto taker = std::find_if(tries.begin(), tries.end(),
                                    [&](std::size_t g) { return takes(g, i); });
    std::size_t g = groups.size();
    if (taker == tries.end()) {
      groups.push_back(GroupOf(costs, costs.sizes()[k], {}));
    } else {
      g = *taker;
    }
    PlannedGroup& group = groups[g];
    open[group.size_index].Close(g);
    std::vector<std::size_t> grown = group.members;
    grown.push_back(i);
    group = GroupOf(costs, group.size, std::move(grown));
    const double room = budget - group.tokens;
    if (group.members.size() < max_members && room >= TokensPerRank(1, group.size)) {
      open[group.size_index].Open(g, room);
    }
  }
  return groups;
}

// Where the target, not the tokens, bounds the groups: a budget of
// thousands of tokens, samples from one token to the budget of two ranks
// (one at G = 1), several open groups of one size at once.
rc::Gen<DynamicCpProblem> GenTimeBoundProblem() {
  return rc::gen::exec([] {
    DynamicCpProblem problem;
    problem.options.total_gpus = *rc::gen::inRange<std::int64_t>(1, 9);
    problem.options.max_seq_len_per_rank = *rc::gen::element<std::int64_t>(2048, 4096, 8192);
    const std::int64_t widest = problem.options.total_gpus > 1 ? 2 : 1;
    const std::int64_t longest = widest * problem.options.max_seq_len_per_rank;
    const int count = *rc::gen::inRange(12, 61);
    for (int i = 0; i < count; ++i) {
      const double position = *rc::gen::inRange(0, 1001) / 1000.0;
      problem.samples.push_back(
          {i, std::max<std::int64_t>(1, static_cast<std::int64_t>(std::pow(
                                            static_cast<double>(longest), position)))});
    }
    return problem;
  });
}

RC_GTEST_PROP(CostAwarePlanStepsProperties, StackGroupsStacksAsItsHeaderSays, ()) {
  StepCase step(*rc::gen::inRange(0, 3) == 0 ? *GenTimeBoundProblem() : AnyStepProblem());
  SampleCosts& costs = step.costs;
  const double target = GenTarget(costs);
  const std::vector<std::size_t> sizes =
      plan_steps::ChooseSizes(costs, target, AnySmallestSize(costs));
  // All samples in stacking order at their first sizes, as PlanForTarget
  // gives them, or any of them in index order, as PlanForPartition does.
  const bool all = *rc::gen::arbitrary<bool>();
  std::vector<std::size_t> members;
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    if (all || *rc::gen::arbitrary<bool>()) members.push_back(i);
  }
  if (all) members = costs.SmallestSizeOrder();
  RC_TAG(all ? "presorted" : "a part");
  const std::vector<PlannedGroup> groups =
      plan_steps::StackGroups(costs, members, sizes, target, /*presorted=*/all);
  AssertSameGroups(groups, StackAsDescribed(costs, members, sizes, target));
  // `presorted` only saves a sort.
  AssertSameGroups(groups, plan_steps::StackGroups(costs, members, sizes, target, false));
}

// --- step 3 ------------------------------------------------------------------

RC_GTEST_PROP(CostAwarePlanStepsProperties, PackMicrobatchesIsFirstFitSlowestFirst, ()) {
  StepCase step;
  SampleCosts& costs = step.costs;
  const std::vector<PlannedGroup> groups =
      StackedFor(costs, GenTarget(costs), AnySmallestSize(costs));
  const std::int64_t total_gpus = step.problem.options.total_gpus;
  std::vector<std::size_t> order(groups.size());
  for (std::size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(groups[a].seconds, groups[a].size) >
           std::make_pair(groups[b].seconds, groups[b].size);
  });
  std::vector<PlannedMicrobatch> expected;
  for (const std::size_t g : order) {
    std::size_t m = 0;
    while (m < expected.size() && RanksOf(expected[m]) == total_gpus) ++m;
    const std::size_t window_end =
        std::min(expected.size(), m + plan_steps::kMicrobatchWindow);
    while (m < window_end && RanksOf(expected[m]) + groups[g].size > total_gpus) ++m;
    if (m == window_end) {
      m = expected.size();
      expected.emplace_back();
    }
    expected[m].groups.push_back(groups[g]);
  }
  AssertSameMicrobatches(plan_steps::PackMicrobatches(groups, total_gpus), expected);
}

// --- step 4 ------------------------------------------------------------------

// A group of >= 2 members from a packed plan, or none.
std::optional<PlannedGroup> AnyGroupOfSeveral(const std::vector<PlannedMicrobatch>& packed) {
  std::vector<const PlannedGroup*> several;
  for (const PlannedMicrobatch& microbatch : packed) {
    for (const PlannedGroup& group : microbatch.groups) {
      if (group.members.size() >= 2) several.push_back(&group);
    }
  }
  if (several.empty()) return std::nullopt;
  return *several[*rc::gen::inRange<std::size_t>(0, several.size())];
}

std::pair<PlannedGroup, PlannedGroup> SplitAsDescribed(SampleCosts& costs,
                                                       const PlannedGroup& group) {
  std::vector<std::size_t> members = group.members;
  std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
    return costs.Attention(a, group.size_index) > costs.Attention(b, group.size_index);
  });
  std::vector<std::size_t> first = {members[0]};
  std::vector<std::size_t> second;
  for (std::size_t p = 1; p < members.size(); ++p) {
    const bool to_second = second.empty() || GroupOf(costs, group.size, second).seconds <
                                                 GroupOf(costs, group.size, first).seconds;
    (to_second ? second : first).push_back(members[p]);
  }
  return {GroupOf(costs, group.size, first), GroupOf(costs, group.size, second)};
}

RC_GTEST_PROP(CostAwarePlanStepsProperties, SplitGroupSendsEachMemberToTheFasterHalf, ()) {
  StepCase step;
  SampleCosts& costs = step.costs;
  const std::optional<PlannedGroup> group = AnyGroupOfSeveral(
      PackedFor(costs, GenTarget(costs), AnySmallestSize(costs)));
  RC_TAG(group.has_value() ? "a group of several" : "none");
  if (!group.has_value()) return;
  const auto [first, second] = plan_steps::SplitGroup(costs, *group);
  const auto [first_expected, second_expected] = SplitAsDescribed(costs, *group);
  AssertSameGroups({first, second}, {first_expected, second_expected});
}

// One move of the fill: the microbatch after it, the group it moved, and
// how.
struct MoveAsDescribed {
  enum Kind { kSplit, kWiden, kDetach };
  PlannedMicrobatch after;
  std::size_t group;
  Kind kind;
};

// Each move the fill may make of `microbatch` with `free` ranks free, in
// the order the fill search tries them: per group that fits the free
// ranks, its split then its widening; then (`with_detach`) per group of >=
// 2 members, per member, that member moved to a group of its own.
std::vector<MoveAsDescribed> MovesAsDescribed(SampleCosts& costs, std::size_t floor,
                                              const PlannedMicrobatch& microbatch,
                                              std::int64_t free, bool with_detach) {
  std::vector<MoveAsDescribed> moves;
  const DynamicCpOptions& options = costs.options();
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const PlannedGroup& group = microbatch.groups[g];
    if (group.size > free) continue;
    if (group.members.size() >= 2) {
      auto [first, second] = SplitAsDescribed(costs, group);
      PlannedMicrobatch next = microbatch;
      next.groups[g] = std::move(first);
      next.groups.push_back(std::move(second));
      moves.push_back({std::move(next), g, MoveAsDescribed::kSplit});
    }
    const std::int64_t doubled = group.size * 2;
    if (doubled <= options.total_gpus && RuntimeHasGroupSize(doubled, options)) {
      PlannedMicrobatch next = microbatch;
      next.groups[g] = GroupOf(costs, doubled, group.members);
      moves.push_back({std::move(next), g, MoveAsDescribed::kWiden});
    }
  }
  for (std::size_t g = 0; with_detach && g < microbatch.groups.size(); ++g) {
    const PlannedGroup& group = microbatch.groups[g];
    if (group.members.size() < 2) continue;
    for (std::size_t p = 0; p < group.members.size(); ++p) {
      const std::size_t i = group.members[p];
      const std::int64_t size = costs.sizes()[std::max(costs.first_size(i), floor)];
      if (size > free) continue;
      std::vector<std::size_t> rest = group.members;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(p));
      PlannedMicrobatch next = microbatch;
      next.groups[g] = GroupOf(costs, group.size, std::move(rest));
      next.groups.push_back(GroupOf(costs, size, {i}));
      moves.push_back({std::move(next), g, MoveAsDescribed::kDetach});
    }
  }
  return moves;
}

// A packed microbatch with a free rank, or none.
std::optional<PlannedMicrobatch> AnyMicrobatchWithFreeRanks(
    const std::vector<PlannedMicrobatch>& packed, std::int64_t total_gpus) {
  std::vector<const PlannedMicrobatch*> open;
  for (const PlannedMicrobatch& microbatch : packed) {
    if (RanksOf(microbatch) < total_gpus) open.push_back(&microbatch);
  }
  if (open.empty()) return std::nullopt;
  return *open[*rc::gen::inRange<std::size_t>(0, open.size())];
}

RC_GTEST_PROP(CostAwarePlanStepsProperties, FillByMovesMakesTheLeastMoveFirst, ()) {
  StepCase step;
  SampleCosts& costs = step.costs;
  const std::int64_t total_gpus = step.problem.options.total_gpus;
  const std::optional<PlannedMicrobatch> start = AnyMicrobatchWithFreeRanks(
      PackedFor(costs, GenTarget(costs), AnySmallestSize(costs)), total_gpus);
  RC_TAG(start.has_value() ? "free ranks" : "none");
  if (!start.has_value()) return;
  PlannedMicrobatch expected = *start;
  bool filled = true;
  while (RanksOf(expected) < total_gpus) {
    const std::int64_t free = total_gpus - RanksOf(expected);
    std::optional<std::tuple<double, double, int, std::size_t>> least;
    std::optional<PlannedMicrobatch> after;
    // Splits and widenings only.
    for (MoveAsDescribed& move :
         MovesAsDescribed(costs, 0, expected, free, /*with_detach=*/false)) {
      const std::size_t g = move.group;
      double part = move.after.groups[g].seconds;
      if (move.kind == MoveAsDescribed::kSplit) {
        part = std::max(part, move.after.groups.back().seconds);
      }
      const std::tuple<double, double, int, std::size_t> rank = {
          MicrobatchSeconds(move.after), part - expected.groups[g].seconds, move.kind, g};
      if (!least.has_value() || rank < *least) {
        least = rank;
        after = std::move(move.after);
      }
    }
    if (!after.has_value()) {
      filled = false;
      break;
    }
    expected = *std::move(after);
  }
  PlannedMicrobatch actual = *start;
  RC_TAG(filled ? "filled" : "no move fits");
  RC_ASSERT(plan_steps::FillByMoves(costs, actual) == filled);
  AssertSameGroups(actual.groups, expected.groups);
}

// The fastest microbatch with no free rank reached from `microbatch` by the
// fill search's moves (the first found on ties), counting in `moves` every
// move tried; stops counting past `limit`.
void FastestFill(SampleCosts& costs, std::size_t floor, const PlannedMicrobatch& microbatch,
                 std::size_t limit, std::size_t& moves,
                 std::optional<PlannedMicrobatch>& fastest) {
  const std::int64_t free = costs.options().total_gpus - RanksOf(microbatch);
  if (free == 0) {
    if (!fastest.has_value() || MicrobatchSeconds(microbatch) < MicrobatchSeconds(*fastest)) {
      fastest = microbatch;
    }
    return;
  }
  for (const MoveAsDescribed& move :
       MovesAsDescribed(costs, floor, microbatch, free, /*with_detach=*/true)) {
    if (++moves > limit) return;
    FastestFill(costs, floor, move.after, limit, moves, fastest);
  }
}

RC_GTEST_PROP(CostAwarePlanStepsProperties, FillBySearchFindsTheFastestFillOfASmallTree, ()) {
  StepCase step;
  SampleCosts& costs = step.costs;
  const std::size_t floor = AnySmallestSize(costs);
  const std::optional<PlannedMicrobatch> start = AnyMicrobatchWithFreeRanks(
      PackedFor(costs, GenTarget(costs), floor), step.problem.options.total_gpus);
  if (!start.has_value()) {
    RC_TAG("no free ranks");
    return;
  }
  std::size_t moves = 0;
  std::optional<PlannedMicrobatch> fastest;
  FastestFill(costs, floor, *start, plan_steps::kFillSearchMoves, moves, fastest);
  if (moves > plan_steps::kFillSearchMoves) {
    RC_TAG("a tree past the bound");
    return;
  }
  RC_TAG(fastest.has_value() ? "a fill" : "no fill");
  const std::optional<PlannedMicrobatch> searched =
      plan_steps::FillBySearch(costs, floor, *start);
  RC_ASSERT(searched.has_value() == fastest.has_value());
  if (fastest.has_value()) AssertSameGroups(searched->groups, fastest->groups);
}

// --- step 5 ------------------------------------------------------------------

std::pair<PlannedMicrobatch, PlannedMicrobatch> SplitMicrobatchAsDescribed(
    SampleCosts& costs, const PlannedMicrobatch& microbatch) {
  PlannedMicrobatch first;
  PlannedMicrobatch second;
  if (microbatch.groups.size() == 1) {
    auto [a, b] = SplitAsDescribed(costs, microbatch.groups[0]);
    first.groups.push_back(std::move(a));
    second.groups.push_back(std::move(b));
    return {first, second};
  }
  std::vector<PlannedGroup> slowest_first = microbatch.groups;
  std::stable_sort(slowest_first.begin(), slowest_first.end(),
                   [](const PlannedGroup& a, const PlannedGroup& b) {
                     return a.seconds > b.seconds;
                   });
  for (const PlannedGroup& group : slowest_first) {
    const bool to_second = !first.groups.empty() &&
                           (second.groups.empty() || RanksOf(second) < RanksOf(first));
    (to_second ? second : first).groups.push_back(group);
  }
  return {first, second};
}

std::size_t MemberCount(const PlannedMicrobatch& microbatch) {
  std::size_t count = 0;
  for (const PlannedGroup& group : microbatch.groups) count += group.members.size();
  return count;
}

RC_GTEST_PROP(CostAwarePlanStepsProperties, SplitMicrobatchSplitsByRanksSlowestFirst, ()) {
  StepCase step;
  SampleCosts& costs = step.costs;
  const std::size_t floor = AnySmallestSize(costs);
  std::vector<PlannedMicrobatch> several;
  for (PlannedMicrobatch& microbatch : FilledFor(costs, GenTarget(costs), floor)) {
    if (MemberCount(microbatch) >= 2) several.push_back(std::move(microbatch));
  }
  if (several.empty()) {
    RC_TAG("no microbatch of several");
    return;
  }
  const PlannedMicrobatch& microbatch =
      several[*rc::gen::inRange<std::size_t>(0, several.size())];
  RC_TAG(microbatch.groups.size() == 1 ? "one group" : "groups");
  const auto [first, second] = plan_steps::SplitMicrobatch(costs, microbatch);
  const auto [first_expected, second_expected] = SplitMicrobatchAsDescribed(costs, microbatch);
  AssertSameGroups(first.groups, first_expected.groups);
  AssertSameGroups(second.groups, second_expected.groups);
}

double SecondsOf(const std::vector<PlannedMicrobatch>& microbatches) {
  double seconds = 0.0;
  for (const PlannedMicrobatch& microbatch : microbatches) {
    seconds += MicrobatchSeconds(microbatch);
  }
  return seconds;
}

// Both parts, each filled.
std::vector<PlannedMicrobatch> FilledParts(
    SampleCosts& costs, std::size_t floor,
    const std::pair<PlannedMicrobatch, PlannedMicrobatch>& parts) {
  std::vector<PlannedMicrobatch> filled = plan_steps::Fill(costs, floor, parts.first);
  for (PlannedMicrobatch& part : plan_steps::Fill(costs, floor, parts.second)) {
    filled.push_back(std::move(part));
  }
  return filled;
}

// AlignToVpp as its header describes it: the microbatches, or the message
// where every one holds one sample.
absl::Status AlignAsDescribed(SampleCosts& costs, std::size_t floor,
                              std::vector<PlannedMicrobatch>& microbatches) {
  const std::int64_t vpp = MicrobatchCountMultiple(costs.options());
  while (static_cast<std::int64_t>(microbatches.size()) % vpp != 0) {
    std::optional<std::size_t> most;
    for (std::size_t m = 0; m < microbatches.size(); ++m) {
      const std::size_t count = MemberCount(microbatches[m]);
      if (count >= 2 && (!most.has_value() || count > MemberCount(microbatches[*most]))) {
        most = m;
      }
    }
    if (!most.has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "every one of the ", microbatches.size(),
          " microbatches holds one sample, and their number is not a multiple of "
          "vpp_group=",
          vpp));
    }
    const PlannedMicrobatch chosen = microbatches[*most];
    std::vector<PlannedMicrobatch> parts =
        FilledParts(costs, floor, SplitMicrobatchAsDescribed(costs, chosen));
    if (parts.size() > 2) {
      for (std::size_t g = 0; chosen.groups.size() >= 2 && g < chosen.groups.size(); ++g) {
        PlannedMicrobatch rest = chosen;
        rest.groups.erase(rest.groups.begin() + static_cast<std::ptrdiff_t>(g));
        PlannedMicrobatch alone{.groups = {chosen.groups[g]}};
        std::vector<PlannedMicrobatch> peeled = FilledParts(costs, floor, {rest, alone});
        if (std::make_pair(peeled.size(), SecondsOf(peeled)) <
            std::make_pair(parts.size(), SecondsOf(parts))) {
          parts = std::move(peeled);
        }
      }
    }
    microbatches[*most] = parts[0];
    microbatches.insert(microbatches.end(), parts.begin() + 1, parts.end());
  }
  return absl::OkStatus();
}

// Where the fill puts samples on all G ranks, halves by ranks may leave
// too many microbatches: a small G that is not a power of two, a budget of
// a few tokens and max_num_seqs 1.
rc::Gen<DynamicCpProblem> GenPeelProneProblem() {
  return rc::gen::exec([] {
    DynamicCpProblem problem;
    problem.options.total_gpus = *rc::gen::element<std::int64_t>(3, 5, 6, 7, 9, 10, 11, 13);
    problem.options.max_seq_len_per_rank = *rc::gen::inRange<std::int64_t>(1, 9);
    problem.options.vpp_group = *rc::gen::inRange<std::int64_t>(2, 5);
    if (*rc::gen::arbitrary<bool>()) problem.options.max_num_seqs = 1;
    AddSamplesThatFitGRanks(problem, *rc::gen::inRange(2, 13));
    return problem;
  });
}

RC_GTEST_PROP(CostAwarePlanStepsProperties, AlignToVppSplitsAsItsHeaderSays, ()) {
  StepCase step(*rc::gen::arbitrary<bool>() ? *GenPeelProneProblem() : AnyStepProblem());
  SampleCosts& costs = step.costs;
  const std::size_t floor = AnySmallestSize(costs);
  const std::vector<PlannedMicrobatch> filled = FilledFor(costs, GenTarget(costs), floor);
  std::vector<PlannedMicrobatch> actual = filled;
  std::vector<PlannedMicrobatch> expected = filled;
  const absl::Status status = plan_steps::AlignToVpp(costs, floor, actual);
  const absl::Status expected_status = AlignAsDescribed(costs, floor, expected);
  RC_TAG(!expected_status.ok()                   ? "refused"
         : expected.size() == filled.size()      ? "aligned already"
         : expected.size() > filled.size() + 1   ? "several splits or a fill on all ranks"
                                                 : "one split");
  RC_ASSERT(status == expected_status);
  if (status.ok()) AssertSameMicrobatches(actual, expected);
}

RC_GTEST_PROP(CostAwarePlanStepsProperties, FinishOrdersSlowestFirstKeepingTies, ()) {
  StepCase step;
  SampleCosts& costs = step.costs;
  const std::vector<PlannedMicrobatch> filled =
      FilledFor(costs, GenTarget(costs), AnySmallestSize(costs));
  std::vector<PlannedMicrobatch> expected = filled;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const PlannedMicrobatch& a, const PlannedMicrobatch& b) {
                     return MicrobatchSeconds(a) > MicrobatchSeconds(b);
                   });
  const Plan plan = plan_steps::Finish(filled);
  AssertSameMicrobatches(plan.microbatches, expected);
  RC_ASSERT(plan.step_seconds == SecondsOf(expected));
}

}  // namespace
}  // namespace dcpsched::properties::cost_aware_plan_steps_properties

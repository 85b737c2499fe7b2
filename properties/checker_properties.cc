// Properties of the schedule checker (core/checker.h): damage done to a real
// schedule is always reported as the right invariant, and the checker finds
// on any damaged schedule exactly what the reference checker
// (oracle/reference_checker.h) finds.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "properties/checker_reference_check.h"
#include "properties/generators.h"
#include "properties/rc_status.h"
#include "properties/schedule_damage.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::checker_properties {
namespace {

bool Reports(const std::vector<Violation>& violations, Invariant invariant) {
  for (const Violation& violation : violations) {
    if (violation.invariant == invariant) return true;
  }
  return false;
}

// A problem with at least one sample and its (valid) schedule.
struct Scheduled {
  DynamicCpProblem problem;
  Schedule schedule;
};

Scheduled ScheduleSomething() {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  return Scheduled{problem, *schedule};
}

RC_GTEST_PROP(CheckerProperties, ASampleRemovedEverywhereIsReported, ()) {
  Scheduled scheduled = ScheduleSomething();
  const auto& samples = scheduled.problem.samples;
  const SampleId victim =
      samples[*rc::gen::inRange<std::size_t>(0, samples.size())].id;
  for (Microbatch& microbatch : scheduled.schedule.microbatches) {
    for (auto& rank : microbatch.rank_ids) std::erase(rank, victim);
  }
  RC_ASSERT(Reports(FindViolations(samples, scheduled.schedule, scheduled.problem.options),
                    Invariant::kEachSampleOnce));
}

RC_GTEST_PROP(CheckerProperties, ASampleCopiedToAnotherRankIsReported, ()) {
  Scheduled scheduled = ScheduleSomething();
  auto& microbatches = scheduled.schedule.microbatches;
  const std::size_t from = *rc::gen::inRange<std::size_t>(0, microbatches.size());
  const std::size_t to = *rc::gen::inRange<std::size_t>(0, microbatches.size());
  const auto& source = microbatches[from].rank_ids;
  const SampleId id = source[*rc::gen::inRange<std::size_t>(0, source.size())].front();
  std::size_t first = source.size();
  std::size_t last = 0;
  for (std::size_t r = 0; r < source.size(); ++r) {
    if (std::find(source[r].begin(), source[r].end(), id) == source[r].end()) continue;
    first = std::min(first, r);
    last = r;
  }
  auto& target = microbatches[to].rank_ids;
  const std::size_t target_rank = *rc::gen::inRange<std::size_t>(0, target.size());
  // A copy onto the rank just before or after its run only widens the run,
  // which can be a valid schedule; anywhere else it breaks invariant 2.
  RC_PRE(from != to || target_rank + 1 != first);
  RC_PRE(from != to || target_rank != last + 1);
  target[target_rank].push_back(id);
  RC_ASSERT(Reports(
      FindViolations(scheduled.problem.samples, scheduled.schedule, scheduled.problem.options),
      Invariant::kEachSampleOnce));
}

RC_GTEST_PROP(CheckerProperties, AnUnknownIdIsReported, ()) {
  Scheduled scheduled = ScheduleSomething();
  SampleId stranger = 0;
  for (const Sample& sample : scheduled.problem.samples) stranger = std::max(stranger, sample.id);
  RC_PRE(stranger < INT64_MAX);
  scheduled.schedule.microbatches.front().rank_ids.front().push_back(stranger + 1);
  RC_ASSERT(Reports(FindViolations(scheduled.problem.samples, scheduled.schedule,
                                   scheduled.problem.options),
                    Invariant::kEachSampleOnce));
}

// Invariant 10 at its boundary: with max_num_seqs equal to what the busiest
// rank holds the schedule passes; one less, so that rank holds one sample
// too many, is reported as the sequence cap and nothing else.
RC_GTEST_PROP(CheckerProperties, OneSampleOverMaxNumSeqsIsReported, ()) {
  const Scheduled scheduled = ScheduleSomething();
  std::int64_t busiest = 0;
  for (const Microbatch& microbatch : scheduled.schedule.microbatches) {
    for (const auto& rank : microbatch.rank_ids) {
      busiest = std::max(busiest, static_cast<std::int64_t>(rank.size()));
    }
  }
  RC_PRE(busiest >= 2);
  DynamicCpOptions options = scheduled.problem.options;
  options.max_num_seqs = busiest;
  RC_ASSERT(!Reports(FindViolations(scheduled.problem.samples, scheduled.schedule, options),
                     Invariant::kSequenceCap));
  options.max_num_seqs = busiest - 1;
  const std::vector<Violation> violations =
      FindViolations(scheduled.problem.samples, scheduled.schedule, options);
  RC_ASSERT(Reports(violations, Invariant::kSequenceCap));
  for (const Violation& violation : violations) {
    RC_ASSERT(violation.invariant == Invariant::kSequenceCap);
  }
}

// Invariant 5 at its boundary. The work cap of a microbatch whose tallest
// sample has length t is t * mslpr * 1.05, an integer exactly when t * mslpr
// is a multiple of 20; one rank holds t and shorter samples whose squares
// (their work on one rank) sum to the cap, one less or one more. Only the
// last is over the cap, and the checker finds what the reference checker
// finds. Damaged real schedules seldom land on the cap exactly.
RC_GTEST_PROP(CheckerProperties, WorkAtTheCapIsNoViolationAndOneMoreIs, ()) {
  const std::int64_t mslpr = 20 * *rc::gen::inRange<std::int64_t>(1, 51);
  const std::int64_t tallest = *rc::gen::inRange<std::int64_t>((mslpr + 1) / 2, mslpr + 1);
  const std::int64_t cap = tallest * (mslpr / 20) * 21;
  RC_ASSERT(WorkCap(tallest, mslpr) == static_cast<double>(cap));
  const std::int64_t over = *GenCase(3) - 1;
  std::vector<Sample> samples = {Sample{0, tallest}};
  for (std::int64_t rest = cap - tallest * tallest + over; rest > 0;) {
    // Any square that fits will do; the largest keeps the list short.
    std::int64_t len = std::min(tallest, static_cast<std::int64_t>(std::sqrt(rest)));
    while (len * len > rest) --len;
    samples.push_back(Sample{static_cast<SampleId>(samples.size()), len});
    rest -= len * len;
  }
  std::vector<SampleId> ids;
  for (const Sample& sample : samples) ids.push_back(sample.id);
  if (*rc::gen::arbitrary<bool>()) std::reverse(ids.begin(), ids.end());
  Schedule schedule;
  schedule.microbatches.push_back(Microbatch{{ids}});
  DynamicCpOptions options;
  options.total_gpus = 1;
  options.max_seq_len_per_rank = mslpr;
  RC_ASSERT(Reports(FindViolations(samples, schedule, options), Invariant::kWorkCap) ==
            (over > 0));
  RC_ASSERT_OK(CheckFindViolationsMatchesReference(samples, schedule, options));
}

// Every finding, on a packing-aware schedule with random damage done to it
// (properties/schedule_damage.h), or intact: the same as the reference
// checker's, in the right order, with CheckSchedule's verdict to match.
RC_GTEST_PROP(CheckerProperties, FindViolationsMatchesTheReferenceOnDamagedSchedules, ()) {
  const Scheduled scheduled = ScheduleSomething();
  const DamagedSchedule damaged = *GenDamagedSchedule(
      scheduled.problem.samples, scheduled.schedule, scheduled.problem.options);
  RC_ASSERT_OK(CheckFindViolationsMatchesReference(scheduled.problem.samples, damaged.schedule,
                                                   damaged.options));
}

// The same on the legacy scheduler's schedules, whose groups and fill differ.
RC_GTEST_PROP(CheckerProperties, FindViolationsMatchesTheReferenceOnDamagedLegacySchedules, ()) {
  const DynamicCpProblem problem = *GenValidUncappedProblem();
  RC_PRE(!problem.samples.empty());
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  const DamagedSchedule damaged =
      *GenDamagedSchedule(problem.samples, *schedule, problem.options);
  RC_ASSERT_OK(CheckFindViolationsMatchesReference(problem.samples, damaged.schedule,
                                                   damaged.options));
}

// A compact microbatch broken so that its groups are no compact form (a
// group moved, of size 0 or -1, equal to its left neighbour, dropped,
// swapped with the next, or ending past the largest rank number) is one
// finding of invariant 1, whose message names the defect, and is not read
// further.
RC_GTEST_PROP(CheckerProperties, AMalformedCompactMicrobatchIsOneFindingOfInvariantOne, ()) {
  const Scheduled scheduled = ScheduleSomething();
  CompactSchedule compact = CompactFromRanks(scheduled.schedule);
  auto& microbatch =
      compact.microbatches[*rc::gen::inRange<std::size_t>(0, compact.microbatches.size())];
  auto& groups = microbatch.groups;
  const std::size_t g = *rc::gen::inRange<std::size_t>(0, groups.size());
  switch (*GenCase(6)) {
    case 0:
      groups[g].first_rank += *rc::gen::element<std::int64_t>(-2, -1, 1, 2);
      break;
    case 1:
      groups[g].size = *rc::gen::element<std::int64_t>(0, -1);
      break;
    case 2:
      if (g > 0) {
        groups[g].ids = groups[g - 1].ids;
      } else {
        groups[g].first_rank = 1;
      }
      break;
    case 3:
      groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(g));
      break;
    case 4:
      if (g + 1 < groups.size()) std::swap(groups[g], groups[g + 1]);
      break;
    default:
      // Past the largest rank number; a first group (at rank 0) cannot be,
      // so it gets size 0.
      groups[g].size = groups[g].first_rank > 0
                           ? std::numeric_limits<std::int64_t>::max() - groups[g].first_rank + 1
                           : 0;
      break;
  }
  RC_ASSERT_OK(CheckMalformedMicrobatchesAreReportedOnce(scheduled.problem.samples, compact,
                                                         scheduled.problem.options));
}

}  // namespace
}  // namespace dcpsched::properties::checker_properties

// Properties of MeasureQuality (core/quality.h) on the schedules the
// packing-aware scheduler builds for generated problems, and on the same
// inputs with one defect each, which it must refuse.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "core/compact_schedule.h"
#include "core/packing_aware.h"
#include "core/quality.h"
#include "core/types.h"
#include "core/validate.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::quality_properties {
namespace {

RC_GTEST_PROP(QualityProperties, ReadsEveryScheduleAsBuilt, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_ASSERT_OK(CheckQualityReadsSchedule(problem, *schedule));
}

// One defect done to a valid (samples, compact schedule, max_seq_len_per_rank)
// and the words the refusal must contain.
struct QualityDefect {
  std::vector<Sample> samples;
  CompactSchedule schedule;
  std::int64_t max_seq_len_per_rank = 0;
  std::string named;
};

QualityDefect DamageQualityInput(std::vector<Sample> samples, CompactSchedule schedule,
                                 std::int64_t max_seq_len_per_rank) {
  const std::size_t m = *rc::gen::inRange<std::size_t>(0, schedule.microbatches.size());
  CompactMicrobatch& microbatch = schedule.microbatches[m];
  const std::size_t g = *rc::gen::inRange<std::size_t>(0, microbatch.groups.size());
  const std::size_t s = *rc::gen::inRange<std::size_t>(0, samples.size());
  std::string named;
  switch (*GenCase(8)) {
    case 0:
      samples.push_back(samples[s]);
      named = "appears twice in the samples";
      break;
    case 1:
      samples[s].len = *rc::gen::element<std::int64_t>(0, -1, kMaxSampleLen + 1);
      named = "has length";
      break;
    case 2: {
      const SampleId id = microbatch.groups[g].ids.front();
      std::erase_if(samples, [id](const Sample& sample) { return sample.id == id; });
      named = "which is not among the";
      break;
    }
    case 3:
      schedule.microbatches.insert(schedule.microbatches.begin() + static_cast<std::ptrdiff_t>(m),
                                   CompactMicrobatch{});
      named = "has no ranks";
      break;
    case 4:
      schedule.microbatches.clear();
      named = "the schedule has no microbatches";
      break;
    case 5:
      microbatch.groups[g].first_rank += *rc::gen::element<std::int64_t>(-1, 1);
      named = "microbatch " + std::to_string(m);
      break;
    case 6: {
      const std::int64_t width = *MicrobatchWidth(schedule.microbatches.front(), 0);
      schedule.microbatches.push_back(
          CompactMicrobatch{{CpGroupIds{0, width + 1, {samples[s].id}}}});
      named = "every microbatch must have the same G ranks";
      break;
    }
    default:
      max_seq_len_per_rank = *rc::gen::inRange<std::int64_t>(-2, 1);
      named = "max_seq_len_per_rank is";
      break;
  }
  return {std::move(samples), std::move(schedule), max_seq_len_per_rank, std::move(named)};
}

RC_GTEST_PROP(QualityProperties, RefusesEachDefectOfItsInputWithInvalidArgument, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_PRE(!schedule->microbatches.empty());
  RC_PRE(!problem.samples.empty());
  const QualityDefect defect =
      DamageQualityInput(problem.samples, CompactFromRanks(*schedule),
                         problem.options.max_seq_len_per_rank);
  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(defect.samples, defect.schedule, defect.max_seq_len_per_rank);
  RC_ASSERT(quality.status().code() == absl::StatusCode::kInvalidArgument);
  if (!absl::StrContains(quality.status().message(), defect.named)) {
    RC_FAIL("the refusal does not say \"" + defect.named + "\": " +
            std::string(quality.status().message()));
  }
}

// The lower bound is a ceiling: measured with a capacity per rank of a few
// tokens, the batch's total often lies just past a multiple of G * capacity
// (one token over needs one microbatch more) or on one.
RC_GTEST_PROP(QualityProperties, TheLowerBoundIsTheCeilingOfTokensOverCapacity, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const absl::StatusOr<CompactSchedule> schedule =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_PRE(!schedule->microbatches.empty());
  const std::int64_t capacity = *rc::gen::weightedOneOf<std::int64_t>(
      {{3, rc::gen::inRange<std::int64_t>(1, 4)},
       {1, rc::gen::just(problem.options.max_seq_len_per_rank)}});
  RC_ASSERT_OK(CheckQualityLowerBound(problem.samples, *schedule, capacity));
}

// The bounds of the refusal above are its own: a length at either end of
// [1, 2^26] is measured, whatever the schedule was made for.
RC_GTEST_PROP(QualityProperties, MeasuresALengthAtEitherEndOfTheValidRange, ()) {
  DynamicCpProblem problem = *GenValidProblem();
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_PRE(!problem.samples.empty());
  const std::size_t s = *rc::gen::inRange<std::size_t>(0, problem.samples.size());
  problem.samples[s].len = *rc::gen::element<std::int64_t>(1, kMaxSampleLen);
  RC_ASSERT_OK(MeasureQuality(problem.samples, *schedule, problem.options.max_seq_len_per_rank)
                   .status());
}

}  // namespace
}  // namespace dcpsched::properties::quality_properties

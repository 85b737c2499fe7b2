#include "properties/problem_checks.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/dp_balanced.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/quality.h"
#include "core/validate.h"
#include "core/vpp_align.h"
#include "core/checker.h"
#include "oracle/exhaustive_oracle.h"
#include "oracle/reference_checker.h"
#include "oracle/reference_oracle.h"

namespace dcpsched::properties {
namespace {

using oracle::ReferenceAlignToVppGroup;
using oracle::ReferencePackingAwareStep;
using oracle::ReferenceScheduleDpBalanced;
using oracle::ReferenceScheduleDynamicCp;
using oracle::ReferenceScheduleLegacy;

absl::Status Fail(absl::string_view what) {
  return absl::InternalError(what);
}

// The least number of microbatches that can hold `total_tokens` on G ranks
// of `max_seq_len_per_rank` tokens each: ceil(total / (G * mslpr)), in 128
// bits (the specification's lower bound), 0 when there are no ranks.
std::int64_t CeilTokensOverCapacity(std::int64_t total_tokens, std::int64_t g,
                                    std::int64_t max_seq_len_per_rank) {
  if (g == 0) return 0;
  const unsigned __int128 capacity = static_cast<unsigned __int128>(g) *
                                     static_cast<unsigned __int128>(max_seq_len_per_rank);
  const auto tokens = static_cast<unsigned __int128>(total_tokens);
  return static_cast<std::int64_t>(tokens / capacity + (tokens % capacity != 0 ? 1 : 0));
}

absl::Status CheckLowerBound(const ScheduleQuality& quality, std::int64_t max_seq_len_per_rank) {
  const std::int64_t expected =
      CeilTokensOverCapacity(quality.total_tokens, quality.total_gpus, max_seq_len_per_rank);
  if (quality.microbatch_lower_bound != expected) {
    return Fail(absl::StrCat("microbatch lower bound ", quality.microbatch_lower_bound, " for ",
                             quality.total_tokens, " tokens on ", quality.total_gpus,
                             " ranks of ", max_seq_len_per_rank, ", not ", expected));
  }
  return absl::OkStatus();
}

std::string RankText(const std::vector<SampleId>& ids) {
  return absl::StrCat("[", absl::StrJoin(ids, ","), "]");
}

// Where two schedules first differ, or "" if they are equal.
std::string FirstDifference(const Schedule& a, const Schedule& b) {
  if (a.microbatches.size() != b.microbatches.size()) {
    return absl::StrCat(a.microbatches.size(), " vs ", b.microbatches.size(),
                        " microbatches");
  }
  for (std::size_t m = 0; m < a.microbatches.size(); ++m) {
    const auto& ra = a.microbatches[m].rank_ids;
    const auto& rb = b.microbatches[m].rank_ids;
    if (ra.size() != rb.size()) {
      return absl::StrCat("microbatch ", m, ": ", ra.size(), " vs ", rb.size(), " ranks");
    }
    for (std::size_t r = 0; r < ra.size(); ++r) {
      if (ra[r] != rb[r]) {
        return absl::StrCat("microbatch ", m, " rank ", r, ": ", RankText(ra[r]), " vs ",
                            RankText(rb[r]));
      }
    }
  }
  return "";
}

std::string FirstDifference(const PackedMicrobatch& a, const PackedMicrobatch& b) {
  Schedule sa;
  sa.microbatches.push_back(a.microbatch);
  Schedule sb;
  sb.microbatches.push_back(b.microbatch);
  if (std::string ids = FirstDifference(sa, sb); !ids.empty()) return ids;
  if (a.rank_lens != b.rank_lens) return "per-rank lengths differ";
  if (a.rank_work.size() != b.rank_work.size()) return "work vectors differ in size";
  for (std::size_t r = 0; r < a.rank_work.size(); ++r) {
    if (std::bit_cast<std::uint64_t>(a.rank_work[r]) !=
        std::bit_cast<std::uint64_t>(b.rank_work[r])) {
      return absl::StrFormat("rank %d work %.17g vs %.17g", r, a.rank_work[r], b.rank_work[r]);
    }
  }
  if (a.leftovers != b.leftovers) return "leftovers differ";
  return "";
}

// Both succeed with equal results, or both fail with the same code.
template <typename T>
absl::Status CompareOutcomes(absl::string_view left_name, const absl::StatusOr<T>& left,
                             absl::string_view right_name, const absl::StatusOr<T>& right) {
  if (left.ok() != right.ok() ||
      (!left.ok() && left.status().code() != right.status().code())) {
    return Fail(absl::StrCat(left_name, " gives ", left.status().ToString(), " but ",
                             right_name, " gives ", right.status().ToString()));
  }
  if (!left.ok()) return absl::OkStatus();
  const std::string difference = FirstDifference(*left, *right);
  if (difference.empty()) return absl::OkStatus();
  return Fail(absl::StrCat(left_name, " and ", right_name, " differ: ", difference));
}

// A valid problem's schedule, or why it may legitimately have none.
absl::Status AcceptableFailure(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kFailedPrecondition) return absl::OkStatus();
  return Fail(absl::StrCat("scheduler failed on a valid problem: ", status.ToString()));
}

constexpr std::uint64_t kRelabelMultiplier = 0xD1B54A32D192ED03ULL;  // odd

SampleId Relabel(SampleId id, std::uint64_t salt) {
  return static_cast<SampleId>(static_cast<std::uint64_t>(id) * kRelabelMultiplier + salt);
}

Schedule RelabelSchedule(Schedule schedule, std::uint64_t salt) {
  for (Microbatch& microbatch : schedule.microbatches) {
    for (std::vector<SampleId>& rank : microbatch.rank_ids) {
      for (SampleId& id : rank) id = Relabel(id, salt);
    }
  }
  return schedule;
}

absl::StatusOr<Schedule> MapSchedule(absl::StatusOr<Schedule> schedule,
                                     const std::function<Schedule(Schedule)>& map) {
  if (!schedule.ok()) return schedule;
  return map(*std::move(schedule));
}


// The ranks whose per-rank view the compact checks compare: 0, width / 2
// and width - 1, or every rank of a narrow schedule.
std::vector<std::int64_t> RanksToView(std::int64_t width) {
  if (width <= 16) {
    std::vector<std::int64_t> every(static_cast<std::size_t>(width));
    std::iota(every.begin(), every.end(), 0);
    return every;
  }
  return {0, width / 2, width - 1};
}

// `compact` and `ranks`, one schedule in its two forms, agree (see
// CheckCompactMatchesPerRank).
absl::Status CompareCompactWithRanks(absl::string_view name,
                                     const CompactSchedule& compact,
                                     const Schedule& ranks) {
  const absl::StatusOr<Schedule> expanded = ExpandSchedule(compact);
  if (!expanded.ok()) {
    return Fail(absl::StrCat(name, ": the compact form does not expand: ",
                             expanded.status().ToString()));
  }
  if (const std::string difference = FirstDifference(*expanded, ranks);
      !difference.empty()) {
    return Fail(absl::StrCat(name, ": the compact form expanded and the per-rank form differ: ",
                             difference));
  }
  if (!(compact == CompactFromRanks(ranks))) {
    return Fail(absl::StrCat(name, ": the compact form is not CompactFromRanks of the "
                             "per-rank form (equal neighbouring groups, or groups split)"));
  }
  if (ranks.microbatches.empty()) return absl::OkStatus();
  const auto width =
      static_cast<std::int64_t>(ranks.microbatches.front().rank_ids.size());
  for (const std::int64_t rank : RanksToView(width)) {
    const absl::StatusOr<std::vector<std::vector<SampleId>>> view = RankIds(compact, rank);
    if (!view.ok()) {
      return Fail(absl::StrCat(name, ": RankIds(", rank, ") fails: ", view.status().ToString()));
    }
    for (std::size_t m = 0; m < ranks.microbatches.size(); ++m) {
      const std::vector<SampleId>& slice =
          ranks.microbatches[m].rank_ids[static_cast<std::size_t>(rank)];
      if (m >= view->size() || (*view)[m] != slice) {
        return Fail(absl::StrCat(name, ": RankIds(", rank, ") differs from the slice at microbatch ",
                                 m, ": ", m < view->size() ? RankText((*view)[m]) : "missing",
                                 " vs ", RankText(slice)));
      }
    }
    if (view->size() != ranks.microbatches.size()) {
      return Fail(absl::StrCat(name, ": RankIds(", rank, ") has ", view->size(),
                               " microbatches, the schedule ", ranks.microbatches.size()));
    }
  }
  return absl::OkStatus();
}

// Both forms of one scheduler's result: both fail alike, or both succeed and
// agree.
absl::Status CompareCompactOutcome(absl::string_view name,
                                   const absl::StatusOr<CompactSchedule>& compact,
                                   const absl::StatusOr<Schedule>& ranks) {
  if (compact.ok() != ranks.ok() ||
      (!compact.ok() && compact.status() != ranks.status())) {
    return Fail(absl::StrCat(name, ": the compact form gives ", compact.status().ToString(),
                             " but the per-rank form gives ", ranks.status().ToString()));
  }
  if (!compact.ok()) return absl::OkStatus();
  return CompareCompactWithRanks(name, *compact, *ranks);
}

// How many ranks of a microbatch hold each id: its CP size there, counted
// from the per-rank lists themselves.
absl::flat_hash_map<SampleId, std::int64_t> CountHolders(
    const std::vector<std::vector<SampleId>>& ranks) {
  absl::flat_hash_map<SampleId, std::int64_t> holders;
  for (const std::vector<SampleId>& rank : ranks) {
    for (const SampleId id : rank) ++holders[id];
  }
  return holders;
}

// What a rank holding `ids` carries: `per_sample`(len, holders) added in list
// order (Work for its work, TokensPerRank for its tokens).
double RankLoadOf(const absl::flat_hash_map<SampleId, std::int64_t>& lens,
                  const absl::flat_hash_map<SampleId, std::int64_t>& holders,
                  const std::vector<SampleId>& ids,
                  double (*per_sample)(std::int64_t, std::int64_t)) {
  double load = 0.0;
  for (const SampleId id : ids) load += per_sample(lens.at(id), holders.at(id));
  return load;
}

}  // namespace

absl::Status CheckPlacementMatchesReference(const DynamicCpProblem& problem) {
  if (!ValidateDynamicCpProblem(problem.samples, problem.options).ok()) {
    return absl::OkStatus();
  }
  return CompareOutcomes(
      "core placement", PackingAwarePlacement(problem.samples, problem.options),
      "reference placement",
      oracle::ReferencePackingAwarePlacement(problem.samples, problem.options));
}

absl::Status CheckKeepsInvariant(const DynamicCpProblem& problem, Invariant invariant) {
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  if (!schedule.ok()) return AcceptableFailure(schedule.status());
  for (const Violation& violation : FindViolations(problem.samples, *schedule, problem.options)) {
    if (violation.invariant == invariant) {
      return Fail(absl::StrCat("invariant ", static_cast<int>(invariant), " (",
                               InvariantName(invariant), "): ", violation.message));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckEmptyRanksFormATail(const DynamicCpProblem& problem) {
  const absl::StatusOr<PackedMicrobatch> placed =
      PackingAwarePlacement(problem.samples, problem.options);
  if (!placed.ok()) return AcceptableFailure(placed.status());
  const auto& ranks = placed->microbatch.rank_ids;
  const auto first_empty =
      std::find_if(ranks.begin(), ranks.end(), [](const auto& ids) { return ids.empty(); });
  const auto stray = std::find_if(first_empty, ranks.end(),
                                  [](const auto& ids) { return !ids.empty(); });
  if (stray == ranks.end()) return absl::OkStatus();
  return Fail(absl::StrCat("invariant 7: before the fill, rank ", first_empty - ranks.begin(),
                           " is empty but rank ", stray - ranks.begin(), " holds ",
                           RankText(*stray)));
}

absl::Status CheckDeterministic(const DynamicCpProblem& problem) {
  const absl::Status schedules =
      CompareOutcomes("first run", ScheduleDynamicCp(problem.samples, problem.options),
                      "second run", ScheduleDynamicCp(problem.samples, problem.options));
  if (!schedules.ok()) return schedules;
  return CompareOutcomes("first step", PackingAwareStep(problem.samples, problem.options),
                         "second step", PackingAwareStep(problem.samples, problem.options));
}

absl::Status CheckStepMatchesOracle(const DynamicCpProblem& problem) {
  const absl::Status step =
      CompareOutcomes("core step", PackingAwareStep(problem.samples, problem.options),
                      "oracle step", ReferencePackingAwareStep(problem.samples, problem.options));
  if (!step.ok()) return step;
  return CheckPlacementMatchesReference(problem);
}

absl::Status CheckScheduleMatchesOracle(const DynamicCpProblem& problem) {
  return CompareOutcomes("core schedule", ScheduleDynamicCp(problem.samples, problem.options),
                         "oracle schedule",
                         ReferenceScheduleDynamicCp(problem.samples, problem.options));
}

absl::Status CheckAlignmentMatchesOracle(const Schedule& schedule, std::int64_t vpp_group) {
  const absl::StatusOr<Schedule> core = AlignToVppGroup(schedule, vpp_group);
  const absl::StatusOr<Schedule> oracle = ReferenceAlignToVppGroup(schedule, vpp_group);
  if (absl::Status status = CompareOutcomes("core alignment", core, "oracle alignment", oracle);
      !status.ok() || core.ok()) {
    return status;
  }
  constexpr absl::string_view kLoops = "upstream loops forever";
  if (absl::StrContains(core.status().message(), kLoops) !=
      absl::StrContains(oracle.status().message(), kLoops)) {
    return Fail(absl::StrCat("core alignment gives ", core.status().ToString(),
                             " but oracle alignment gives ", oracle.status().ToString(),
                             ": only one says upstream loops forever"));
  }
  return absl::OkStatus();
}

absl::Status CheckDpBalancedMatchesOracle(const DpBalancedProblem& problem) {
  return CompareOutcomes("core dp_balanced", ScheduleDpBalanced(problem.lens, problem.options),
                         "oracle dp_balanced",
                         ReferenceScheduleDpBalanced(problem.lens, problem.options));
}

absl::Status CheckRelabellingRelabels(const DynamicCpProblem& problem, std::uint64_t salt) {
  DynamicCpProblem renamed = problem;
  for (Sample& sample : renamed.samples) sample.id = Relabel(sample.id, salt);
  return CompareOutcomes(
      "relabelled schedule of the problem",
      MapSchedule(ScheduleDynamicCp(problem.samples, problem.options),
                  [salt](Schedule s) { return RelabelSchedule(std::move(s), salt); }),
      "schedule of the relabelled problem",
      ScheduleDynamicCp(renamed.samples, renamed.options));
}

absl::Status CheckDoublingKeepsLayout(const DynamicCpProblem& problem) {
  if (2 * problem.options.max_seq_len_per_rank > kMaxSeqLenPerRank) return absl::OkStatus();
  DynamicCpProblem doubled = problem;
  doubled.options.max_seq_len_per_rank *= 2;
  for (Sample& sample : doubled.samples) {
    if (2 * sample.len > kMaxSampleLen) return absl::OkStatus();
    sample.len *= 2;
  }
  return CompareOutcomes("schedule", ScheduleDynamicCp(problem.samples, problem.options),
                         "schedule with lengths and mslpr doubled",
                         ScheduleDynamicCp(doubled.samples, doubled.options));
}

absl::Status CheckPermutationKeepsSchedule(const DynamicCpProblem& problem,
                                           std::uint64_t shuffle_seed) {
  absl::flat_hash_set<std::int64_t> lengths;
  for (const Sample& sample : problem.samples) {
    if (!lengths.insert(sample.len).second) {
      return absl::InvalidArgumentError("two samples have the same length");
    }
  }
  DynamicCpProblem shuffled = problem;
  std::mt19937_64 random(shuffle_seed);
  std::shuffle(shuffled.samples.begin(), shuffled.samples.end(), random);
  return CompareOutcomes("schedule", ScheduleDynamicCp(problem.samples, problem.options),
                         "schedule of the shuffled samples",
                         ScheduleDynamicCp(shuffled.samples, shuffled.options));
}

absl::Status CheckMinCpOneIsTheDefault(const DynamicCpProblem& problem) {
  DynamicCpOptions explicit_one = problem.options;
  explicit_one.min_cp_size = 1;
  DynamicCpOptions defaulted;
  defaulted.total_gpus = problem.options.total_gpus;
  defaulted.max_seq_len_per_rank = problem.options.max_seq_len_per_rank;
  defaulted.vpp_group = problem.options.vpp_group;
  defaulted.max_num_seqs = problem.options.max_num_seqs;
  return CompareOutcomes("schedule with min_cp_size 1",
                         ScheduleDynamicCp(problem.samples, explicit_one),
                         "schedule with min_cp_size unset",
                         ScheduleDynamicCp(problem.samples, defaulted));
}

absl::Status CheckCapOfEverySampleIsNoCap(const DynamicCpProblem& problem) {
  DynamicCpOptions uncapped = problem.options;
  uncapped.max_num_seqs.reset();
  DynamicCpOptions loose = problem.options;
  loose.max_num_seqs = std::max<std::int64_t>(1, static_cast<std::int64_t>(problem.samples.size()));
  const std::string cap = absl::StrCat(*loose.max_num_seqs);
  if (absl::Status step = CompareOutcomes(
          "step without a cap", PackingAwareStep(problem.samples, uncapped),
          absl::StrCat("step with max_num_seqs ", cap), PackingAwareStep(problem.samples, loose));
      !step.ok()) {
    return step;
  }
  if (absl::Status placement =
          CompareOutcomes("placement without a cap", PackingAwarePlacement(problem.samples, uncapped),
                          absl::StrCat("placement with max_num_seqs ", cap),
                          PackingAwarePlacement(problem.samples, loose));
      !placement.ok()) {
    return placement;
  }
  return CompareOutcomes("schedule without a cap", ScheduleDynamicCp(problem.samples, uncapped),
                         absl::StrCat("schedule with max_num_seqs ", cap),
                         ScheduleDynamicCp(problem.samples, loose));
}

absl::Status CheckCapOneHoldsOneSamplePerRank(const DynamicCpProblem& problem) {
  DynamicCpOptions one = problem.options;
  one.max_num_seqs = 1;
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, one);
  if (!schedule.ok()) return AcceptableFailure(schedule.status());
  for (std::size_t m = 0; m < schedule->microbatches.size(); ++m) {
    const auto& ranks = schedule->microbatches[m].rank_ids;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (ranks[r].size() > 1) {
        return Fail(absl::StrCat("max_num_seqs 1: microbatch ", m, " rank ", r, " holds ",
                                 RankText(ranks[r])));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckInvalidIsRejected(const DynamicCpProblem& problem) {
  const std::vector<std::pair<const char*, absl::Status>> outcomes = {
      {"PackingAwareStep", PackingAwareStep(problem.samples, problem.options).status()},
      {"PackingAwarePlacement", PackingAwarePlacement(problem.samples, problem.options).status()},
      {"ScheduleDynamicCp", ScheduleDynamicCp(problem.samples, problem.options).status()},
      {"ScheduleDynamicCpCompact",
       ScheduleDynamicCpCompact(problem.samples, problem.options).status()},
      {"ScheduleLegacy", ScheduleLegacy(problem.samples, problem.options).status()},
      {"ScheduleLegacyCompact", ScheduleLegacyCompact(problem.samples, problem.options).status()},
      {"CheckSchedule", CheckSchedule(problem.samples, Schedule{}, problem.options)},
      {"oracle step", ReferencePackingAwareStep(problem.samples, problem.options).status()},
      {"oracle placement",
       oracle::ReferencePackingAwarePlacement(problem.samples, problem.options).status()},
      {"oracle schedule", ReferenceScheduleDynamicCp(problem.samples, problem.options).status()},
      {"oracle legacy schedule",
       ReferenceScheduleLegacy(problem.samples, problem.options).status()},
  };
  for (const auto& [entry_point, status] : outcomes) {
    if (status.code() != absl::StatusCode::kInvalidArgument) {
      return Fail(absl::StrCat(entry_point, " gives ", status.ToString(),
                               " for an invalid problem, not INVALID_ARGUMENT"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckLegacyRefusesSequenceCap(const DynamicCpProblem& problem) {
  DynamicCpProblem capped = problem;
  if (!capped.options.max_num_seqs.has_value()) capped.options.max_num_seqs = 1;
  const std::vector<std::pair<const char*, absl::Status>> outcomes = {
      {"ScheduleLegacy", ScheduleLegacy(capped.samples, capped.options).status()},
      {"ScheduleLegacyCompact", ScheduleLegacyCompact(capped.samples, capped.options).status()},
      {"oracle legacy schedule", ReferenceScheduleLegacy(capped.samples, capped.options).status()},
  };
  for (const auto& [entry_point, status] : outcomes) {
    if (status.code() != absl::StatusCode::kInvalidArgument) {
      return Fail(absl::StrCat(entry_point, " gives ", status.ToString(), " for max_num_seqs ",
                               *capped.options.max_num_seqs, ", not INVALID_ARGUMENT"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckLegacyKeepsInvariants(const DynamicCpProblem& problem) {
  if (problem.options.max_num_seqs.has_value()) return CheckLegacyRefusesSequenceCap(problem);
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(problem.samples, problem.options);
  if (!schedule.ok()) return AcceptableFailure(schedule.status());
  const absl::Status status = CheckSchedule(problem.samples, *schedule, problem.options);
  if (status.ok()) return status;
  return Fail(absl::StrCat("legacy schedule: ", status.message()));
}

absl::Status CheckQualityLowerBound(absl::Span<const Sample> samples,
                                    const CompactSchedule& schedule,
                                    std::int64_t max_seq_len_per_rank) {
  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, max_seq_len_per_rank);
  if (!quality.ok()) return Fail(absl::StrCat("MeasureQuality: ", quality.status().ToString()));
  return CheckLowerBound(*quality, max_seq_len_per_rank);
}

absl::Status CheckQualityReadsSchedule(const DynamicCpProblem& problem,
                                       const Schedule& schedule) {
  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(problem.samples, schedule, problem.options.max_seq_len_per_rank);
  if (!quality.ok()) return Fail(absl::StrCat("MeasureQuality: ", quality.status().ToString()));
  const std::int64_t g = problem.options.total_gpus;
  const auto count = static_cast<std::int64_t>(schedule.microbatches.size());
  if (quality->microbatch_count != count || quality->microbatches.size() != schedule.microbatches.size()) {
    return Fail(absl::StrCat("quality counts ", quality->microbatch_count, " microbatches, not ", count));
  }
  if (quality->total_gpus != (count == 0 ? 0 : g)) {
    return Fail(absl::StrCat("quality reads G = ", quality->total_gpus, ", not ", g));
  }
  absl::flat_hash_map<SampleId, std::int64_t> lens;
  for (const Sample& sample : problem.samples) lens[sample.id] = sample.len;
  for (std::size_t m = 0; m < quality->microbatches.size(); ++m) {
    const MicrobatchLoad& load = quality->microbatches[m];
    const absl::flat_hash_map<SampleId, std::int64_t> holders =
        CountHolders(schedule.microbatches[m].rank_ids);
    std::int64_t next_rank = 0;
    for (const CpGroupLoad& group : load.groups) {
      if (group.first_rank != next_rank || group.size < 1) {
        return Fail(absl::StrCat("microbatch ", m, ": a run starts at rank ", group.first_rank,
                                 " with ", group.size, " ranks; the previous ended before ",
                                 next_rank));
      }
      const std::vector<std::vector<SampleId>>& ranks = schedule.microbatches[m].rank_ids;
      const auto width = static_cast<std::int64_t>(ranks.size());
      for (std::int64_t r = group.first_rank; r < group.first_rank + group.size && r < width; ++r) {
        if (ranks[static_cast<std::size_t>(r)] != group.ids) {
          return Fail(absl::StrCat("microbatch ", m, " rank ", r, " holds other ids than its run"));
        }
      }
      const double work = RankLoadOf(lens, holders, group.ids, Work);
      const double tokens = RankLoadOf(lens, holders, group.ids, TokensPerRank);
      if (group.work_per_rank != work || group.tokens_per_rank != tokens) {
        return Fail(absl::StrCat("microbatch ", m, ": the run at rank ", group.first_rank,
                                 " carries ", group.work_per_rank, " work and ",
                                 group.tokens_per_rank, " tokens per rank, not ", work, " and ",
                                 tokens));
      }
      next_rank += group.size;
    }
    if (next_rank != g) {
      return Fail(absl::StrCat("microbatch ", m, ": its runs cover ", next_rank, " of ", g, " ranks"));
    }
    if (load.width() != g) {
      return Fail(absl::StrCat("microbatch ", m, ": width() is ", load.width(), ", not G = ", g));
    }
    const std::vector<double> rank_work = RankWork(load);
    const auto [least, most] = std::minmax_element(rank_work.begin(), rank_work.end());
    if (load.max_work != *most || load.min_work != *least) {
      return Fail(absl::StrCat("microbatch ", m, ": busiest and idlest work ", load.max_work, ", ",
                               load.min_work, " but its ranks range over ", *most, ", ", *least));
    }
    // SumOverRanks adds rank by rank, bit for bit as the per-rank lists add.
    const std::vector<double> rank_tokens = RankTokens(load);
    const double work_sum = std::accumulate(rank_work.begin(), rank_work.end(), 0.0);
    const double token_sum = std::accumulate(rank_tokens.begin(), rank_tokens.end(), 0.0);
    if (SumOverRanks(load, &CpGroupLoad::work_per_rank) != work_sum ||
        SumOverRanks(load, &CpGroupLoad::tokens_per_rank) != token_sum) {
      return Fail(absl::StrCat("microbatch ", m, ": SumOverRanks gives work ",
                               SumOverRanks(load, &CpGroupLoad::work_per_rank), " and tokens ",
                               SumOverRanks(load, &CpGroupLoad::tokens_per_rank),
                               ", its ranks add up to ", work_sum, " and ", token_sum));
    }
  }
  std::int64_t total = 0;
  std::int64_t shortest = 0;
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < problem.samples.size(); ++i) {
    const std::int64_t len = problem.samples[i].len;
    total += len;
    shortest = i == 0 ? len : std::min(shortest, len);
    longest = std::max(longest, len);
  }
  if (quality->total_tokens != total || quality->min_len != shortest ||
      quality->max_len != longest) {
    return Fail(absl::StrCat("quality reads ", quality->total_tokens, " tokens of lengths ",
                             quality->min_len, "..", quality->max_len, ", not ", total, " of ",
                             shortest, "..", longest));
  }
  if (absl::Status bound = CheckLowerBound(*quality, problem.options.max_seq_len_per_rank);
      !bound.ok()) {
    return bound;
  }
  if (quality->microbatch_count < quality->microbatch_lower_bound) {
    return Fail(absl::StrCat(count, " microbatches, fewer than the lower bound ",
                             quality->microbatch_lower_bound));
  }
  // The busiest rank carries at least the average of its microbatch, whose
  // ranks' work adds up to its samples' len^2: the critical path is at
  // least sum len^2 / G. Rounding may cross 1 by a few ulps only.
  if (count > 0 && !(quality->balance_efficiency > 0.0 &&
                     quality->balance_efficiency <= 1.0 + 1e-12)) {
    return Fail(absl::StrCat("balance efficiency ", quality->balance_efficiency,
                             " is outside (0, 1]"));
  }
  return absl::OkStatus();
}

absl::Status CheckLegacyMatchesReference(const DynamicCpProblem& problem) {
  return CompareOutcomes("core legacy schedule", ScheduleLegacy(problem.samples, problem.options),
                         "oracle legacy schedule",
                         ReferenceScheduleLegacy(problem.samples, problem.options));
}

absl::Status CheckUnrunnableIsRefused(const DynamicCpProblem& problem, bool legacy) {
  const absl::StatusOr<CompactSchedule> as_upstream =
      legacy ? ScheduleLegacyAsUpstream(problem.samples, problem.options)
             : ScheduleDynamicCpAsUpstream(problem.samples, problem.options);
  const absl::StatusOr<Schedule> expanded =
      as_upstream.ok() ? ExpandSchedule(*as_upstream) : absl::StatusOr<Schedule>(as_upstream.status());
  if (absl::Status same = CompareOutcomes(
          "core schedule as upstream", expanded, "oracle schedule as upstream",
          legacy ? oracle::ReferenceScheduleLegacyAsUpstream(problem.samples, problem.options)
                 : oracle::ReferenceScheduleDynamicCpAsUpstream(problem.samples,
                                                                problem.options));
      !same.ok()) {
    return same;
  }
  const absl::StatusOr<CompactSchedule> runnable =
      legacy ? ScheduleLegacyCompact(problem.samples, problem.options)
             : ScheduleDynamicCpCompact(problem.samples, problem.options);
  if (!as_upstream.ok()) {
    if (runnable.status() == as_upstream.status()) return absl::OkStatus();
    return Fail(absl::StrCat("the scheduler gives ", runnable.status().ToString(),
                             " but as upstream it gives ", as_upstream.status().ToString()));
  }
  bool breaks_runtime_groups = false;
  for (const oracle::ReferenceFinding& finding :
       oracle::ReferenceFindViolations(problem.samples, *expanded, problem.options)) {
    breaks_runtime_groups = breaks_runtime_groups || finding.invariant == 11;
  }
  if (!breaks_runtime_groups) {
    if (runnable.ok() && *runnable == *as_upstream) return absl::OkStatus();
    return Fail(absl::StrCat("upstream's schedule keeps invariant 11, but the scheduler gives ",
                             runnable.ok() ? "another schedule" : runnable.status().ToString()));
  }
  if (runnable.ok()) {
    return Fail("the scheduler returned upstream's schedule, which the reference checker "
                "finds breaking invariant 11");
  }
  if (runnable.status().code() != absl::StatusCode::kFailedPrecondition ||
      !absl::StartsWith(runnable.status().message(),
                        "upstream returns a schedule its runtime cannot run: invariant 11 "
                        "(runtime groups): microbatch ")) {
    return Fail(absl::StrCat("an unrunnable schedule is refused with ",
                             runnable.status().ToString()));
  }
  return absl::OkStatus();
}

namespace {

bool KeepsRuntimeGroups(absl::Span<const Sample> samples, const Microbatch& microbatch,
                        const DynamicCpOptions& options) {
  for (const Violation& violation :
       FindViolations(samples, Schedule{{microbatch}}, options)) {
    if (violation.invariant == Invariant::kRuntimeGroups) return false;
  }
  return true;
}

}  // namespace

absl::Status CheckRuntimeOptimumAgreesWithChecker(const DynamicCpProblem& problem) {
  const absl::StatusOr<oracle::ExhaustiveOptimum> best =
      oracle::ExhaustiveBestPlacement(problem.samples, problem.options);
  const absl::StatusOr<oracle::ExhaustiveOptimum> runnable = oracle::ExhaustiveBestPlacement(
      problem.samples, problem.options, oracle::PlacementRule::kRuntimeGroups);
  if (!best.ok() || !runnable.ok()) {
    if (best.ok() && runnable.status().code() == absl::StatusCode::kNotFound) {
      if (KeepsRuntimeGroups(problem.samples, best->microbatch, problem.options)) {
        return Fail("the checker finds the best placement runnable, but the oracle has no "
                    "runnable placement");
      }
      return absl::OkStatus();
    }
    if (best.status().code() == runnable.status().code()) return absl::OkStatus();
    return Fail(absl::StrCat("exhaustive oracle: ", best.status().ToString(),
                             " but with runtime groups ", runnable.status().ToString()));
  }
  if (!KeepsRuntimeGroups(problem.samples, runnable->microbatch, problem.options)) {
    return Fail("the best runnable placement of the exhaustive oracle breaks invariant 11 "
                "in the checker");
  }
  if (KeepsRuntimeGroups(problem.samples, best->microbatch, problem.options) &&
      best->scaled_max_work != runnable->scaled_max_work) {
    return Fail(absl::StrCat("the best placement keeps invariant 11 (scaled work ",
                             best->scaled_max_work, ") but the best runnable one is worse (",
                             runnable->scaled_max_work, ")"));
  }
  const absl::StatusOr<PackedMicrobatch> step =
      PackingAwareStep(problem.samples, problem.options);
  if (!step.ok() || !step->leftovers.empty() ||
      !KeepsRuntimeGroups(problem.samples, step->microbatch, problem.options)) {
    return absl::OkStatus();
  }
  const absl::StatusOr<std::int64_t> step_work =
      oracle::ScaledMaxRankWork(step->microbatch, problem.samples);
  if (!step_work.ok()) return step_work.status();
  if (*step_work < runnable->scaled_max_work) {
    return Fail(absl::StrCat("a runnable packing-aware step (scaled work ", *step_work,
                             ") beats the best runnable placement (",
                             runnable->scaled_max_work, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckCompactMatchesPerRank(const DynamicCpProblem& problem) {
  return CompareCompactOutcome(
      "packing-aware", ScheduleDynamicCpCompact(problem.samples, problem.options),
      ScheduleDynamicCp(problem.samples, problem.options));
}

absl::Status CheckLegacyCompactMatchesPerRank(const DynamicCpProblem& problem) {
  return CompareCompactOutcome("legacy",
                               ScheduleLegacyCompact(problem.samples, problem.options),
                               ScheduleLegacy(problem.samples, problem.options));
}

absl::Status CheckDpBalancedCompactMatchesPerRank(const DpBalancedProblem& problem) {
  return CompareCompactOutcome("dp_balanced",
                               ScheduleDpBalancedCompact(problem.lens, problem.options),
                               ScheduleDpBalanced(problem.lens, problem.options));
}

absl::Status CheckAlignmentCompactMatchesPerRank(const Schedule& schedule,
                                                 std::int64_t vpp_group) {
  return CompareCompactOutcome("VPP alignment",
                               AlignToVppGroup(CompactFromRanks(schedule), vpp_group),
                               AlignToVppGroup(schedule, vpp_group));
}

namespace {

// The first failure of `outcomes`, named, or OK.
absl::Status FirstFailure(const std::vector<std::pair<const char*, absl::Status>>& outcomes) {
  for (const auto& [name, status] : outcomes) {
    if (!status.ok()) return Fail(absl::StrCat(name, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckLegacyDeterministic(const DynamicCpProblem& problem) {
  return CompareOutcomes("first legacy run", ScheduleLegacy(problem.samples, problem.options),
                         "second legacy run", ScheduleLegacy(problem.samples, problem.options));
}

absl::Status CheckEveryPackingAwareProperty(const DynamicCpProblem& problem) {
  if (!ValidateDynamicCpProblem(problem.samples, problem.options).ok()) {
    return CheckInvalidIsRejected(problem);
  }
  std::vector<std::pair<const char*, absl::Status>> outcomes;
  for (const Invariant invariant :
       {Invariant::kNoEmptyRank, Invariant::kEachSampleOnce, Invariant::kPowerOfTwoCp,
        Invariant::kTokenBudget, Invariant::kWorkCap, Invariant::kMinimumCp,
        Invariant::kVppMultiple, Invariant::kSequenceCap, Invariant::kRuntimeGroups}) {
    outcomes.emplace_back("invariant", CheckKeepsInvariant(problem, invariant));
  }
  outcomes.emplace_back("unrunnable refused", CheckUnrunnableIsRefused(problem, false));
  outcomes.emplace_back("empty ranks form a tail", CheckEmptyRanksFormATail(problem));
  outcomes.emplace_back("placement matches reference", CheckPlacementMatchesReference(problem));
  outcomes.emplace_back("deterministic", CheckDeterministic(problem));
  outcomes.emplace_back("step matches oracle", CheckStepMatchesOracle(problem));
  outcomes.emplace_back("schedule matches oracle", CheckScheduleMatchesOracle(problem));
  outcomes.emplace_back("relabelling", CheckRelabellingRelabels(problem, 0x5EED));
  outcomes.emplace_back("doubling", CheckDoublingKeepsLayout(problem));
  outcomes.emplace_back("min_cp 1 is the default", CheckMinCpOneIsTheDefault(problem));
  outcomes.emplace_back("a cap of every sample is no cap", CheckCapOfEverySampleIsNoCap(problem));
  outcomes.emplace_back("cap 1 holds one sample per rank",
                        CheckCapOneHoldsOneSamplePerRank(problem));
  if (const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
      schedule.ok()) {
    outcomes.emplace_back("quality", CheckQualityReadsSchedule(problem, *schedule));
  }
  outcomes.emplace_back("compact form is the per-rank form", CheckCompactMatchesPerRank(problem));
  const absl::Status permutation = CheckPermutationKeepsSchedule(problem, 0x5EED);
  if (permutation.code() != absl::StatusCode::kInvalidArgument) {
    outcomes.emplace_back("permutation", permutation);
  }
  return FirstFailure(outcomes);
}

absl::Status CheckEveryLegacyProperty(const DynamicCpProblem& problem) {
  if (!ValidateDynamicCpProblem(problem.samples, problem.options).ok()) {
    return CheckInvalidIsRejected(problem);
  }
  std::vector<std::pair<const char*, absl::Status>> outcomes;
  outcomes.emplace_back("legacy refuses a cap", CheckLegacyRefusesSequenceCap(problem));
  // The legacy scheduler takes no cap: its checks run on the problem without.
  DynamicCpProblem uncapped = problem;
  uncapped.options.max_num_seqs.reset();
  outcomes.emplace_back("legacy invariants", CheckLegacyKeepsInvariants(uncapped));
  outcomes.emplace_back("legacy unrunnable refused", CheckUnrunnableIsRefused(uncapped, true));
  outcomes.emplace_back("legacy matches oracle", CheckLegacyMatchesReference(uncapped));
  outcomes.emplace_back("legacy compact form is the per-rank form",
                        CheckLegacyCompactMatchesPerRank(uncapped));
  outcomes.emplace_back("legacy deterministic", CheckLegacyDeterministic(uncapped));
  return FirstFailure(outcomes);
}

absl::Status CheckEveryProperty(const DynamicCpProblem& problem) {
  if (absl::Status packing_aware = CheckEveryPackingAwareProperty(problem); !packing_aware.ok()) {
    return packing_aware;
  }
  return CheckEveryLegacyProperty(problem);
}

}  // namespace dcpsched::properties

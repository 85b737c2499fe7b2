#include "core/quality.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/types.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

// The input samples sorted by id, so that a schedule's ids can be looked up
// and counted by position.
class SampleIndex {
 public:
  static absl::StatusOr<SampleIndex> Build(absl::Span<const Sample> samples) {
    std::vector<Sample> by_id(samples.begin(), samples.end());
    std::sort(by_id.begin(), by_id.end(),
              [](const Sample& a, const Sample& b) { return a.id < b.id; });
    for (std::size_t i = 0; i < by_id.size(); ++i) {
      if (i > 0 && by_id[i].id == by_id[i - 1].id) {
        return absl::InvalidArgumentError(absl::StrCat(
            "sample id ", by_id[i].id,
            " appears twice in the samples; give every sample its own id"));
      }
      if (by_id[i].len < 1 || by_id[i].len > kMaxSampleLen) {
        return absl::InvalidArgumentError(
            absl::StrCat("sample ", by_id[i].id, " has length ", by_id[i].len,
                         "; lengths must be between 1 and ", kMaxSampleLen));
      }
    }
    return SampleIndex(std::move(by_id));
  }

  std::size_t size() const { return by_id_.size(); }
  std::int64_t len(std::size_t position) const { return by_id_[position].len; }

  // Position of `id`; InvalidArgument naming the microbatch and the ranks
  // of the group that hold it when it is unknown.
  absl::StatusOr<std::size_t> Find(SampleId id, std::size_t microbatch,
                                   const CpGroupIds& group) const {
    const auto it = std::lower_bound(
        by_id_.begin(), by_id_.end(), id,
        [](const Sample& sample, SampleId key) { return sample.id < key; });
    if (it == by_id_.end() || it->id != id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", microbatch, " ", RankRange(group.first_rank, group.size),
          group.size == 1 ? " holds" : " hold", " sample id ", id,
          ", which is not among the ", by_id_.size(),
          " samples; measure a schedule against the samples it was made from"));
    }
    return static_cast<std::size_t>(it - by_id_.begin());
  }

 private:
  explicit SampleIndex(std::vector<Sample> by_id) : by_id_(std::move(by_id)) {}

  std::vector<Sample> by_id_;
};

// The width of microbatch `index`: InvalidArgument when its groups do not
// tile its ranks (MicrobatchWidth) or it has none.
absl::StatusOr<std::int64_t> CheckedWidth(const CompactMicrobatch& microbatch,
                                          std::size_t index) {
  absl::StatusOr<std::int64_t> width = MicrobatchWidth(microbatch, index);
  if (width.ok() && *width == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "microbatch ", index, " has no ranks; every microbatch needs G >= 1 "
        "ranks"));
  }
  return width;
}

// Measures microbatch `index`. `cp_size` has one zero per sample on entry
// and on exit; in between it counts the ranks that hold each sample.
absl::StatusOr<MicrobatchLoad> MeasureMicrobatch(
    const CompactMicrobatch& microbatch, std::size_t index,
    const SampleIndex& samples, std::vector<std::int64_t>& cp_size) {
  std::vector<std::vector<std::size_t>> positions(microbatch.groups.size());
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    for (const SampleId id : microbatch.groups[g].ids) {
      absl::StatusOr<std::size_t> position = samples.Find(id, index, microbatch.groups[g]);
      if (!position.ok()) {
        for (const std::vector<std::size_t>& seen : positions) {
          for (const std::size_t p : seen) cp_size[p] = 0;
        }
        return position.status();
      }
      positions[g].push_back(*position);
      cp_size[*position] += microbatch.groups[g].size;
    }
  }
  MicrobatchLoad load;
  load.groups.reserve(microbatch.groups.size());
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const CpGroupIds& group = microbatch.groups[g];
    double tokens = 0.0;
    double work = 0.0;
    for (const std::size_t position : positions[g]) {
      tokens += TokensPerRank(samples.len(position), cp_size[position]);
      work += Work(samples.len(position), cp_size[position]);
    }
    load.groups.push_back(CpGroupLoad{.first_rank = group.first_rank,
                                      .size = group.size,
                                      .ids = group.ids,
                                      .tokens_per_rank = tokens,
                                      .work_per_rank = work});
  }
  const auto [idlest, busiest] = std::minmax_element(
      load.groups.begin(), load.groups.end(),
      [](const CpGroupLoad& a, const CpGroupLoad& b) {
        return a.work_per_rank < b.work_per_rank;
      });
  load.min_work = idlest->work_per_rank;
  load.max_work = busiest->work_per_rank;
  for (const std::vector<std::size_t>& group : positions) {
    for (const std::size_t position : group) cp_size[position] = 0;
  }
  return load;
}

// ceil(total_tokens / (total_gpus * max_seq_len_per_rank)), exactly. Both
// factors of the divisor are below 2^63, so their product fits in 128 bits.
std::int64_t MicrobatchLowerBound(std::int64_t total_tokens,
                                  std::int64_t total_gpus,
                                  std::int64_t max_seq_len_per_rank) {
  if (total_gpus == 0) return 0;
  const __int128 divisor =
      static_cast<__int128>(total_gpus) * max_seq_len_per_rank;
  return static_cast<std::int64_t>((total_tokens + divisor - 1) / divisor);
}

// The per-sample figures: total tokens, length range and the efficiency's
// numerator (sum of len^2). Lengths are at most 2^26, so len^2 < 2^53 and
// the sums stay exact in 128 bits for any sample count a machine can hold.
void MeasureSamples(absl::Span<const Sample> samples, ScheduleQuality& quality,
                    __int128& total_squares) {
  __int128 total_tokens = 0;
  for (const Sample& sample : samples) {
    total_tokens += sample.len;
    total_squares += static_cast<__int128>(sample.len) * sample.len;
  }
  quality.total_tokens = static_cast<std::int64_t>(total_tokens);
  if (samples.empty()) return;
  const auto [shortest, longest] = std::minmax_element(
      samples.begin(), samples.end(),
      [](const Sample& a, const Sample& b) { return a.len < b.len; });
  quality.min_len = shortest->len;
  quality.max_len = longest->len;
}

std::vector<double> PerRank(const MicrobatchLoad& load,
                            double CpGroupLoad::*value) {
  std::vector<double> ranks;
  ranks.reserve(static_cast<std::size_t>(load.width()));
  for (const CpGroupLoad& group : load.groups) {
    ranks.insert(ranks.end(), static_cast<std::size_t>(group.size),
                 group.*value);
  }
  return ranks;
}

}  // namespace

absl::StatusOr<ScheduleQuality> MeasureQuality(
    absl::Span<const Sample> samples, const CompactSchedule& schedule,
    std::int64_t max_seq_len_per_rank) {
  if (max_seq_len_per_rank < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_seq_len_per_rank is ", max_seq_len_per_rank, "; it must be >= 1"));
  }
  absl::StatusOr<SampleIndex> index = SampleIndex::Build(samples);
  if (!index.ok()) return index.status();
  if (schedule.microbatches.empty() && !samples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the schedule has no microbatches but there are ", samples.size(),
        " samples; measure a schedule that places them"));
  }
  ScheduleQuality quality;
  quality.microbatch_count =
      static_cast<std::int64_t>(schedule.microbatches.size());
  quality.microbatches.reserve(schedule.microbatches.size());
  std::vector<std::int64_t> cp_size(index->size(), 0);
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const CompactMicrobatch& microbatch = schedule.microbatches[m];
    absl::StatusOr<std::int64_t> width = CheckedWidth(microbatch, m);
    if (!width.ok()) return width.status();
    if (m == 0) quality.total_gpus = *width;
    if (*width != quality.total_gpus) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", m, " has ", *width,
          " ranks but microbatch 0 has ", quality.total_gpus,
          "; every microbatch must have the same G ranks"));
    }
    absl::StatusOr<MicrobatchLoad> load =
        MeasureMicrobatch(microbatch, m, *index, cp_size);
    if (!load.ok()) return load.status();
    quality.critical_path_work += load->max_work;
    quality.max_rank_work = std::max(quality.max_rank_work, load->max_work);
    quality.microbatches.push_back(*std::move(load));
  }
  __int128 total_squares = 0;
  MeasureSamples(samples, quality, total_squares);
  if (quality.critical_path_work > 0.0) {
    const double ideal_work = static_cast<double>(total_squares) /
                              static_cast<double>(quality.total_gpus);
    quality.balance_efficiency = ideal_work / quality.critical_path_work;
  }
  quality.microbatch_lower_bound = MicrobatchLowerBound(
      quality.total_tokens, quality.total_gpus, max_seq_len_per_rank);
  return quality;
}

absl::StatusOr<ScheduleQuality> MeasureQuality(
    absl::Span<const Sample> samples, const Schedule& schedule,
    std::int64_t max_seq_len_per_rank) {
  return MeasureQuality(samples, CompactFromRanks(schedule),
                        max_seq_len_per_rank);
}

std::vector<double> RankTokens(const MicrobatchLoad& load) {
  return PerRank(load, &CpGroupLoad::tokens_per_rank);
}

std::vector<double> RankWork(const MicrobatchLoad& load) {
  return PerRank(load, &CpGroupLoad::work_per_rank);
}

double SumOverRanks(const MicrobatchLoad& load, double CpGroupLoad::*value) {
  double sum = 0.0;
  for (const CpGroupLoad& group : load.groups) {
    for (std::int64_t r = 0; r < group.size; ++r) sum += group.*value;
  }
  return sum;
}

}  // namespace dcpsched

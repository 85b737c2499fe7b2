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

  // Position of `id` in the index; InvalidArgument naming the microbatch
  // and rank that hold it when it is unknown.
  absl::StatusOr<std::size_t> Find(SampleId id, std::size_t microbatch,
                                   std::size_t rank) const {
    const auto it = std::lower_bound(
        by_id_.begin(), by_id_.end(), id,
        [](const Sample& sample, SampleId key) { return sample.id < key; });
    if (it == by_id_.end() || it->id != id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", microbatch, " rank ", rank, " holds sample id ", id,
          ", which is not among the ", by_id_.size(),
          " samples; measure a schedule against the samples it was made from"));
    }
    return static_cast<std::size_t>(it - by_id_.begin());
  }

 private:
  explicit SampleIndex(std::vector<Sample> by_id) : by_id_(std::move(by_id)) {}

  std::vector<Sample> by_id_;
};

// A microbatch with every id replaced by its position in the SampleIndex.
using IndexedMicrobatch = std::vector<std::vector<std::size_t>>;

absl::StatusOr<IndexedMicrobatch> IndexMicrobatch(const Microbatch& microbatch,
                                                  std::size_t microbatch_number,
                                                  const SampleIndex& index) {
  IndexedMicrobatch indexed(microbatch.rank_ids.size());
  for (std::size_t rank = 0; rank < microbatch.rank_ids.size(); ++rank) {
    for (const SampleId id : microbatch.rank_ids[rank]) {
      absl::StatusOr<std::size_t> position =
          index.Find(id, microbatch_number, rank);
      if (!position.ok()) return position.status();
      indexed[rank].push_back(*position);
    }
  }
  return indexed;
}

// Splits the ranks into maximal runs of equal id lists.
std::vector<CpGroupLoad> FindGroups(const Microbatch& microbatch,
                                    const MicrobatchLoad& load) {
  std::vector<CpGroupLoad> groups;
  const std::vector<std::vector<SampleId>>& ranks = microbatch.rank_ids;
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    if (rank > 0 && ranks[rank] == ranks[rank - 1]) {
      ++groups.back().size;
      continue;
    }
    groups.push_back(CpGroupLoad{
        .first_rank = static_cast<std::int64_t>(rank),
        .size = 1,
        .ids = ranks[rank],
        .tokens_per_rank = load.rank_tokens[rank],
        .work_per_rank = load.rank_work[rank],
    });
  }
  return groups;
}

// Measures one microbatch. `cp_size` has one zero per sample on entry and on
// exit; in between it counts the ranks that hold each sample (its CP size).
// Reusing it keeps the cost proportional to the microbatch, not to the batch.
MicrobatchLoad MeasureMicrobatch(const Microbatch& microbatch,
                                 const IndexedMicrobatch& indexed,
                                 const SampleIndex& index,
                                 std::vector<std::int64_t>& cp_size) {
  for (const std::vector<std::size_t>& rank : indexed) {
    for (const std::size_t position : rank) ++cp_size[position];
  }
  MicrobatchLoad load;
  for (const std::vector<std::size_t>& rank : indexed) {
    double tokens = 0.0;
    double work = 0.0;
    for (const std::size_t position : rank) {
      tokens += TokensPerRank(index.len(position), cp_size[position]);
      work += Work(index.len(position), cp_size[position]);
    }
    load.rank_tokens.push_back(tokens);
    load.rank_work.push_back(work);
  }
  load.max_work =
      *std::max_element(load.rank_work.begin(), load.rank_work.end());
  load.min_work =
      *std::min_element(load.rank_work.begin(), load.rank_work.end());
  load.groups = FindGroups(microbatch, load);
  for (const std::vector<std::size_t>& rank : indexed) {
    for (const std::size_t position : rank) cp_size[position] = 0;
  }
  return load;
}

// The width G shared by every microbatch, or InvalidArgument.
absl::StatusOr<std::int64_t> CommonWidth(const Schedule& schedule,
                                         std::size_t sample_count) {
  if (schedule.microbatches.empty()) {
    if (sample_count == 0) return 0;
    return absl::InvalidArgumentError(absl::StrCat(
        "the schedule has no microbatches but there are ", sample_count,
        " samples; measure a schedule that places them"));
  }
  const std::size_t width = schedule.microbatches.front().rank_ids.size();
  if (width == 0) {
    return absl::InvalidArgumentError(
        "microbatch 0 has no ranks; every microbatch needs G >= 1 ranks");
  }
  for (std::size_t i = 0; i < schedule.microbatches.size(); ++i) {
    const std::size_t this_width = schedule.microbatches[i].rank_ids.size();
    if (this_width != width) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", i, " has ", this_width, " ranks but microbatch 0 has ",
          width, "; every microbatch must have the same G ranks"));
    }
  }
  return static_cast<std::int64_t>(width);
}

// ceil(total_tokens / (total_gpus * max_seq_len_per_rank)), exactly. Both
// factors of the divisor are below 2^63, so their product fits in 128 bits.
std::int64_t MicrobatchLowerBound(std::int64_t total_tokens,
                                  std::int64_t total_gpus,
                                  std::int64_t max_seq_len_per_rank) {
  if (total_gpus == 0) return 0;
  const __int128 divisor =
      static_cast<__int128>(total_gpus) * max_seq_len_per_rank;
  const __int128 bound = (total_tokens + divisor - 1) / divisor;
  return static_cast<std::int64_t>(bound);
}

}  // namespace

absl::StatusOr<ScheduleQuality> MeasureQuality(
    absl::Span<const Sample> samples, const Schedule& schedule,
    std::int64_t max_seq_len_per_rank) {
  if (max_seq_len_per_rank < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_seq_len_per_rank is ", max_seq_len_per_rank, "; it must be >= 1"));
  }
  absl::StatusOr<SampleIndex> index = SampleIndex::Build(samples);
  if (!index.ok()) return index.status();
  absl::StatusOr<std::int64_t> total_gpus =
      CommonWidth(schedule, samples.size());
  if (!total_gpus.ok()) return total_gpus.status();

  ScheduleQuality quality;
  quality.total_gpus = *total_gpus;
  quality.microbatch_count =
      static_cast<std::int64_t>(schedule.microbatches.size());
  std::vector<std::int64_t> cp_size(index->size(), 0);
  for (std::size_t i = 0; i < schedule.microbatches.size(); ++i) {
    absl::StatusOr<IndexedMicrobatch> indexed =
        IndexMicrobatch(schedule.microbatches[i], i, *index);
    if (!indexed.ok()) return indexed.status();
    quality.microbatches.push_back(
        MeasureMicrobatch(schedule.microbatches[i], *indexed, *index, cp_size));
    quality.critical_path_work += quality.microbatches.back().max_work;
  }

  // Lengths are at most 2^26, so len^2 < 2^53 and the sums stay exact in
  // 128 bits for any sample count a machine can hold.
  __int128 total_tokens = 0;
  __int128 total_squares = 0;
  for (const Sample& sample : samples) {
    total_tokens += sample.len;
    total_squares += static_cast<__int128>(sample.len) * sample.len;
  }
  quality.total_tokens = static_cast<std::int64_t>(total_tokens);
  if (!samples.empty()) {
    const auto [shortest, longest] = std::minmax_element(
        samples.begin(), samples.end(),
        [](const Sample& a, const Sample& b) { return a.len < b.len; });
    quality.min_len = shortest->len;
    quality.max_len = longest->len;
  }
  if (quality.critical_path_work > 0.0) {
    const double ideal_work = static_cast<double>(total_squares) /
                              static_cast<double>(quality.total_gpus);
    quality.balance_efficiency = ideal_work / quality.critical_path_work;
  }
  quality.microbatch_lower_bound = MicrobatchLowerBound(
      quality.total_tokens, quality.total_gpus, max_seq_len_per_rank);
  return quality;
}

}  // namespace dcpsched

#include "core/gpu_time.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/cost_profile.h"
#include "core/types.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

// Bytes per second in one GB/s.
constexpr double kBytesPerGigabyte = 1e9;
// Passes of the KV exchange per layer: forward KV, backward KV and dKV.
constexpr double kExchangePasses = 3.0;

// Seconds the ring-attention exchange of a sample of `len` tokens on
// `cp_size` > 1 ranks takes on each of them.
double ExchangeSeconds(const CommunicationModel& model, std::int64_t len,
                       std::int64_t cp_size) {
  const double gb_per_s = cp_size <= model.gpus_per_node
                              ? model.intra_node_gb_per_s
                              : model.inter_node_gb_per_s;
  const double tokens_per_rank = static_cast<double>(len) / static_cast<double>(cp_size);
  return kExchangePasses * static_cast<double>(cp_size - 1) * tokens_per_rank *
         model.kv_bytes_per_token / (gb_per_s * kBytesPerGigabyte);
}

// The least total time (over all of its ranks) a sample of `len` tokens
// can put on a schedule: c * SampleRankSeconds(len, c), minimised over the
// CP sizes the bound allows (see StepSecondsLowerBound).
double LeastSampleSeconds(const CostProfile& profile, std::int64_t len,
                          std::int64_t total_gpus, const GpuTimeOptions& options) {
  const std::int64_t cp_min =
      options.max_seq_len_per_rank >= 1
          ? MinCpSize(len, options.max_seq_len_per_rank, 1)
          : 1;
  // A sample that no allowed size fits (an invalid problem) is bounded
  // over every allowed size: weaker, still a bound.
  const std::int64_t smallest = cp_min <= total_gpus ? cp_min : 1;
  const auto total = [&](std::int64_t c) {
    return static_cast<double>(c) * SampleRankSeconds(profile, len, c);
  };
  double least = total(total_gpus);
  for (std::int64_t c = 1; c < total_gpus; c *= 2) {
    if (c >= smallest) least = std::min(least, total(c));
  }
  // dp_balanced's size holds any sample of at most fixed * mslpr tokens,
  // even below cp_min (which is a power of two).
  if (options.fixed_cp_size.has_value() && *options.fixed_cp_size >= 1 &&
      *options.fixed_cp_size <= total_gpus &&
      (options.max_seq_len_per_rank < 1 ||
       *options.fixed_cp_size * options.max_seq_len_per_rank >= len)) {
    least = std::min(least, total(*options.fixed_cp_size));
  }
  return least;
}

// Samples by id, for looking up the length of each id a schedule names.
absl::StatusOr<absl::flat_hash_map<SampleId, std::int64_t>> LengthsById(
    absl::Span<const Sample> samples) {
  absl::flat_hash_map<SampleId, std::int64_t> lens;
  lens.reserve(samples.size());
  for (const Sample& sample : samples) {
    if (sample.len < 1 || sample.len > kMaxSampleLen) {
      return absl::InvalidArgumentError(
          absl::StrCat("sample ", sample.id, " has length ", sample.len,
                       "; lengths must be between 1 and ", kMaxSampleLen));
    }
    if (!lens.emplace(sample.id, sample.len).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample id ", sample.id,
          " appears twice in the samples; give every sample its own id"));
    }
  }
  return lens;
}

// The time of microbatch `index`: each id's CP size is the number of ranks
// that hold it in this microbatch.
absl::StatusOr<MicrobatchTime> MeasureMicrobatch(
    const CompactMicrobatch& microbatch, std::size_t index,
    const absl::flat_hash_map<SampleId, std::int64_t>& lens,
    const CostProfile& profile) {
  absl::flat_hash_map<SampleId, std::int64_t> cp_size;
  for (const CpGroupIds& group : microbatch.groups) {
    for (const SampleId id : group.ids) {
      if (!lens.contains(id)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "microbatch ", index, " ", RankRange(group.first_rank, group.size),
            group.size == 1 ? " holds" : " hold", " sample id ", id,
            ", which is not among the ", lens.size(),
            " samples; measure a schedule against the samples it was made from"));
      }
      cp_size[id] += group.size;
    }
  }
  MicrobatchTime time;
  time.group_seconds.reserve(microbatch.groups.size());
  for (const CpGroupIds& group : microbatch.groups) {
    double tokens = 0.0;
    double attention = 0.0;
    for (const SampleId id : group.ids) {
      const std::int64_t len = lens.at(id);
      const std::int64_t c = cp_size.at(id);
      tokens += TokensPerRank(len, c);
      attention += SampleRankSeconds(profile, len, c);
    }
    const double seconds = NonAttentionSeconds(profile, tokens) + attention;
    time.group_seconds.push_back(seconds);
    time.max_seconds = std::max(time.max_seconds, seconds);
  }
  return time;
}

}  // namespace

double SampleRankSeconds(const CostProfile& profile, std::int64_t len,
                         std::int64_t cp_size) {
  if (cp_size <= 1) return CausalAttentionSeconds(profile, static_cast<double>(len));
  const double half = static_cast<double>(len) / static_cast<double>(2 * cp_size);
  const double attention =
      static_cast<double>(2 * cp_size - 1) * FullAttentionSeconds(profile, half) +
      2.0 * CausalAttentionSeconds(profile, half);
  if (!profile.communication.has_value()) return attention;
  return std::max(attention, ExchangeSeconds(*profile.communication, len, cp_size));
}

// Why this is a lower bound. Take any schedule S that places each sample s
// once, in one microbatch, on c_s ranks with c_s among the allowed sizes
// (LeastSampleSeconds). Write T(m, r) for rank r's time in microbatch m.
// Then
//   step(S) = sum_m max_r T(m, r) >= sum_m (1/G) sum_r T(m, r)
// (a maximum is at least the mean), and
//   sum_{m,r} T(m, r) = sum_{m,r} NonAttention(tokens(m, r))
//                     + sum_s c_s * SampleRankSeconds(len_s, c_s).
// First term: NonAttention(t) >= t * k for every t >= 0, where k is the
// least seconds per token (MinNonAttentionSecondsPerToken proves it is the
// infimum over t; t = 0 costs 0). So the term is at least k times the sum
// of all tokens(m, r), and that sum is sum_s len_s, since sample s puts
// len_s / c_s tokens on each of its c_s ranks. Second term: each summand is
// at least its minimum over the allowed sizes, LeastSampleSeconds(s).
// Hence step(S) >= (k * sum_s len_s + sum_s LeastSampleSeconds(s)) / G,
// which is what is computed. Nothing here depends on how S groups the
// samples into microbatches, so it bounds every scheduler alike. (In
// floating point the two sides may differ in the last bits when a schedule
// reaches the bound exactly.)
double StepSecondsLowerBound(absl::Span<const Sample> samples,
                             std::int64_t total_gpus,
                             const CostProfile& profile,
                             const GpuTimeOptions& options) {
  if (total_gpus < 1) return 0.0;
  double tokens = 0.0;
  double attention = 0.0;
  for (const Sample& sample : samples) {
    tokens += static_cast<double>(sample.len);
    attention += LeastSampleSeconds(profile, sample.len, total_gpus, options);
  }
  return (tokens * MinNonAttentionSecondsPerToken(profile) + attention) /
         static_cast<double>(total_gpus);
}

namespace {

// MeasureScheduleTime without the bound (bound_seconds and gpu_efficiency
// left 0), and the schedule's G in `total_gpus`.
absl::StatusOr<ScheduleTime> MeasureMicrobatches(absl::Span<const Sample> samples,
                                                 const CompactSchedule& schedule,
                                                 const CostProfile& profile,
                                                 std::int64_t& total_gpus) {
  absl::StatusOr<absl::flat_hash_map<SampleId, std::int64_t>> lens =
      LengthsById(samples);
  if (!lens.ok()) return lens.status();
  if (schedule.microbatches.empty() && !samples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the schedule has no microbatches but there are ", samples.size(),
        " samples; measure a schedule that places them"));
  }
  ScheduleTime time;
  time.communication_modelled = profile.communication.has_value();
  total_gpus = 0;
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    absl::StatusOr<std::int64_t> width = MicrobatchWidth(schedule.microbatches[m], m);
    if (!width.ok()) return width.status();
    if (m == 0) total_gpus = *width;
    if (*width == 0 || *width != total_gpus) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", m, " has ", *width, " ranks but microbatch 0 has ",
          total_gpus, "; every microbatch must have the same G >= 1 ranks"));
    }
    absl::StatusOr<MicrobatchTime> microbatch =
        MeasureMicrobatch(schedule.microbatches[m], m, *lens, profile);
    if (!microbatch.ok()) return microbatch.status();
    time.step_seconds += microbatch->max_seconds;
    time.microbatches.push_back(*std::move(microbatch));
  }
  return time;
}

}  // namespace

absl::StatusOr<ScheduleTime> MeasureScheduleTimeWithoutBound(absl::Span<const Sample> samples,
                                                             const CompactSchedule& schedule,
                                                             const CostProfile& profile) {
  std::int64_t total_gpus = 0;
  return MeasureMicrobatches(samples, schedule, profile, total_gpus);
}

absl::StatusOr<ScheduleTime> MeasureScheduleTime(
    absl::Span<const Sample> samples, const CompactSchedule& schedule,
    const CostProfile& profile, const GpuTimeOptions& options) {
  std::int64_t total_gpus = 0;
  absl::StatusOr<ScheduleTime> time = MeasureMicrobatches(samples, schedule, profile, total_gpus);
  if (!time.ok()) return time.status();
  time->bound_seconds = StepSecondsLowerBound(samples, total_gpus, profile, options);
  if (time->step_seconds > 0.0) {
    time->gpu_efficiency = time->bound_seconds / time->step_seconds;
  }
  return time;
}

absl::StatusOr<ScheduleTime> MeasureScheduleTime(
    absl::Span<const Sample> samples, const Schedule& schedule,
    const CostProfile& profile, const GpuTimeOptions& options) {
  return MeasureScheduleTime(samples, CompactFromRanks(schedule), profile, options);
}

}  // namespace dcpsched

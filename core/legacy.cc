#include "core/legacy.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/group_layout.h"
#include "core/runtime_groups.h"
#include "core/schedule_loop.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

// Upstream's balance tolerance: a step stops early once the ranks' work
// differs by at most this fraction of the largest.
constexpr double kBalanceDelta = 0.05;
// A bucket closes when its work would pass this multiple of the target.
constexpr double kBucketSlack = 1.1;

// A run of samples of similar total work, consumed from the front.
struct Bucket {
  std::vector<Sample> samples;
  std::size_t head = 0;

  bool empty() const { return head == samples.size(); }
  const Sample& front() const { return samples[head]; }
};

class LegacyStepBuilder {
 public:
  LegacyStepBuilder(const std::vector<Sample>& samples,
                    const DynamicCpOptions& options)
      : samples_(samples),
        options_(options),
        layout_(options.total_gpus),
        groups_of_size_(static_cast<std::size_t>(std::bit_width(
                            static_cast<std::uint64_t>(options.total_gpus))),
                        0) {}

  absl::StatusOr<CompactStep> Build() && {
    MakeBuckets();
    PlaceUntilBalanced();
    while (layout_.free_ranks() > 0) {
      if (absl::Status status = WidenFirstSmallestGroup(); !status.ok()) {
        return status;
      }
    }
    return CompactStep{layout_.ToCompactMicrobatch(), Leftovers()};
  }

 private:
  std::int64_t MinCp(std::int64_t len) const {
    return MinCpSize(len, options_.max_seq_len_per_rank, options_.min_cp_size);
  }

  double MinCpWork(std::int64_t len) const { return Work(len, MinCp(len)); }

  static std::size_t SizeIndex(std::int64_t power_of_two) {
    return static_cast<std::size_t>(
        std::countr_zero(static_cast<std::uint64_t>(power_of_two)));
  }

  // Cuts the samples, in order, into about one bucket per distinct minimum
  // CP size, each holding about an equal share of the total work.
  void MakeBuckets() {
    std::uint64_t cp_sizes_seen = 0;
    double total = 0.0;
    for (const Sample& sample : samples_) {
      cp_sizes_seen |= std::uint64_t{1} << SizeIndex(MinCp(sample.len));
      total += MinCpWork(sample.len);
    }
    const std::int64_t distinct = std::popcount(cp_sizes_seen);
    const double target = total / static_cast<double>(distinct);
    const auto count = static_cast<std::int64_t>(samples_.size());
    Bucket current;
    double current_work = 0.0;
    std::int64_t closed = 0;
    for (std::int64_t i = 0; i < count; ++i) {
      const Sample& sample = samples_[static_cast<std::size_t>(i)];
      const double work = MinCpWork(sample.len);
      if (!current.samples.empty() &&
          (current_work + work > target * kBucketSlack ||
           count - i <= distinct - 2 * closed)) {
        buckets_.push_back(std::move(current));
        current = Bucket{};
        current_work = 0.0;
        ++closed;
      }
      current.samples.push_back(sample);
      current_work += work;
    }
    if (!current.samples.empty()) buckets_.push_back(std::move(current));
  }

  // The first bucket (from the front) whose head sample can go somewhere:
  // a group of its size exists, or enough ranks are free.
  std::optional<std::size_t> NextBucket() const {
    for (std::size_t b = first_bucket_; b < buckets_.size(); ++b) {
      if (buckets_[b].empty()) continue;
      const std::int64_t cp_size = MinCp(buckets_[b].front().len);
      if (groups_of_size_[SizeIndex(cp_size)] > 0 ||
          layout_.free_ranks() >= cp_size) {
        return b;
      }
    }
    return std::nullopt;
  }

  // Among groups of `cp_size` with token room for `sample`, the least loaded
  // (oldest on ties).
  std::optional<std::size_t> LeastLoadedGroup(const Sample& sample,
                                              std::int64_t cp_size) const {
    const double budget = static_cast<double>(options_.max_seq_len_per_rank);
    const double tokens = TokensPerRank(sample.len, cp_size);
    std::optional<std::size_t> best;
    const std::vector<CpGroup>& groups = layout_.groups();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].size != cp_size ||
          groups[g].packed_tokens + tokens > budget) {
        continue;
      }
      if (!best || groups[g].work < groups[*best].work) best = g;
    }
    return best;
  }

  void PlaceUntilBalanced() {
    std::optional<std::int64_t> first_cp_size;
    bool check_balance = false;
    while (const std::optional<std::size_t> bucket = NextBucket()) {
      const Sample sample = buckets_[*bucket].front();
      const std::int64_t cp_size = MinCp(sample.len);
      const std::optional<std::size_t> group = LeastLoadedGroup(sample, cp_size);
      // A new group's load is 0 (free ranks carry no work), below any group's.
      if (layout_.free_ranks() >= cp_size) {
        const double best_load =
            group ? layout_.groups()[*group].work : kNoGroupLoad;
        if (0.0 < best_load) {
          layout_.OpenGroup(sample, cp_size);
          ++groups_of_size_[SizeIndex(cp_size)];
        } else {
          layout_.AddToGroup(*group, sample);
        }
      } else if (group) {
        layout_.AddToGroup(*group, sample);
      } else {
        return;
      }
      ++buckets_[*bucket].head;
      while (first_bucket_ < buckets_.size() && buckets_[first_bucket_].empty()) {
        ++first_bucket_;
      }
      if (!first_cp_size) first_cp_size = cp_size;
      if (cp_size < *first_cp_size) check_balance = true;
      if (check_balance && first_bucket_ < buckets_.size() && Balanced()) {
        return;
      }
    }
  }

  // max(work) - min(work) <= delta * max(work) over all G ranks.
  bool Balanced() const {
    double most = 0.0;
    double least = layout_.free_ranks() > 0 ? 0.0 : kNoGroupLoad;
    for (const CpGroup& group : layout_.groups()) {
      most = std::max(most, group.work);
      least = std::min(least, group.work);
    }
    return most - least <= kBalanceDelta * most;
  }

  // Upstream's fill_empty_gpus: doubles (up to G) the first group of the
  // smallest size, giving each member the work of its first sample only.
  absl::Status WidenFirstSmallestGroup() {
    const std::vector<CpGroup>& groups = layout_.groups();
    if (groups.empty()) {
      return absl::FailedPreconditionError(
          "legacy fill step: there should be at least one group existing, "
          "cannot redistribute; increase max_seq_len_per_rank");
    }
    std::size_t first_smallest = 0;
    for (std::size_t g = 1; g < groups.size(); ++g) {
      if (groups[g].size < groups[first_smallest].size) first_smallest = g;
    }
    const CpGroup& group = groups[first_smallest];
    const std::int64_t widened = std::min(2 * group.size, options_.total_gpus);
    const std::int64_t growth = widened - group.size;
    const std::int64_t last_moved_rank = layout_.covered_ranks() - 1 + growth;
    if (last_moved_rank >= options_.total_gpus) {
      return absl::FailedPreconditionError(absl::StrCat(
          "legacy fill step: widening the CP group on ranks ", group.first_rank,
          "-", group.first_rank + group.size - 1, " from ", group.size, " to ",
          widened, " ranks needs rank ", last_moved_rank,
          ", past the last rank of total_gpus=", options_.total_gpus,
          " (upstream fails here with IndexError); use a power-of-two "
          "total_gpus or the packing-aware scheduler"));
    }
    layout_.WidenGroup(first_smallest, widened,
                       Work(group.lens.front(), widened));
    return absl::OkStatus();
  }

  std::vector<Sample> Leftovers() const {
    std::vector<Sample> leftovers;
    for (std::size_t b = first_bucket_; b < buckets_.size(); ++b) {
      const Bucket& bucket = buckets_[b];
      leftovers.insert(leftovers.end(),
                       bucket.samples.begin() +
                           static_cast<std::ptrdiff_t>(bucket.head),
                       bucket.samples.end());
    }
    return leftovers;
  }

  static constexpr double kNoGroupLoad = std::numeric_limits<double>::infinity();

  const std::vector<Sample>& samples_;
  const DynamicCpOptions& options_;
  GroupLayout layout_;
  // Number of groups of size 2^k.
  std::vector<std::int64_t> groups_of_size_;
  std::vector<Bucket> buckets_;
  // Buckets before this one are used up and dropped, as upstream pops them.
  std::size_t first_bucket_ = 0;
};

}  // namespace

absl::StatusOr<CompactSchedule> ScheduleLegacyAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options);
      !status.ok()) {
    return status;
  }
  if (options.max_num_seqs.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_num_seqs is ", *options.max_num_seqs,
        "; the legacy scheduler takes no cap on sequences per rank (upstream's "
        "cap is the packing-aware scheduler's): leave it unset, or schedule "
        "with packing_aware"));
  }
  return ScheduleBySteps(samples, options, "legacy",
                         [&options](const std::vector<Sample>& remaining) {
                           return LegacyStepBuilder(remaining, options).Build();
                         });
}

absl::StatusOr<CompactSchedule> ScheduleLegacyCompact(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  absl::StatusOr<CompactSchedule> schedule = ScheduleLegacyAsUpstream(samples, options);
  if (!schedule.ok()) return schedule;
  if (absl::Status status = CheckSchedulerOutputRunnable(*schedule, options, "legacy");
      !status.ok()) {
    return status;
  }
  return schedule;
}

absl::StatusOr<Schedule> ScheduleLegacy(absl::Span<const Sample> samples,
                                        const DynamicCpOptions& options) {
  absl::StatusOr<CompactSchedule> compact = ScheduleLegacyCompact(samples, options);
  if (!compact.ok()) return compact.status();
  return ExpandSchedule(*compact);
}

}  // namespace dcpsched

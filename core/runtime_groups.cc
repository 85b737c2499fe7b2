#include "core/runtime_groups.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/compact_schedule.h"

namespace dcpsched {
namespace {

// 2^floor(log2 G): the runtime creates the powers of two below it.
std::int64_t LargestPowerOfTwoAtMost(std::int64_t total_gpus) {
  return static_cast<std::int64_t>(
      std::bit_floor(static_cast<std::uint64_t>(total_gpus)));
}

std::string MinCpClause(const DynamicCpOptions& options) {
  if (options.min_cp_size <= 1) return "";
  return absl::StrCat(" and min_cp_size=", options.min_cp_size);
}

}  // namespace

bool RuntimeHasGroupSize(std::int64_t size, const DynamicCpOptions& options) {
  if (size == options.total_gpus) return true;
  const bool power_of_two = std::has_single_bit(static_cast<std::uint64_t>(size));
  return size > 0 && power_of_two && size < LargestPowerOfTwoAtMost(options.total_gpus) &&
         size >= options.min_cp_size;
}

std::optional<RankBlock> RuntimeGroupOf(std::int64_t rank, std::int64_t cp_size,
                                        const DynamicCpOptions& options) {
  if (rank < 0 || rank >= options.total_gpus) return std::nullopt;
  if (cp_size == options.total_gpus) return RankBlock{0, options.total_gpus};
  if (!RuntimeHasGroupSize(cp_size, options)) return std::nullopt;
  const std::int64_t first = rank / cp_size * cp_size;
  const std::int64_t end = std::min(first + cp_size, options.total_gpus);
  return RankBlock{first, end - first};
}

std::string RuntimeGroupSizes(const DynamicCpOptions& options) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t size = 1; size < LargestPowerOfTwoAtMost(options.total_gpus);
       size *= 2) {
    if (size >= options.min_cp_size) sizes.push_back(size);
  }
  const std::string all = absl::StrCat(options.total_gpus, " (all ranks)");
  if (sizes.empty()) return absl::StrCat("only ", all);
  return absl::StrCat(absl::StrJoin(sizes, ", "), " and ", all);
}

std::string UncreatedGroupMessage(const std::string& where, SampleId first_id,
                                  const std::string& held_by, std::int64_t cp_size,
                                  const DynamicCpOptions& options) {
  return absl::StrCat(
      where, " runs its first sample ", first_id, " on a CP group of size ",
      cp_size, " (", held_by, "), a size Megatron-LM's runtime does not create at total_gpus=",
      options.total_gpus, MinCpClause(options), ": it creates ",
      RuntimeGroupSizes(options), ", so the group lookup fails (KeyError)");
}

std::string PastTheLastRankMessage(const std::string& where,
                                   const DynamicCpOptions& options) {
  return absl::StrCat(where, " is past the last rank of total_gpus=", options.total_gpus,
                      ": the runtime has no CP group for it");
}

std::string MisplacedSampleMessage(const std::string& where, SampleId first_id,
                                   std::int64_t cp_size, const RankBlock& group,
                                   SampleId id, const std::string& held_by) {
  return absl::StrCat(
      where, " gets the runtime's CP group of size ", cp_size, " (",
      RankRange(group.first_rank, group.size), ", from its first sample ", first_id,
      "), but sample ", id, " is held by ", held_by,
      ", so the rank would split it over ranks that do not hold it");
}

absl::Status CheckSchedulerOutputRunnable(const CompactSchedule& schedule,
                                          const DynamicCpOptions& options,
                                          const char* scheduler) {
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    for (const CpGroupIds& group : schedule.microbatches[m].groups) {
      if (group.ids.empty()) continue;
      const std::string where = absl::StrCat(
          "microbatch ", m, " ", RankRange(group.first_rank, group.size),
          group.size == 1 ? "" : ": each");
      const std::string held_by = RankRange(group.first_rank, group.size);
      const std::optional<RankBlock> runtime_group =
          RuntimeGroupOf(group.first_rank, group.size, options);
      std::string why;
      if (!runtime_group.has_value()) {
        why = UncreatedGroupMessage(where, group.ids.front(), held_by, group.size,
                                    options);
      } else if (*runtime_group != RankBlock{group.first_rank, group.size}) {
        why = MisplacedSampleMessage(where, group.ids.front(), group.size,
                                     *runtime_group, group.ids.front(), held_by);
      } else {
        continue;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "upstream returns a schedule its runtime cannot run: invariant 11 "
          "(runtime groups): ",
          why, ". Upstream's ", scheduler,
          " scheduler returns this schedule and Megatron-LM fails on it; use a "
          "power-of-two total_gpus, or a max_seq_len_per_rank large enough "
          "that every sample fits a CP group the runtime creates"));
    }
  }
  return absl::OkStatus();
}

}  // namespace dcpsched

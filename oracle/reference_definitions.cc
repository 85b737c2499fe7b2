#include "oracle/reference_definitions.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {

bool IsPowerOfTwo(std::int64_t x) { return x >= 1 && (x & (x - 1)) == 0; }

std::int64_t CpMin(std::int64_t len, std::int64_t mslpr,
                   std::int64_t min_cp_size) {
  std::int64_t c = 1;
  while (c * mslpr < len) c *= 2;
  return std::max(min_cp_size, c);
}

double Work(std::int64_t len, std::int64_t cp_size) {
  return static_cast<double>(len * len) / static_cast<double>(cp_size);
}

double TokensPerRank(std::int64_t len, std::int64_t cp_size) {
  return static_cast<double>(len) / static_cast<double>(cp_size);
}

double WorkCap(std::int64_t tallest, std::int64_t mslpr) {
  const double factor = 1.0 + kWorkCapDelta;
  return static_cast<double>(tallest) * static_cast<double>(mslpr) * factor;
}

absl::Status ValidateVppGroup(const std::optional<std::int64_t>& vpp_group) {
  if (vpp_group.has_value() && *vpp_group < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("vpp_group must be absent or >= 1, got ", *vpp_group));
  }
  return absl::OkStatus();
}

absl::Status ValidateMaxNumSeqs(const std::optional<std::int64_t>& max_num_seqs) {
  if (max_num_seqs.has_value() && *max_num_seqs < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_num_seqs must be absent or >= 1, got ", *max_num_seqs));
  }
  return absl::OkStatus();
}

absl::Status ValidateSeqLenPerRank(std::int64_t mslpr) {
  if (mslpr < 1 || mslpr > kMaxSeqLenPerRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_seq_len_per_rank must be in [1, 2^31-1], got ", mslpr));
  }
  return absl::OkStatus();
}

absl::Status ValidateSampleLen(std::int64_t len, absl::string_view what) {
  if (len < 1 || len > kMaxSampleLen) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has length ", len, "; lengths must be in [1, 2^26]"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDynamicCpOptions(const DynamicCpOptions& options) {
  const std::int64_t gpus = options.total_gpus;
  if (gpus < 1 || gpus > kMaxTotalGpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("total_gpus (G) must be in [1, 65536], got ", gpus));
  }
  absl::Status status = ValidateSeqLenPerRank(options.max_seq_len_per_rank);
  if (!status.ok()) return status;
  const std::int64_t min_cp = options.min_cp_size;
  if (!IsPowerOfTwo(min_cp) || min_cp > gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min_cp_size must be a power of two in [1, G=", gpus, "], got ",
        min_cp));
  }
  status = ValidateVppGroup(options.vpp_group);
  if (!status.ok()) return status;
  return ValidateMaxNumSeqs(options.max_num_seqs);
}

absl::Status ValidateUniqueIds(absl::Span<const Sample> samples) {
  std::vector<SampleId> ids;
  ids.reserve(samples.size());
  for (const Sample& sample : samples) ids.push_back(sample.id);
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 1; i < ids.size(); ++i) {
    if (ids[i] == ids[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("sample id ", ids[i], " appears more than once"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateDynamicCpProblem(absl::Span<const Sample> samples,
                                      const DynamicCpOptions& options) {
  absl::Status status = ValidateDynamicCpOptions(options);
  if (!status.ok()) return status;
  for (const Sample& sample : samples) {
    status = ValidateSampleLen(sample.len, absl::StrCat("sample ", sample.id));
    if (!status.ok()) return status;
    const std::int64_t needed = CpMin(
        sample.len, options.max_seq_len_per_rank, options.min_cp_size);
    if (needed > options.total_gpus) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample ", sample.id, ": sequence length ", sample.len,
          " requires CP size ", needed, ", but only ", options.total_gpus,
          " DPxCP ranks are available"));
    }
  }
  return ValidateUniqueIds(samples);
}

std::vector<std::int64_t> RuntimeCreatedSizes(std::int64_t total_gpus,
                                              std::int64_t min_cp_size) {
  std::int64_t log2_total = 0;  // int(log2(G)) for G >= 1
  while ((std::int64_t{2} << log2_total) <= total_gpus) ++log2_total;
  std::vector<std::int64_t> sizes;
  for (std::int64_t i = 0; i < log2_total; ++i) {
    const std::int64_t size = std::int64_t{1} << i;
    if (size >= min_cp_size) sizes.push_back(size);
  }
  return sizes;
}

std::optional<std::pair<std::int64_t, std::int64_t>> RuntimeGroupBounds(
    std::int64_t rank, std::int64_t cp_size, std::int64_t total_gpus,
    std::int64_t min_cp_size) {
  if (rank < 0 || rank >= total_gpus) return std::nullopt;  // past G: no group at all
  if (cp_size == total_gpus) return std::make_pair(std::int64_t{0}, total_gpus);
  const std::vector<std::int64_t> created = RuntimeCreatedSizes(total_gpus, min_cp_size);
  if (std::find(created.begin(), created.end(), cp_size) == created.end()) {
    return std::nullopt;
  }
  // The block ranks[i : i + cp_size] of upstream's loop over i = 0, cp_size,
  // ... that holds `rank`: i is `rank` less its remainder.
  const std::int64_t first = rank - rank % cp_size;
  return std::make_pair(first, std::min(first + cp_size, total_gpus));
}

std::optional<std::vector<std::int64_t>> RuntimeGroupRanks(std::int64_t rank,
                                                           std::int64_t cp_size,
                                                           std::int64_t total_gpus,
                                                           std::int64_t min_cp_size) {
  const std::optional<std::pair<std::int64_t, std::int64_t>> bounds =
      RuntimeGroupBounds(rank, cp_size, total_gpus, min_cp_size);
  if (!bounds.has_value()) return std::nullopt;
  std::vector<std::int64_t> ranks;
  for (std::int64_t r = bounds->first; r < bounds->second; ++r) ranks.push_back(r);
  return ranks;
}

}  // namespace dcpsched::oracle

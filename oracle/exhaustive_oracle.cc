#include "oracle/exhaustive_oracle.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "oracle/reference_definitions.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {
namespace {

absl::Status ValidateInstance(absl::Span<const Sample> samples,
                              const DynamicCpOptions& options) {
  const std::int64_t gpus = options.total_gpus;
  if (gpus < 1 || gpus > kExhaustiveMaxGpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "exhaustive oracle: G must be in [1, ", kExhaustiveMaxGpus, "], got ",
        gpus));
  }
  if (static_cast<std::int64_t>(samples.size()) > kExhaustiveMaxSamples) {
    return absl::InvalidArgumentError(absl::StrCat(
        "exhaustive oracle: at most ", kExhaustiveMaxSamples,
        " samples, got ", samples.size()));
  }
  const std::int64_t mslpr = options.max_seq_len_per_rank;
  if (mslpr < 1 || mslpr > kMaxSeqLenPerRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_seq_len_per_rank must be in [1, 2^31-1], got ", mslpr));
  }
  if (!IsPowerOfTwo(options.min_cp_size) || options.min_cp_size > gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min_cp_size must be a power of two in [1, G], got ",
        options.min_cp_size));
  }
  if (options.max_num_seqs.has_value() && *options.max_num_seqs < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_num_seqs must be absent or >= 1, got ", *options.max_num_seqs));
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& sample = samples[i];
    if (sample.len < 1 || sample.len > kMaxSampleLen) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample ", sample.id, " has length ", sample.len,
          "; lengths must be in [1, 2^26]"));
    }
    const std::int64_t needed = CpMin(sample.len, mslpr, options.min_cp_size);
    if (needed > gpus) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample ", sample.id, ": sequence length ", sample.len,
          " requires CP size ", needed, ", but only ", gpus,
          " DPxCP ranks are available"));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (samples[j].id == sample.id) {
        return absl::InvalidArgumentError(
            absl::StrCat("sample id ", sample.id, " appears more than once"));
      }
    }
  }
  return absl::OkStatus();
}

// The CP sizes allowed for a sample: powers of two and G itself, from
// cp_min(len) to G.
std::vector<std::int64_t> AllowedCpSizes(std::int64_t len,
                                         const DynamicCpOptions& options) {
  const std::int64_t gpus = options.total_gpus;
  const std::int64_t smallest =
      CpMin(len, options.max_seq_len_per_rank, options.min_cp_size);
  std::vector<std::int64_t> sizes;
  for (std::int64_t c = 1; c <= gpus; ++c) {
    if (c >= smallest && (IsPowerOfTwo(c) || c == gpus)) sizes.push_back(c);
  }
  return sizes;
}

// True if the runtime has the run [first_rank, first_rank + cp_size) as one
// of its groups: all G ranks, or a created size's aligned block.
bool IsRuntimeBlock(std::int64_t first_rank, std::int64_t cp_size,
                    const DynamicCpOptions& options) {
  if (cp_size == options.total_gpus) return first_rank == 0;
  const std::vector<std::int64_t> created =
      RuntimeCreatedSizes(options.total_gpus, options.min_cp_size);
  return std::find(created.begin(), created.end(), cp_size) != created.end() &&
         first_rank % cp_size == 0;
}

// Every (first_rank, cp_size) a sample may take, ignoring the other samples.
std::vector<SamplePlacement> PlacementsOf(const Sample& sample,
                                          const DynamicCpOptions& options,
                                          PlacementRule rule) {
  std::vector<SamplePlacement> placements;
  for (const std::int64_t c : AllowedCpSizes(sample.len, options)) {
    for (std::int64_t first = 0; first + c <= options.total_gpus; ++first) {
      if (rule == PlacementRule::kRuntimeGroups && !IsRuntimeBlock(first, c, options)) {
        continue;
      }
      placements.push_back({sample, first, c});
    }
  }
  return placements;
}

// Under kRuntimeGroups: no two samples on runs that share a rank but differ.
bool RunsNestNowhere(const std::vector<SamplePlacement>& placement) {
  for (std::size_t i = 0; i < placement.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const SamplePlacement& a = placement[i];
      const SamplePlacement& b = placement[j];
      const bool share = a.first_rank < b.first_rank + b.cp_size &&
                         b.first_rank < a.first_rank + a.cp_size;
      if (share && (a.first_rank != b.first_rank || a.cp_size != b.cp_size)) return false;
    }
  }
  return true;
}

// Scaled max rank work of a full placement, or nullopt if some rank is
// empty, over its token budget or, under max_num_seqs, holds more samples.
std::optional<std::int64_t> ScaledMaxWorkIfValid(
    const std::vector<SamplePlacement>& placement,
    const DynamicCpOptions& options) {
  const auto gpus = static_cast<std::size_t>(options.total_gpus);
  std::vector<std::int64_t> scaled_tokens(gpus, 0);
  std::vector<std::int64_t> scaled_work(gpus, 0);
  std::vector<std::int64_t> samples_held(gpus, 0);
  for (const SamplePlacement& p : placement) {
    const std::int64_t len = p.sample.len;
    const std::int64_t share = kWorkScale / p.cp_size;  // exact: c in 1..4
    for (std::int64_t r = p.first_rank; r < p.first_rank + p.cp_size; ++r) {
      const auto rank = static_cast<std::size_t>(r);
      scaled_tokens[rank] += len * share;
      scaled_work[rank] += len * len * share;
      ++samples_held[rank];
    }
  }
  const std::int64_t scaled_budget = options.max_seq_len_per_rank * kWorkScale;
  const std::int64_t most_samples =
      options.max_num_seqs.value_or(std::numeric_limits<std::int64_t>::max());
  std::int64_t max_work = 0;
  for (std::size_t rank = 0; rank < gpus; ++rank) {
    if (samples_held[rank] == 0 || samples_held[rank] > most_samples ||
        scaled_tokens[rank] > scaled_budget) {
      return std::nullopt;
    }
    max_work = std::max(max_work, scaled_work[rank]);
  }
  return max_work;
}

Microbatch ToMicrobatch(const std::vector<SamplePlacement>& placement,
                        std::int64_t gpus) {
  Microbatch microbatch;
  microbatch.rank_ids.assign(static_cast<std::size_t>(gpus), {});
  for (const SamplePlacement& p : placement) {
    for (std::int64_t r = p.first_rank; r < p.first_rank + p.cp_size; ++r) {
      microbatch.rank_ids[static_cast<std::size_t>(r)].push_back(p.sample.id);
    }
  }
  return microbatch;
}

// Advances the odometer `digits` (last digit fastest) over `choices`; false
// when it wraps around, i.e. every combination has been seen.
bool NextCombination(const std::vector<std::vector<SamplePlacement>>& choices,
                     std::vector<std::size_t>& digits) {
  for (std::size_t i = digits.size(); i-- > 0;) {
    if (++digits[i] < choices[i].size()) return true;
    digits[i] = 0;
  }
  return false;
}

}  // namespace

absl::StatusOr<ExhaustiveOptimum> ExhaustiveBestPlacement(
    absl::Span<const Sample> samples, const DynamicCpOptions& options,
    PlacementRule rule) {
  absl::Status status = ValidateInstance(samples, options);
  if (!status.ok()) return status;
  if (samples.empty()) {
    return absl::NotFoundError(
        "exhaustive oracle: no samples, so every placement leaves ranks empty");
  }
  std::vector<std::vector<SamplePlacement>> choices;
  for (const Sample& sample : samples) {
    choices.push_back(PlacementsOf(sample, options, rule));
    // Never empty after validation (c = G at rank 0 always qualifies);
    // checked anyway so the odometer below never indexes an empty list.
    if (choices.back().empty()) {
      return absl::NotFoundError(absl::StrCat(
          "exhaustive oracle: sample ", sample.id, " has no placement"));
    }
  }
  std::optional<ExhaustiveOptimum> best;
  std::int64_t enumerated = 0;
  std::vector<std::size_t> digits(samples.size(), 0);
  std::vector<SamplePlacement> placement(samples.size());
  do {
    for (std::size_t i = 0; i < samples.size(); ++i) {
      placement[i] = choices[i][digits[i]];
    }
    if (rule == PlacementRule::kRuntimeGroups && !RunsNestNowhere(placement)) continue;
    const std::optional<std::int64_t> scaled =
        ScaledMaxWorkIfValid(placement, options);
    if (!scaled.has_value()) continue;
    ++enumerated;
    if (best.has_value() && *scaled >= best->scaled_max_work) continue;
    best = ExhaustiveOptimum{};
    best->scaled_max_work = *scaled;
    best->placement = placement;
  } while (NextCombination(choices, digits));
  if (!best.has_value()) {
    return absl::NotFoundError(
        "exhaustive oracle: no placement puts every sample within the token "
        "budget (and the sample cap) with no rank empty");
  }
  best->max_work = static_cast<double>(best->scaled_max_work) /
                   static_cast<double>(kWorkScale);
  best->microbatch = ToMicrobatch(best->placement, options.total_gpus);
  best->placements_enumerated = enumerated;
  return *std::move(best);
}

absl::StatusOr<std::int64_t> ScaledMaxRankWork(const Microbatch& microbatch,
                                               absl::Span<const Sample> samples) {
  const std::size_t width = microbatch.rank_ids.size();
  if (width > static_cast<std::size_t>(kExhaustiveMaxGpus)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScaledMaxRankWork: at most ", kExhaustiveMaxGpus, " ranks, got ",
        width));
  }
  std::int64_t max_work = 0;
  for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
    std::int64_t rank_work = 0;
    for (const SampleId id : ids) {
      const auto sample =
          std::find_if(samples.begin(), samples.end(),
                       [id](const Sample& s) { return s.id == id; });
      if (sample == samples.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("ScaledMaxRankWork: unknown sample id ", id));
      }
      if (sample->len < 1 || sample->len > kMaxSampleLen) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ScaledMaxRankWork: sample ", id, " has length ", sample->len));
      }
      std::int64_t cp_size = 0;
      for (const std::vector<SampleId>& other : microbatch.rank_ids) {
        if (std::find(other.begin(), other.end(), id) != other.end()) ++cp_size;
      }
      // 1 <= cp_size <= width <= 4, so it divides kWorkScale; the term is
      // below 2^56.
      const std::int64_t term =
          sample->len * sample->len * (kWorkScale / cp_size);
      if (rank_work > std::numeric_limits<std::int64_t>::max() - term) {
        return absl::InvalidArgumentError(
            "ScaledMaxRankWork: rank work overflows int64");
      }
      rank_work += term;
    }
    max_work = std::max(max_work, rank_work);
  }
  return max_work;
}

}  // namespace dcpsched::oracle

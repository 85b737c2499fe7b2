#include "oracle/exhaustive_time_oracle.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "oracle/reference_definitions.h"
#include "oracle/reference_gpu_time.h"

namespace dcpsched::oracle {
namespace {

constexpr double kNone = std::numeric_limits<double>::infinity();

// A run of ranks [first, first + size).
struct Run {
  std::int64_t first = 0;
  std::int64_t size = 0;

  bool Overlaps(const Run& other) const {
    return first < other.first + other.size && other.first < first + size;
  }
  friend bool operator==(const Run&, const Run&) = default;
};

// Every run the runtime has that a sample of `len` tokens may use.
std::vector<Run> RunsOf(std::int64_t len, const DynamicCpOptions& options) {
  const std::int64_t gpus = options.total_gpus;
  const std::int64_t smallest = CpMin(len, options.max_seq_len_per_rank, options.min_cp_size);
  std::vector<Run> runs;
  for (const std::int64_t c : RuntimeCreatedSizes(gpus, options.min_cp_size)) {
    if (c < smallest) continue;
    for (std::int64_t first = 0; first + c <= gpus; first += c) runs.push_back({first, c});
  }
  if (gpus >= smallest) runs.push_back({0, gpus});
  return runs;
}

// Every runnable placement of the samples `members` (input order) as one
// microbatch, by trying every combination of their runs.
class PlacementSearch {
 public:
  PlacementSearch(absl::Span<const Sample> samples, absl::Span<const std::size_t> members,
                  const DynamicCpOptions& options)
      : samples_(samples), members_(members), options_(options),
        tokens_(static_cast<std::size_t>(options.total_gpus), 0.0),
        counts_(static_cast<std::size_t>(options.total_gpus), 0) {
    for (const std::size_t i : members_) runs_.push_back(RunsOf(samples_[i].len, options));
  }

  std::vector<Microbatch> All() {
    Place(0);
    return std::move(found_);
  }

 private:
  void Place(std::size_t depth) {
    if (depth == members_.size()) {
      Record();
      return;
    }
    const std::int64_t len = samples_[members_[depth]].len;
    for (const Run& run : runs_[depth]) {
      bool nests = true;
      for (std::size_t other = 0; other < depth; ++other) {
        if (chosen_[other].Overlaps(run) && !(chosen_[other] == run)) nests = false;
      }
      if (!nests || !Fits(run, len)) continue;
      const std::vector<double> saved = tokens_;
      for (std::int64_t r = run.first; r < run.first + run.size; ++r) {
        tokens_[static_cast<std::size_t>(r)] += TokensPerRank(len, run.size);
        ++counts_[static_cast<std::size_t>(r)];
      }
      chosen_.push_back(run);
      Place(depth + 1);
      chosen_.pop_back();
      tokens_ = saved;
      for (std::int64_t r = run.first; r < run.first + run.size; ++r) {
        --counts_[static_cast<std::size_t>(r)];
      }
    }
  }

  // Whether every rank of `run` can take a sample of `len` tokens more.
  bool Fits(const Run& run, std::int64_t len) const {
    for (std::int64_t r = run.first; r < run.first + run.size; ++r) {
      const auto rank = static_cast<std::size_t>(r);
      if (tokens_[rank] + TokensPerRank(len, run.size) >
          static_cast<double>(options_.max_seq_len_per_rank)) {
        return false;
      }
      if (options_.max_num_seqs.has_value() && counts_[rank] + 1 > *options_.max_num_seqs) {
        return false;
      }
    }
    return true;
  }

  // Keeps the chosen runs as a microbatch unless they leave a rank empty.
  void Record() {
    Microbatch microbatch;
    microbatch.rank_ids.resize(static_cast<std::size_t>(options_.total_gpus));
    for (std::size_t k = 0; k < members_.size(); ++k) {
      for (std::int64_t r = chosen_[k].first; r < chosen_[k].first + chosen_[k].size; ++r) {
        microbatch.rank_ids[static_cast<std::size_t>(r)].push_back(samples_[members_[k]].id);
      }
    }
    for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
      if (ids.empty()) return;
    }
    found_.push_back(std::move(microbatch));
  }

  absl::Span<const Sample> samples_;
  absl::Span<const std::size_t> members_;
  const DynamicCpOptions& options_;
  std::vector<std::vector<Run>> runs_;
  std::vector<Run> chosen_;
  std::vector<double> tokens_;
  std::vector<std::int64_t> counts_;
  std::vector<Microbatch> found_;
};

// The fastest of the runnable placements of `members` as one microbatch
// (the first of the least seconds), or nothing when none is runnable.
std::optional<std::pair<double, Microbatch>> FastestMicrobatch(
    absl::Span<const Sample> samples, absl::Span<const std::size_t> members,
    const DynamicCpOptions& options, const ReferenceCostTables& tables,
    std::int64_t& enumerated) {
  double best_seconds = kNone;
  Microbatch best;
  for (Microbatch& microbatch : RunnableMicrobatches(samples, members, options)) {
    ++enumerated;
    const absl::StatusOr<std::vector<double>> seconds =
        ReferenceMicrobatchSeconds(samples, Schedule{{microbatch}}, tables);
    if (!seconds.ok() || seconds->size() != 1) continue;
    if ((*seconds)[0] < best_seconds) {
      best_seconds = (*seconds)[0];
      best = std::move(microbatch);
    }
  }
  if (best_seconds == kNone) return std::nullopt;
  return std::make_pair(best_seconds, std::move(best));
}

}  // namespace

std::vector<Microbatch> RunnableMicrobatches(absl::Span<const Sample> samples,
                                             absl::Span<const std::size_t> members,
                                             const DynamicCpOptions& options) {
  return PlacementSearch(samples, members, options).All();
}

absl::StatusOr<TimeOptimum> ExhaustiveFastestSchedule(absl::Span<const Sample> samples,
                                                      const DynamicCpOptions& options,
                                                      const ReferenceCostTables& tables) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options); !status.ok()) {
    return status;
  }
  const auto n = static_cast<std::int64_t>(samples.size());
  if (n > kTimeOracleMaxSamples || options.total_gpus > kTimeOracleMaxGpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the exhaustive time oracle takes at most ", kTimeOracleMaxSamples, " samples and ",
        kTimeOracleMaxGpus, " ranks; this has ", n, " and ", options.total_gpus));
  }
  TimeOptimum optimum;
  if (n == 0) return optimum;
  const std::size_t subsets = std::size_t{1} << n;
  // The fastest single microbatch of each subset.
  std::vector<double> alone(subsets, kNone);
  std::vector<Microbatch> alone_microbatch(subsets);
  for (std::size_t mask = 1; mask < subsets; ++mask) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (mask >> i & 1) members.push_back(i);
    }
    if (auto best = FastestMicrobatch(samples, members, options, tables,
                                      optimum.placements_enumerated)) {
      alone[mask] = best->first;
      alone_microbatch[mask] = std::move(best->second);
    }
  }
  // split[count][mask]: the least time of `mask` in `count` microbatches,
  // and the subset holding its lowest sample in one such split.
  const auto most = static_cast<std::size_t>(n);
  std::vector<std::vector<double>> split(most + 1, std::vector<double>(subsets, kNone));
  std::vector<std::vector<std::size_t>> first_part(most + 1,
                                                   std::vector<std::size_t>(subsets, 0));
  split[0][0] = 0.0;
  for (std::size_t count = 1; count <= most; ++count) {
    for (std::size_t mask = 1; mask < subsets; ++mask) {
      const std::size_t lowest = mask & (~mask + 1);
      for (std::size_t part = mask; part != 0; part = (part - 1) & mask) {
        if (!(part & lowest) || alone[part] == kNone) continue;
        const double rest = split[count - 1][mask ^ part];
        if (rest == kNone) continue;
        if (alone[part] + rest < split[count][mask]) {
          split[count][mask] = alone[part] + rest;
          first_part[count][mask] = part;
        }
      }
    }
  }
  const std::int64_t vpp =
      options.vpp_group.has_value() && *options.vpp_group > 1 ? *options.vpp_group : 1;
  const std::size_t all = subsets - 1;
  std::size_t best_count = 0;
  for (std::size_t count = 1; count <= most; ++count) {
    if (static_cast<std::int64_t>(count) % vpp != 0 || split[count][all] == kNone) continue;
    if (best_count == 0 || split[count][all] < split[best_count][all]) best_count = count;
  }
  if (best_count == 0) {
    return absl::NotFoundError(absl::StrCat(
        "no runnable schedule of the ", n, " samples has a microbatch count that is a "
        "multiple of vpp_group ", vpp));
  }
  optimum.step_seconds = split[best_count][all];
  for (std::size_t count = best_count, mask = all; count > 0; --count) {
    const std::size_t part = first_part[count][mask];
    optimum.schedule.microbatches.push_back(alone_microbatch[part]);
    mask ^= part;
  }
  return optimum;
}

}  // namespace dcpsched::oracle

#include "core/runtime_step.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/gpu_time.h"
#include "core/pipeline_order.h"

namespace dcpsched {
namespace {

// The most (pipeline rank, chunk, microbatch) triples the model runs: the
// op orders it holds grow with them.
constexpr std::int64_t kMaxStageOps = std::int64_t{1} << 22;

// Ranks [previous run's end, end) share `seconds`.
struct TimeRun {
  std::int64_t end = 0;
  double seconds = 0.0;
};

// A time for every rank of [0, G), as runs in rank order; the last run
// ends at G.
using RankTimes = std::vector<TimeRun>;

// Pointwise max(a, b) of two RankTimes of the same G.
RankTimes PointwiseMax(const RankTimes& a, const RankTimes& b) {
  RankTimes out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0;
  std::size_t j = 0;
  // Both end at G, so they run out together.
  while (i < a.size()) {
    const std::int64_t end = std::min(a[i].end, b[j].end);
    out.push_back({end, std::max(a[i].seconds, b[j].seconds)});
    if (a[i].end == end) ++i;
    if (b[j].end == end) ++j;
  }
  return out;
}

// Reads a RankTimes over consecutive rank ranges, left to right.
class RunCursor {
 public:
  explicit RunCursor(const RankTimes& times) : times_(times) {}

  // The largest time over ranks [first, end); `first` must not be below
  // the previous call's `end`.
  double MaxOver(std::int64_t first, std::int64_t end) {
    while (times_[next_].end <= first) ++next_;
    double most = times_[next_].seconds;
    // The runs tile [0, G) and end <= G, so a run past i exists while run i
    // ends before `end`.
    for (std::size_t i = next_; times_[i].end < end;) {
      ++i;
      most = std::max(most, times_[i].seconds);
    }
    return most;
  }

  // Appends the runs over ranks [first, end) to `out`.
  void CopyOver(std::int64_t first, std::int64_t end, RankTimes& out) {
    while (times_[next_].end <= first) ++next_;
    for (std::size_t i = next_;; ++i) {
      out.push_back({std::min(times_[i].end, end), times_[i].seconds});
      if (times_[i].end >= end) break;
    }
  }

 private:
  const RankTimes& times_;
  std::size_t next_ = 0;
};

// How the ranks of a SyncSet run an op.
enum class SyncMode {
  // All start together, when the last of them can, and end together.
  kTogether,
  // Ranks without samples: each goes on alone, in no time. (Ranks without
  // samples that fill whole EP groups are alone too: every set under
  // expert parallelism is a union of EP groups, so by induction over the
  // ops the ranks of an EP group are always free at the same time and have
  // their inputs at the same time, and starting one of them alone is
  // starting the group together.)
  kAlone,
};

// Ranks [first_rank, end_rank) of one microbatch, which its groups
// [first_group, end_group) overlap, run each op of it as `mode` says.
struct SyncSet {
  std::int64_t first_rank = 0;
  std::int64_t end_rank = 0;
  std::size_t first_group = 0;
  std::size_t end_group = 0;
  SyncMode mode = SyncMode::kTogether;
};

// Without expert parallelism each group is a set: together if it holds
// samples (ring attention), else alone.
std::vector<SyncSet> GroupSets(const TimedMicrobatch& microbatch) {
  std::vector<SyncSet> sets;
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const TimedGroup& group = microbatch.groups[g];
    sets.push_back({group.first_rank, group.first_rank + group.size, g, g + 1,
                    group.holds_samples ? SyncMode::kTogether : SyncMode::kAlone});
  }
  return sets;
}

// With EP groups of E ranks: the smallest sets of ranks that hold every EP
// group and every group with samples they touch. A set ends on a multiple
// of E (EP groups tile [0, G)) that no group with samples straddles; a
// group without samples may be cut there, and the whole EP groups inside
// it go on alone (SyncMode::kAlone says why that is lockstep).
std::vector<SyncSet> ExpertSets(const TimedMicrobatch& microbatch, std::int64_t expert_size) {
  std::vector<SyncSet> sets;
  std::int64_t open_rank = 0;
  std::size_t open_group = 0;
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const TimedGroup& group = microbatch.groups[g];
    const std::int64_t end = group.first_rank + group.size;
    // The first and last EP boundaries within the group's ranks.
    const std::int64_t first_cut =
        (group.first_rank + expert_size - 1) / expert_size * expert_size;
    const std::int64_t last_cut = end / expert_size * expert_size;
    if (group.holds_samples || first_cut >= end) {
      if (end % expert_size != 0) continue;
      sets.push_back({open_rank, end, open_group, g + 1, SyncMode::kTogether});
      open_rank = end;
      open_group = g + 1;
      continue;
    }
    if (first_cut > open_rank) {
      sets.push_back({open_rank, first_cut, open_group, g + 1, SyncMode::kTogether});
    }
    if (last_cut > first_cut) {
      sets.push_back({first_cut, last_cut, g, g + 1, SyncMode::kAlone});
    }
    open_rank = last_cut;
    open_group = last_cut == end ? g + 1 : g;
  }
  return sets;
}

// The microbatch's synchronised sets, in rank order, tiling [0, G).
std::vector<SyncSet> SyncSets(const TimedMicrobatch& microbatch,
                              const std::optional<std::int64_t>& expert_parallel_size) {
  if (!expert_parallel_size.has_value()) return GroupSets(microbatch);
  return ExpertSets(microbatch, *expert_parallel_size);
}

// Per microbatch and group, the forward and backward op times.
struct OpTimes {
  std::vector<std::vector<double>> forward;
  std::vector<std::vector<double>> backward;
};

// d = L * t / V per group, one chunk's share of the pipeline rank's L
// layers (0 for a group without samples); at P = 1 the forward op takes d
// and the backward 0 (they run back to back on the same ranks), else the
// forward d * f and the backward d - d * f.
OpTimes TimeOps(absl::Span<const TimedMicrobatch> microbatches,
                const RuntimeConfig& config) {
  const double layers = static_cast<double>(config.layers_per_stage);
  const double chunks_divisor = static_cast<double>(config.pipeline.virtual_stages);
  OpTimes times;
  for (const TimedMicrobatch& microbatch : microbatches) {
    std::vector<double>& forward = times.forward.emplace_back();
    std::vector<double>& backward = times.backward.emplace_back();
    for (const TimedGroup& group : microbatch.groups) {
      // At V = 1 the quotient is exact.
      const double d = group.holds_samples ? layers * group.seconds / chunks_divisor : 0.0;
      const double f = config.pipeline.stages == 1 ? d : d * config.forward_share;
      forward.push_back(f);
      backward.push_back(d - f);
    }
  }
  return times;
}

// Runs op (microbatch m, forward or backward) on a pipeline rank whose
// ranks are free at `ready` and have the op's input at `input`; returns
// when each rank's op ends.
RankTimes RunOp(const std::vector<SyncSet>& sets, const std::vector<double>& op_seconds,
                const RankTimes& ready, const RankTimes& input) {
  const RankTimes earliest = PointwiseMax(ready, input);
  RunCursor cursor(earliest);
  RankTimes finish;
  finish.reserve(sets.size());
  for (const SyncSet& set : sets) {
    if (set.mode == SyncMode::kAlone) {
      cursor.CopyOver(set.first_rank, set.end_rank, finish);
    } else {
      double seconds = 0.0;
      for (std::size_t g = set.first_group; g < set.end_group; ++g) {
        seconds = std::max(seconds, op_seconds[g]);
      }
      finish.push_back({set.end_rank, cursor.MaxOver(set.first_rank, set.end_rank) + seconds});
    }
  }
  return finish;
}

// The ends of every group of every microbatch, sorted and unique: the
// rank segments on which every microbatch's times are constant.
std::vector<std::int64_t> SegmentEnds(absl::Span<const TimedMicrobatch> microbatches) {
  std::vector<std::int64_t> ends;
  for (const TimedMicrobatch& microbatch : microbatches) {
    for (const TimedGroup& group : microbatch.groups) {
      ends.push_back(group.first_rank + group.size);
    }
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return ends;
}

// For each segment (SegmentEnds), the index of the group of `microbatch`
// that covers it.
std::vector<std::size_t> GroupOfSegment(const TimedMicrobatch& microbatch,
                                        const std::vector<std::int64_t>& segment_ends) {
  std::vector<std::size_t> group_of;
  group_of.reserve(segment_ends.size());
  std::size_t g = 0;
  for (const std::int64_t end : segment_ends) {
    while (microbatch.groups[g].first_rank + microbatch.groups[g].size < end) ++g;
    group_of.push_back(g);
  }
  return group_of;
}

// What the step model needs to know about the microbatches beyond their
// op times: segments, and which group covers each.
struct Segments {
  std::vector<std::int64_t> ends;
  // group_of[m][s]: the group of microbatch m over segment s.
  std::vector<std::vector<std::size_t>> group_of;
};

Segments SegmentMicrobatches(absl::Span<const TimedMicrobatch> microbatches) {
  Segments segments;
  segments.ends = SegmentEnds(microbatches);
  for (const TimedMicrobatch& microbatch : microbatches) {
    segments.group_of.push_back(GroupOfSegment(microbatch, segments.ends));
  }
  return segments;
}

// Each segment's work on every pipeline rank: V times the sum over
// microbatches, in order, of its forward and backward op times. At P = 1 (V
// = 1, backward 0) the chain adds the same terms in the same order, so it
// is never below this bit for bit; at P > 1 it adds them in its own order,
// so the two may differ in the last bits.
std::vector<double> SegmentWork(const Segments& segments, const OpTimes& times,
                                std::int64_t virtual_stages) {
  std::vector<double> work(segments.ends.size(), 0.0);
  for (std::size_t m = 0; m < times.forward.size(); ++m) {
    for (std::size_t s = 0; s < work.size(); ++s) {
      const std::size_t g = segments.group_of[m][s];
      work[s] += times.forward[m][g] + times.backward[m][g];
    }
  }
  // At V = 1 the product is exact.
  for (double& segment_work : work) segment_work *= static_cast<double>(virtual_stages);
  return work;
}

// Expands RankTimes to one time per rank.
std::vector<double> PerRank(const RankTimes& times, std::int64_t total_gpus) {
  std::vector<double> per_rank;
  per_rank.reserve(static_cast<std::size_t>(total_gpus));
  for (const TimeRun& run : times) {
    per_rank.resize(static_cast<std::size_t>(run.end), run.seconds);
  }
  return per_rank;
}

// The bound of docs/runtime_step.md, given each segment's work W: the
// largest p F(0) + W + p B(M - 1) over segments and pipeline ranks p (p =
// P - 1 gives it), and a microbatch's chain of P V forwards and backwards.
double StepBound(const Segments& segments, const OpTimes& times,
                 const std::vector<double>& work, const RuntimeConfig& config) {
  const std::size_t last = times.forward.size() - 1;
  const double hops = static_cast<double>(config.pipeline.stages - 1);
  const double stages_in_chain =
      static_cast<double>(config.pipeline.stages * config.pipeline.virtual_stages);
  double bound = 0.0;
  for (std::size_t s = 0; s < segments.ends.size(); ++s) {
    const double head = hops * times.forward[0][segments.group_of[0][s]];
    const double tail = hops * times.backward[last][segments.group_of[last][s]];
    bound = std::max(bound, head + work[s] + tail);
  }
  for (std::size_t m = 0; m <= last; ++m) {
    for (std::size_t g = 0; g < times.forward[m].size(); ++g) {
      bound = std::max(bound, stages_in_chain * (times.forward[m][g] + times.backward[m][g]));
    }
  }
  return bound;
}

// Microbatch m's groups tile [0, G) with finite times >= 0.
absl::Status CheckTimedMicrobatch(const TimedMicrobatch& microbatch, std::size_t m,
                                  std::int64_t total_gpus) {
  std::int64_t next = 0;
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const TimedGroup& group = microbatch.groups[g];
    if (group.first_rank != next || group.size < 1 || group.size > total_gpus - next) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", m, " group ", g, " has ranks [", group.first_rank, ", ",
          group.first_rank, " + ", group.size, ") but must start at rank ", next,
          " and end by rank ", total_gpus, ": a microbatch's groups tile its ", total_gpus,
          " ranks"));
    }
    if (!std::isfinite(group.seconds) || group.seconds < 0.0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", m, " group ", g, " takes ", group.seconds,
          " seconds; op times must be finite and not negative"));
    }
    next += group.size;
  }
  if (next != total_gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "microbatch ", m, "'s groups cover ranks [0, ", next, ") but the step has ",
        total_gpus, " ranks: a microbatch's groups tile its ranks"));
  }
  return absl::OkStatus();
}

// The legacy loop: a barrier after every microbatch.
RuntimeStep LegacyStep(std::int64_t total_gpus,
                       absl::Span<const TimedMicrobatch> microbatches,
                       const Segments& segments, const OpTimes& times) {
  RuntimeStep step;
  double before_last = 0.0;
  for (std::size_t m = 0; m < microbatches.size(); ++m) {
    double slowest = 0.0;
    for (const double seconds : times.forward[m]) slowest = std::max(slowest, seconds);
    before_last = step.step_seconds;
    step.step_seconds += slowest;
  }
  const std::vector<double> work = SegmentWork(segments, times, 1);
  RankTimes finish;
  const std::size_t last = microbatches.size() - 1;
  for (std::size_t s = 0; s < work.size(); ++s) {
    finish.push_back({segments.ends[s],
                      before_last + times.forward[last][segments.group_of[last][s]]});
    step.busiest_rank_seconds = std::max(step.busiest_rank_seconds, work[s]);
  }
  step.rank_finish_seconds = PerRank(finish, total_gpus);
  step.bound_seconds = step.busiest_rank_seconds;
  step.bubble_seconds = step.step_seconds - step.busiest_rank_seconds;
  return step;
}

// When each op that ran has ended, until the op that needs it as input
// runs: each op's end is the input of exactly one later op (a forward's,
// the next stage's forward or, on the last stage, its own backward; a
// backward's, the previous stage's backward).
class OpEnds {
 public:
  explicit OpEnds(std::int64_t num_microbatches) : microbatches_(num_microbatches) {}

  void Record(bool forward, std::int64_t virtual_stage, std::int64_t microbatch,
              RankTimes ends) {
    ends_[Key(forward, virtual_stage, microbatch)] = std::move(ends);
  }

  // The ends recorded for the op, taken out; nullopt if it has not run.
  std::optional<RankTimes> Take(bool forward, std::int64_t virtual_stage,
                                std::int64_t microbatch) {
    const auto found = ends_.find(Key(forward, virtual_stage, microbatch));
    if (found == ends_.end()) return std::nullopt;
    RankTimes ends = std::move(found->second);
    ends_.erase(found);
    return ends;
  }

 private:
  std::int64_t Key(bool forward, std::int64_t virtual_stage, std::int64_t microbatch) const {
    return (virtual_stage * microbatches_ + microbatch) * 2 + (forward ? 1 : 0);
  }

  std::int64_t microbatches_;
  absl::flat_hash_map<std::int64_t, RankTimes> ends_;
};

// The input of `op` on pipeline rank p: the ends of the op it needs (taken
// out of `ends`), all ranks at 0 when it needs none, or nullopt while that
// op has not run.
std::optional<RankTimes> TakeOpInput(const StageOp& op, std::int64_t p,
                                     const PipelineShape& shape, std::int64_t total_gpus,
                                     OpEnds& ends) {
  const std::int64_t v = op.chunk * shape.stages + p;
  if (op.forward) {
    if (v == 0) return RankTimes{{total_gpus, 0.0}};
    return ends.Take(true, v - 1, op.microbatch);
  }
  if (v + 1 < shape.stages * shape.virtual_stages) return ends.Take(false, v + 1, op.microbatch);
  return ends.Take(true, v, op.microbatch);
}

// The dev runtime: every pipeline rank runs its order, each op once its
// input has ended. The loop ends when no pipeline rank can go on; Megatron-
// LM's orders never deadlock, so by then every op has run (the oracle
// comparison, properties/runtime_step_properties.cc, checks it).
RuntimeStep DevStep(std::int64_t total_gpus, absl::Span<const TimedMicrobatch> microbatches,
                    const Segments& segments, const OpTimes& times,
                    const RuntimeConfig& config) {
  const PipelineShape& shape = config.pipeline;
  const std::int64_t count = static_cast<std::int64_t>(microbatches.size());
  std::vector<std::vector<SyncSet>> sets;
  for (const TimedMicrobatch& microbatch : microbatches) {
    sets.push_back(SyncSets(microbatch, config.expert_parallel_size));
  }
  const RankTimes idle = {{total_gpus, 0.0}};
  OpEnds ends(count);
  std::vector<RankTimes> ready(static_cast<std::size_t>(shape.stages), idle);
  std::vector<std::vector<StageOp>> orders;
  for (std::int64_t p = 0; p < shape.stages; ++p) {
    orders.push_back(PipelineStageOrder(shape, count, p));
  }
  std::vector<std::size_t> next(orders.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::int64_t p = 0; p < shape.stages; ++p) {
      const std::size_t pi = static_cast<std::size_t>(p);
      for (; next[pi] < orders[pi].size(); ++next[pi]) {
        const StageOp& op = orders[pi][next[pi]];
        std::optional<RankTimes> input = TakeOpInput(op, p, shape, total_gpus, ends);
        if (!input.has_value()) break;
        const std::size_t m = static_cast<std::size_t>(op.microbatch);
        ready[pi] = RunOp(sets[m], op.forward ? times.forward[m] : times.backward[m], ready[pi],
                          *input);
        ends.Record(op.forward, op.chunk * shape.stages + p, op.microbatch, ready[pi]);
        progress = true;
      }
    }
  }
  RankTimes finish = idle;
  for (const RankTimes& stage_ends : ready) finish = PointwiseMax(finish, stage_ends);
  RuntimeStep step;
  for (const TimeRun& run : finish) step.step_seconds = std::max(step.step_seconds, run.seconds);
  step.rank_finish_seconds = PerRank(finish, total_gpus);
  const std::vector<double> work = SegmentWork(segments, times, shape.virtual_stages);
  for (const double segment_work : work) {
    step.busiest_rank_seconds = std::max(step.busiest_rank_seconds, segment_work);
  }
  step.bubble_seconds = step.step_seconds - step.busiest_rank_seconds;
  step.bound_seconds = StepBound(segments, times, work, config);
  return step;
}

}  // namespace

const char* RuntimePathName(RuntimePath path) {
  return path == RuntimePath::kDev ? "dev" : "legacy";
}

std::string DescribeRuntime(const RuntimeConfig& config) {
  const PipelineShape& shape = config.pipeline;
  std::string text = absl::StrCat(RuntimePathName(config.path), " runtime, ");
  if (shape.stages == 1) {
    absl::StrAppend(&text, "no pipelining");
  } else if (shape.virtual_stages == 1) {
    absl::StrAppend(&text, "1F1B over P = ", shape.stages, " stages");
  } else {
    absl::StrAppend(&text, "interleaved 1F1B over P = ", shape.stages, " stages x V = ",
                    shape.virtual_stages, " chunks in groups of ",
                    shape.microbatch_group_size == 0 ? shape.stages : shape.microbatch_group_size,
                    " microbatches");
  }
  if (shape.stages > 1) {
    absl::StrAppend(&text, ", forward ", absl::StrFormat("%.4g", config.forward_share),
                    " of a layer");
  }
  absl::StrAppend(&text, ", ", config.layers_per_stage,
                  config.layers_per_stage == 1 ? " layer" : " layers", " per stage");
  if (config.expert_parallel_size.has_value()) {
    absl::StrAppend(&text, ", EP ", *config.expert_parallel_size, " in lockstep");
  }
  return text;
}

absl::Status CheckRuntimeConfig(const RuntimeConfig& config, std::int64_t total_gpus,
                                std::int64_t num_microbatches) {
  if (absl::Status shape = CheckPipelineShape(config.pipeline, num_microbatches); !shape.ok()) {
    return shape;
  }
  const std::int64_t stages = config.pipeline.stages;
  const std::int64_t chunks = config.pipeline.virtual_stages;
  if (stages > kMaxStageOps || chunks > kMaxStageOps / stages ||
      num_microbatches > kMaxStageOps / (stages * chunks)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model would run --pp ", stages, " x --virtual-stages ", chunks, " x ",
        num_microbatches, " microbatches forward and backward on every DPxCP rank; "
        "dcpsched models at most ", kMaxStageOps,
        " (pipeline rank, chunk, microbatch) triples: give fewer stages"));
  }
  if (config.path == RuntimePath::kLegacy && config.pipeline.stages > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the legacy runtime (main's hybrid_context_parallel_forward_backward) runs only "
        "without pipelining, but --pp is ", config.pipeline.stages,
        "; give --runtime dev, or --pp 1"));
  }
  if (config.layers_per_stage < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--layers-per-stage is ", config.layers_per_stage, "; give 1 or more"));
  }
  if (!(config.forward_share > 0.0 && config.forward_share < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--forward-share is ", config.forward_share,
        "; give the forward pass's share of a layer's time, strictly between 0 and 1"));
  }
  if (config.expert_parallel_size.has_value()) {
    const std::int64_t ep = *config.expert_parallel_size;
    if (ep < 1 || total_gpus % ep != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--ep ", ep, " does not divide the ", total_gpus,
          " DPxCP ranks into expert-parallel groups; give a divisor of ", total_gpus));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RuntimeStep> SimulateRuntimeStep(
    std::int64_t total_gpus, absl::Span<const TimedMicrobatch> microbatches,
    const RuntimeConfig& config) {
  if (total_gpus < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the step has ", total_gpus, " DPxCP ranks; it needs 1 or more"));
  }
  const std::int64_t count = static_cast<std::int64_t>(microbatches.size());
  if (absl::Status valid = CheckRuntimeConfig(config, total_gpus, count); !valid.ok()) {
    return valid;
  }
  for (std::size_t m = 0; m < microbatches.size(); ++m) {
    if (absl::Status tiled = CheckTimedMicrobatch(microbatches[m], m, total_gpus); !tiled.ok()) {
      return tiled;
    }
  }
  if (microbatches.empty()) {
    RuntimeStep step;
    step.rank_finish_seconds.assign(static_cast<std::size_t>(total_gpus), 0.0);
    return step;
  }
  const Segments segments = SegmentMicrobatches(microbatches);
  const OpTimes times = TimeOps(microbatches, config);
  if (config.path == RuntimePath::kLegacy) {
    return LegacyStep(total_gpus, microbatches, segments, times);
  }
  return DevStep(total_gpus, microbatches, segments, times, config);
}

absl::StatusOr<RuntimeStep> MeasureRuntimeStep(const CompactSchedule& schedule,
                                               const ScheduleTime& time,
                                               const RuntimeConfig& config) {
  if (time.microbatches.size() != schedule.microbatches.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the times are of ", time.microbatches.size(), " microbatches but the schedule has ",
        schedule.microbatches.size(), "; measure the schedule's own times (MeasureScheduleTime)"));
  }
  if (schedule.microbatches.empty()) {
    // A schedule of no samples: no op runs. G is unknown; E is checked
    // against itself.
    absl::Status valid =
        CheckRuntimeConfig(config, config.expert_parallel_size.value_or(1), 0);
    if (!valid.ok()) return valid;
    return RuntimeStep{};
  }
  std::vector<TimedMicrobatch> microbatches;
  microbatches.reserve(schedule.microbatches.size());
  std::int64_t total_gpus = 0;
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const std::vector<CpGroupIds>& groups = schedule.microbatches[m].groups;
    const std::vector<double>& seconds = time.microbatches[m].group_seconds;
    if (seconds.size() != groups.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the times of microbatch ", m, " are of ", seconds.size(), " groups but it has ",
          groups.size(), "; measure the schedule's own times (MeasureScheduleTime)"));
    }
    TimedMicrobatch& timed = microbatches.emplace_back();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      timed.groups.push_back(
          {groups[g].first_rank, groups[g].size, seconds[g], !groups[g].ids.empty()});
    }
    if (m == 0 && !groups.empty()) total_gpus = groups.back().first_rank + groups.back().size;
  }
  return SimulateRuntimeStep(total_gpus, microbatches, config);
}

}  // namespace dcpsched

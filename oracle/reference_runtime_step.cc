#include "oracle/reference_runtime_step.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/types.h"

namespace dcpsched::oracle {
namespace {

// What one op of the simulation runs: at P = 1 a microbatch's forward and
// backward as one op (kWhole); at P > 1 a forward or a backward on a chunk.
enum class RuntimePass { kWhole, kForward, kBackward };

struct RuntimeOp {
  std::int64_t microbatch = 0;
  std::int64_t chunk = 0;
  RuntimePass pass = RuntimePass::kWhole;
};

// N as used: 0 means P.
std::int64_t EffectiveGroupSize(const ReferenceRuntime& runtime) {
  return runtime.microbatch_group_size == 0 ? runtime.pipeline_stages
                                            : runtime.microbatch_group_size;
}

// What an op order needs of the configuration, and Megatron-LM's refusals
// of the interleaved schedule.
absl::Status CheckOrderArguments(const ReferenceRuntime& runtime, std::int64_t num_microbatches) {
  const std::int64_t p = runtime.pipeline_stages;
  const std::int64_t v = runtime.virtual_stages;
  if (p < 1) return absl::InvalidArgumentError(absl::StrCat("pipeline stages ", p, " < 1"));
  if (v < 1) return absl::InvalidArgumentError(absl::StrCat("virtual stages ", v, " < 1"));
  if (v > 1 && p == 1) {
    return absl::InvalidArgumentError("virtual stages > 1 need pipeline stages > 1");
  }
  if (num_microbatches < 0) {
    return absl::InvalidArgumentError(absl::StrCat("microbatch count ", num_microbatches, " < 0"));
  }
  if (v == 1) return absl::OkStatus();
  const std::int64_t n = EffectiveGroupSize(runtime);
  const std::int64_t m = num_microbatches;
  if (n > m) {
    return absl::InvalidArgumentError(
        absl::StrCat("microbatch group size ", n, " > microbatch count ", m));
  }
  if (n < p) {
    return absl::InvalidArgumentError(
        absl::StrCat("microbatch group size ", n, " < pipeline stages ", p));
  }
  const std::int64_t last = m % n;
  if (last > 0 && last < p) {
    return absl::InvalidArgumentError(absl::StrCat("last microbatch group of ", last,
                                                   " < pipeline stages ", p));
  }
  return absl::OkStatus();
}

// Upstream's get_schedule_table(M, V, N): (microbatch, chunk) pairs, for
// each group of N consecutive microbatches every chunk in turn over the
// group's microbatches.
std::vector<std::pair<std::int64_t, std::int64_t>> InterleavedScheduleTable(
    std::int64_t num_microbatches, std::int64_t virtual_stages, std::int64_t group_size) {
  std::vector<std::pair<std::int64_t, std::int64_t>> table;
  for (std::int64_t first = 0; first < num_microbatches; first += group_size) {
    const std::int64_t end = std::min(first + group_size, num_microbatches);
    for (std::int64_t chunk = 0; chunk < virtual_stages; ++chunk) {
      for (std::int64_t m = first; m < end; ++m) table.emplace_back(m, chunk);
    }
  }
  return table;
}

// Per rank of one microbatch, a label shared exactly by the ranks of its
// synchronised set: consecutive ranks with equal non-empty lists, and with
// E > 0 every EP block, joined transitively. Joining relabels every rank of
// one label with the other: quadratic, and plainly a partition.
std::vector<std::int64_t> SynchronisedSetLabels(const Microbatch& microbatch,
                                                std::int64_t expert_parallel_size) {
  const auto g = static_cast<std::int64_t>(microbatch.rank_ids.size());
  std::vector<std::int64_t> label(static_cast<std::size_t>(g));
  for (std::int64_t r = 0; r < g; ++r) label[static_cast<std::size_t>(r)] = r;
  const auto join = [&label](std::int64_t a, std::int64_t b) {
    const std::int64_t keep = label[static_cast<std::size_t>(a)];
    const std::int64_t drop = label[static_cast<std::size_t>(b)];
    for (std::int64_t& l : label) {
      if (l == drop) l = keep;
    }
  };
  for (std::int64_t r = 1; r < g; ++r) {
    const std::vector<SampleId>& here = microbatch.rank_ids[static_cast<std::size_t>(r)];
    const std::vector<SampleId>& before = microbatch.rank_ids[static_cast<std::size_t>(r - 1)];
    if (!here.empty() && here == before) join(r - 1, r);
  }
  if (expert_parallel_size > 0) {
    for (std::int64_t r = 0; r < g; ++r) {
      join((r / expert_parallel_size) * expert_parallel_size, r);
    }
  }
  return label;
}

// Index of (rank, virtual stage, microbatch, pass) in the table of op ends.
struct EndIndex {
  std::int64_t stages = 0;
  std::int64_t microbatches = 0;
  std::size_t operator()(std::int64_t r, std::int64_t v, std::int64_t m, bool forward) const {
    return static_cast<std::size_t>(((r * stages + v) * microbatches + m) * 2 + (forward ? 1 : 0));
  }
};

ReferenceStep LegacyStep(const std::vector<std::vector<double>>& own) {
  ReferenceStep step;
  const std::size_t m_count = own.size();
  if (m_count == 0) return step;
  const std::size_t g = own[0].size();
  double last_start = 0.0;
  double total = 0.0;
  std::vector<double> sums(g, 0.0);
  for (std::size_t m = 0; m < m_count; ++m) {
    double slowest = 0.0;
    for (std::size_t r = 0; r < g; ++r) {
      slowest = std::max(slowest, own[m][r]);
      sums[r] += own[m][r];
    }
    last_start = total;
    total += slowest;
  }
  step.step_seconds = total;
  for (std::size_t r = 0; r < g; ++r) {
    step.rank_finish_seconds.push_back(last_start + own[m_count - 1][r]);
    step.busiest_rank_seconds = std::max(step.busiest_rank_seconds, sums[r]);
  }
  return step;
}

}  // namespace

absl::StatusOr<std::vector<ReferenceOp>> ReferenceStageOrder(const ReferenceRuntime& runtime,
                                                             std::int64_t num_microbatches,
                                                             std::int64_t pipeline_rank) {
  if (absl::Status status = CheckOrderArguments(runtime, num_microbatches); !status.ok()) {
    return status;
  }
  const std::int64_t p_count = runtime.pipeline_stages;
  const std::int64_t v_count = runtime.virtual_stages;
  const std::int64_t m_count = num_microbatches;
  const std::int64_t p = pipeline_rank;
  if (p < 0 || p >= p_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline rank ", p, " outside [0, ", p_count, ")"));
  }
  std::vector<ReferenceOp> order;
  if (p_count == 1) {
    // forward_backward_no_pipelining.
    for (std::int64_t m = 0; m < m_count; ++m) {
      order.push_back(ReferenceOp{m, 0, true});
      order.push_back(ReferenceOp{m, 0, false});
    }
    return order;
  }
  if (v_count == 1) {
    // forward_backward_pipelining_without_interleaving.
    const std::int64_t warmup = std::min(p_count - p - 1, m_count);
    for (std::int64_t m = 0; m < warmup; ++m) order.push_back(ReferenceOp{m, 0, true});
    for (std::int64_t i = 0; i < m_count - warmup; ++i) {
      order.push_back(ReferenceOp{warmup + i, 0, true});
      order.push_back(ReferenceOp{i, 0, false});
    }
    for (std::int64_t m = m_count - warmup; m < m_count; ++m) {
      order.push_back(ReferenceOp{m, 0, false});
    }
    return order;
  }
  // forward_backward_pipelining_with_interleaving: virtual microbatch i is
  // table entry i; its backward runs the chunks in reverse.
  const std::int64_t n = EffectiveGroupSize(runtime);
  const std::vector<std::pair<std::int64_t, std::int64_t>> table =
      InterleavedScheduleTable(m_count, v_count, n);
  const auto total = static_cast<std::int64_t>(table.size());
  const auto forward = [&table](std::int64_t i) {
    const auto& entry = table[static_cast<std::size_t>(i)];
    return ReferenceOp{entry.first, entry.second, true};
  };
  const auto backward = [&table, v_count](std::int64_t i) {
    const auto& entry = table[static_cast<std::size_t>(i)];
    return ReferenceOp{entry.first, v_count - 1 - entry.second, false};
  };
  const std::int64_t warmup = std::min((p_count - p - 1) * 2 + (v_count - 1) * n, total);
  for (std::int64_t i = 0; i < warmup; ++i) order.push_back(forward(i));
  for (std::int64_t i = warmup; i < total; ++i) {
    order.push_back(forward(i));
    order.push_back(backward(i - warmup));
  }
  for (std::int64_t i = total - warmup; i < total; ++i) order.push_back(backward(i));
  return order;
}

absl::StatusOr<ReferenceStep> ReferenceRuntimeStep(
    const Schedule& schedule, const std::vector<std::vector<double>>& rank_seconds,
    const ReferenceRuntime& runtime) {
  const std::int64_t p_count = runtime.pipeline_stages;
  const std::int64_t v_count = runtime.virtual_stages;
  const std::int64_t layers = runtime.layers_per_stage;
  const double share = runtime.forward_share;
  const std::int64_t ep = runtime.expert_parallel_size;
  if (p_count < 1) {
    return absl::InvalidArgumentError(absl::StrCat("pipeline stages ", p_count, " < 1"));
  }
  if (v_count < 1) {
    return absl::InvalidArgumentError(absl::StrCat("virtual stages ", v_count, " < 1"));
  }
  if (layers < 1) {
    return absl::InvalidArgumentError(absl::StrCat("layers per stage ", layers, " < 1"));
  }
  if (!(share > 0.0 && share < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("forward share ", share, " outside (0, 1)"));
  }
  if (v_count > 1 && p_count == 1) {
    return absl::InvalidArgumentError("virtual stages > 1 need pipeline stages > 1");
  }
  if (runtime.legacy && p_count > 1) {
    return absl::InvalidArgumentError("the legacy runtime has no pipelining");
  }
  if (ep < 0) return absl::InvalidArgumentError(absl::StrCat("expert-parallel size ", ep, " < 0"));

  // Shapes.
  const auto m_count = static_cast<std::int64_t>(schedule.microbatches.size());
  if (static_cast<std::int64_t>(rank_seconds.size()) != m_count) {
    return absl::InvalidArgumentError(absl::StrCat("rank seconds for ", rank_seconds.size(),
                                                   " microbatches, schedule has ", m_count));
  }
  const std::int64_t g =
      m_count == 0 ? 0 : static_cast<std::int64_t>(schedule.microbatches[0].rank_ids.size());
  for (std::int64_t m = 0; m < m_count; ++m) {
    const auto held = static_cast<std::int64_t>(
        schedule.microbatches[static_cast<std::size_t>(m)].rank_ids.size());
    const auto timed = static_cast<std::int64_t>(rank_seconds[static_cast<std::size_t>(m)].size());
    if (held != g) {
      return absl::InvalidArgumentError(
          absl::StrCat("microbatch ", m, " has ", held, " ranks, microbatch 0 has ", g));
    }
    if (timed != g) {
      return absl::InvalidArgumentError(
          absl::StrCat("microbatch ", m, " has seconds for ", timed, " ranks, not ", g));
    }
  }
  if (ep > 0 && g % ep != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expert-parallel size ", ep, " does not divide ", g, " ranks"));
  }

  // d(m, r) = L * t(m, r) / V, a chunk's share of the pipeline rank's L
  // layers; 0 for a rank that holds nothing.
  std::vector<std::vector<double>> own(static_cast<std::size_t>(m_count));
  for (std::int64_t m = 0; m < m_count; ++m) {
    const auto mi = static_cast<std::size_t>(m);
    for (std::int64_t r = 0; r < g; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      const bool holds = !schedule.microbatches[mi].rank_ids[ri].empty();
      double d = holds ? static_cast<double>(layers) * rank_seconds[mi][ri] : 0.0;
      if (runtime.virtual_stages > 1) d /= static_cast<double>(runtime.virtual_stages);
      own[mi].push_back(d);
    }
  }
  if (runtime.legacy) return LegacyStep(own);

  // Each pipeline rank's ops, the same behind every DPxCP rank.
  std::vector<std::vector<RuntimeOp>> ops(static_cast<std::size_t>(p_count));
  for (std::int64_t p = 0; p < p_count; ++p) {
    absl::StatusOr<std::vector<ReferenceOp>> order = ReferenceStageOrder(runtime, m_count, p);
    if (!order.ok()) return order.status();
    for (const ReferenceOp& op : *order) {
      if (p_count == 1) {
        if (op.forward) ops[0].push_back(RuntimeOp{op.microbatch, 0, RuntimePass::kWhole});
        continue;  // its backward is part of the whole op
      }
      ops[static_cast<std::size_t>(p)].push_back(
          RuntimeOp{op.microbatch, op.chunk,
                    op.forward ? RuntimePass::kForward : RuntimePass::kBackward});
    }
  }

  // Per microbatch, the synchronised sets: set_label[m][r], members ascending.
  std::vector<std::vector<std::int64_t>> set_label;
  for (const Microbatch& microbatch : schedule.microbatches) {
    set_label.push_back(SynchronisedSetLabels(microbatch, ep));
  }
  const auto members_of = [&set_label, g](std::int64_t m, std::int64_t r) {
    std::vector<std::int64_t> members;
    const std::vector<std::int64_t>& labels = set_label[static_cast<std::size_t>(m)];
    for (std::int64_t s = 0; s < g; ++s) {
      if (labels[static_cast<std::size_t>(s)] == labels[static_cast<std::size_t>(r)]) {
        members.push_back(s);
      }
    }
    return members;
  };

  const auto duration = [&own, share](std::int64_t m, std::int64_t r, RuntimePass pass) {
    const double d = own[static_cast<std::size_t>(m)][static_cast<std::size_t>(r)];
    if (pass == RuntimePass::kWhole) return d;
    const double forward = d * share;
    return pass == RuntimePass::kForward ? forward : d - forward;
  };

  // The simulation's state.
  const std::int64_t stages = p_count * v_count;
  const EndIndex end_index{stages, m_count};
  std::vector<std::optional<double>> op_end(
      static_cast<std::size_t>(g * stages * m_count * 2));
  std::vector<std::vector<std::size_t>> next(static_cast<std::size_t>(g),
                                             std::vector<std::size_t>(
                                                 static_cast<std::size_t>(p_count), 0));
  std::vector<std::vector<double>> free_at(
      static_cast<std::size_t>(g), std::vector<double>(static_cast<std::size_t>(p_count), 0.0));
  std::vector<std::vector<double>> work(
      static_cast<std::size_t>(g), std::vector<double>(static_cast<std::size_t>(p_count), 0.0));
  std::int64_t remaining = 0;
  for (const std::vector<RuntimeOp>& order : ops) {
    remaining += g * static_cast<std::int64_t>(order.size());
  }

  // When rank r's input to `op` on pipeline rank p is done: nullopt if not
  // yet, 0 if it needs none.
  const auto input_end = [&](std::int64_t r, std::int64_t p,
                             const RuntimeOp& op) -> std::optional<double> {
    const std::int64_t v = op.chunk * p_count + p;
    switch (op.pass) {
      case RuntimePass::kWhole:
        return 0.0;
      case RuntimePass::kForward:
        if (v == 0) return 0.0;
        return op_end[end_index(r, v - 1, op.microbatch, true)];
      case RuntimePass::kBackward:
        if (v == stages - 1) return op_end[end_index(r, v, op.microbatch, true)];
        return op_end[end_index(r, v + 1, op.microbatch, false)];
    }
    return std::nullopt;
  };

  while (remaining > 0) {
    bool found = false;
    double best_start = 0.0;
    std::int64_t best_p = 0;
    std::vector<std::int64_t> best_members;
    for (std::int64_t p = 0; p < p_count; ++p) {
      const std::vector<RuntimeOp>& order = ops[static_cast<std::size_t>(p)];
      for (std::int64_t r = 0; r < g; ++r) {
        const std::size_t i = next[static_cast<std::size_t>(r)][static_cast<std::size_t>(p)];
        if (i == order.size()) continue;
        const RuntimeOp& op = order[i];
        const std::vector<std::int64_t> members = members_of(op.microbatch, r);
        if (members.front() != r) continue;  // each set once, by its first rank
        bool ready = true;
        double start = free_at[static_cast<std::size_t>(r)][static_cast<std::size_t>(p)];
        for (const std::int64_t s : members) {
          const auto si = static_cast<std::size_t>(s);
          if (next[si][static_cast<std::size_t>(p)] != i) {
            ready = false;
            break;
          }
          const std::optional<double> input = input_end(s, p, op);
          if (!input.has_value()) {
            ready = false;
            break;
          }
          start = std::max({start, free_at[si][static_cast<std::size_t>(p)], *input});
        }
        if (!ready) continue;
        if (!found || start < best_start) {
          found = true;
          best_start = start;
          best_p = p;
          best_members = members;
        }
      }
    }
    if (!found) {
      return absl::InternalError(
          absl::StrCat("runtime step simulation deadlocked with ", remaining, " ops left"));
    }

    // Run it: each member its own duration, or with EP the set's longest.
    const auto pi = static_cast<std::size_t>(best_p);
    const RuntimeOp op = ops[pi][next[static_cast<std::size_t>(best_members.front())][pi]];
    double longest = 0.0;
    for (const std::int64_t s : best_members) {
      longest = std::max(longest, duration(op.microbatch, s, op.pass));
    }
    const std::int64_t v = op.chunk * p_count + best_p;
    for (const std::int64_t s : best_members) {
      const auto si = static_cast<std::size_t>(s);
      const double mine = duration(op.microbatch, s, op.pass);
      const double end = best_start + (ep > 0 ? longest : mine);
      free_at[si][pi] = end;
      work[si][pi] += mine;
      ++next[si][pi];
      if (op.pass != RuntimePass::kWhole) {
        op_end[end_index(s, v, op.microbatch, op.pass == RuntimePass::kForward)] = end;
      }
      --remaining;
    }
  }

  ReferenceStep step;
  for (std::int64_t r = 0; r < g; ++r) {
    double finish = 0.0;
    for (std::int64_t p = 0; p < p_count; ++p) {
      const auto ri = static_cast<std::size_t>(r);
      const auto pi = static_cast<std::size_t>(p);
      if (!ops[pi].empty()) finish = std::max(finish, free_at[ri][pi]);
      step.busiest_rank_seconds = std::max(step.busiest_rank_seconds, work[ri][pi]);
    }
    step.rank_finish_seconds.push_back(finish);
    step.step_seconds = std::max(step.step_seconds, finish);
  }
  return step;
}

}  // namespace dcpsched::oracle

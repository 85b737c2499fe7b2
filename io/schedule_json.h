// The JSON form of one schedule run: what was asked, what the scheduler
// answered and how good the answer is, for programs to read.
//
// Schema "dcpsched.schedule_run.v1" (keys always present unless noted; doubles
// are written shortest-round-trip, so they read back bit for bit):
//   {
//     "format": "dcpsched.schedule_run.v1",
//     "scheduler": "packing_aware" | "dp_balanced" | "legacy",
//     "ok": true | false,
//     "error": "<status message>",              -- only when ok is false
//     "parameters": {
//       "total_gpus": G, "dp_size": D, "cp_size": C,
//       "cp_size_implied": bool,    -- only G was given: D = G, C = 1
//       "max_seq_len_per_rank": M, "min_cp_size": m,
//       "vpp_group": k | null, "max_num_seqs": n | null },
//     "workload": { "description": "...", "num_samples": n,
//                   "total_tokens": t, "min_len": a, "max_len": b },
//     "samples": [[id, len], ...],              -- input order
//     -- the rest only when ok is true:
//     "groups": [[[id, ...] per rank] per microbatch],
//                 -- exactly upstream's get_groups_and_subsamples shape,
//                 -- with sample ids (also for dp_balanced)
//     "microbatches": [ {
//         "cp_groups": [ {"first_rank": r, "size": c, "ids": [...],
//                         "tokens_per_rank": x, "work_per_rank": w} ... ],
//         "rank_tokens": [x per rank], "rank_work": [w per rank],
//         "max_work": w, "min_work": w } per microbatch ],
//     "quality": { "balance_efficiency": e, "microbatch_count": k,
//                  "microbatch_lower_bound": k0, "critical_path_work": w,
//                  "max_rank_work": w1 }
//   }
// "cp_groups" are the schedule's CP groups (core/compact_schedule.h): in a
// dynamic-CP schedule its CP groups, in a dp_balanced one its DP replicas.
// "max_rank_work" is the most work any rank carries in any microbatch.
//
// Schema "dcpsched.schedule_run.v2" (`dcpsched schedule --compact --format
// json`): the compact form. As v1, without "groups" and without each
// microbatch's "rank_tokens" and "rank_work", so its size is O(samples +
// groups), not microbatches x G. The schedule is the "cp_groups" of each
// microbatch: their "first_rank", "size" and "ids", tiling ranks 0..G-1 in
// rank order:
//     "microbatches": [ {
//         "cp_groups": [ {"first_rank": r, "size": c, "ids": [...],
//                         "tokens_per_rank": x, "work_per_rank": w} ... ],
//         "max_work": w, "min_work": w } per microbatch ],
// With a cost profile (`--cost-profile`, docs/cost_model.md) a document
// also holds GPU seconds; without one none of these keys appear:
//     "cost_profile": { "name": "...", "description": "...", "device": "...",
//                       "model": "...", "communication": null | {
//                         "gpus_per_node": n, "intra_node_gb_per_s": x,
//                         "inter_node_gb_per_s": y, "kv_bytes_per_token": b },
//                       "communication_modelled": bool },
//     each cp_group: "seconds_per_rank": s,   each microbatch: "max_seconds": s
//     (and, per rank form only, "rank_seconds": [s per rank]),
//     "quality": { ..., "gpu_time": { "step_seconds": s, "bound_seconds": b,
//                  "gpu_efficiency": e, "communication_modelled": bool },
//                  "runtime": { "path": "dev" | "legacy", "pipeline_stages": P,
//                    "virtual_stages": V, "microbatch_group_size": N,
//                    "layers_per_stage": L, "forward_share": f,
//                    "expert_parallel_size": E | null, "step_seconds": s,
//                    "busiest_rank_seconds": w, "bubble_seconds": b,
//                    "bound_seconds": l } }
//     ("runtime": the step as Megatron-LM's runtime runs the schedule,
//     core/runtime_step.h)
// "cost_profile" is written for a failed run too; in "dcpsched.compare.v1"
// it is a top-level key and each run's "quality" has its "gpu_time" and
// "runtime".
// Scheduling time is left out on purpose: the same input always gives the
// same JSON, byte for byte. Keys are written in alphabetical order. Readers
// should ignore keys they do not know: a key may be added within v1; a key
// removed or changed in meaning gets a new version.
//
// Schema "dcpsched.compare.v1" (`dcpsched compare --format json`): every
// scheduler on one problem, without the schedules:
//   {
//     "format": "dcpsched.compare.v1",
//     "parameters": { ... as above },
//     "workload": { ... as above },
//     "runs": [ {
//         "scheduler": "packing_aware" | "dp_balanced" | "legacy",
//         "ok": true | false,
//         "error": "<status message>",          -- only when ok is false
//         "quality": { ... as above },          -- only when ok is true
//         "elapsed_ms": t } per scheduler ]
//   }
// "elapsed_ms" is the scheduler's wall time, so this document, unlike the
// one above, differs from run to run.

#ifndef DCPSCHED_IO_SCHEDULE_JSON_H_
#define DCPSCHED_IO_SCHEDULE_JSON_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "io/schedule_run.h"
#include "nlohmann/json.hpp"

namespace dcpsched {

// Names of the schemas above, the values of "format".
inline constexpr char kScheduleRunFormat[] = "dcpsched.schedule_run.v1";
inline constexpr char kCompactScheduleRunFormat[] = "dcpsched.schedule_run.v2";
inline constexpr char kCompareFormat[] = "dcpsched.compare.v1";

// How a run document holds its schedule: per rank (v1: "groups" and every
// rank's load) or compact (v2: the CP groups alone).
enum class ScheduleForm { kPerRank, kCompact };

// The "dcpsched.schedule_run.v1" (kPerRank) or ".v2" (kCompact) document.
nlohmann::json ScheduleRunToJson(const SchedulingProblem& problem,
                                 const ScheduleRun& run,
                                 ScheduleForm form = ScheduleForm::kPerRank);

// The per-rank form of `schedule` as upstream's sample_id_groups holds it
// ("groups" of v1 and of the schedule file): per microbatch, per rank, the
// ids of the group that covers the rank.
nlohmann::json PerRankGroupsToJson(const CompactSchedule& schedule);

// The "dcpsched.compare.v1" document of `runs`, each a run on `problem`.
nlohmann::json ComparisonToJson(const SchedulingProblem& problem,
                                absl::Span<const ScheduleRun> runs);

// How many JSON values the per-rank form ("groups", "rank_tokens",
// "rank_work") of `schedule` holds: it grows with microbatches x G, where
// the compact form grows with the groups. Counted from the compact form in
// O(groups), so a caller can refuse a document before building it.
std::int64_t PerRankJsonValues(const CompactSchedule& schedule);

// The most values of a per-rank document dcpsched builds (about 2-3 GiB of
// memory while it is written); `dcpsched schedule --format json` refuses a
// larger one and names --compact.
inline constexpr std::int64_t kMaxPerRankJsonValues = std::int64_t{1} << 26;

// ScheduleRunToJson written on one line (so runs can be appended to a
// .jsonl file), followed by a newline.
std::string FormatScheduleRunJson(const SchedulingProblem& problem,
                                  const ScheduleRun& run,
                                  ScheduleForm form = ScheduleForm::kPerRank);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_SCHEDULE_JSON_H_

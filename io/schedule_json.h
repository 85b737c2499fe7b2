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
// "cp_groups" are maximal runs of ranks holding the same ids (quality.h).
// "max_rank_work" is the most work any rank carries in any microbatch.
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

#include <string>

#include "absl/types/span.h"
#include "core/quality.h"
#include "io/schedule_run.h"
#include "nlohmann/json.hpp"

namespace dcpsched {

// Names of the schemas above, the values of "format".
inline constexpr char kScheduleRunFormat[] = "dcpsched.schedule_run.v1";
inline constexpr char kCompareFormat[] = "dcpsched.compare.v1";

nlohmann::json ScheduleRunToJson(const SchedulingProblem& problem,
                                 const ScheduleRun& run);

// The "dcpsched.compare.v1" document of `runs`, each a run on `problem`.
nlohmann::json ComparisonToJson(const SchedulingProblem& problem,
                                absl::Span<const ScheduleRun> runs);

// The most work any rank carries in any microbatch of a measured schedule
// (0 for an empty one): "max_rank_work".
double MaxRankWork(const ScheduleQuality& quality);

// ScheduleRunToJson written on one line (so runs can be appended to a
// .jsonl file), followed by a newline.
std::string FormatScheduleRunJson(const SchedulingProblem& problem,
                                  const ScheduleRun& run);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_SCHEDULE_JSON_H_

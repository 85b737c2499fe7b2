// Schedule files: a dynamic-CP problem and a schedule that claims to solve
// it, as one JSON document, so that a schedule made anywhere (a Megatron-LM
// run, another tool, a hand edit) can be checked against the specification's invariants
// (`dcpsched verify`, core/checker.h).
//
// Three forms are read (docs/schedule_json.md has the full description):
//
// 1. "dcpsched.schedule.v1", the form to write by hand or from Python:
//      {
//        "format": "dcpsched.schedule.v1",     -- optional
//        "total_gpus": 8,                      -- G = dp_size * cp_size
//        "max_seq_len_per_rank": 2048,
//        "min_cp_size": 1,                     -- optional, default 1
//        "vpp_group": 4,                       -- optional, null = none
//        "max_num_seqs": 3,                    -- optional, null = no cap
//        "scheduler": "packing_aware",         -- optional, any string
//        "description": "...",                 -- optional, any string
//        "samples": [[id, len], ...],
//        "groups": [[[id, ...] per rank] per microbatch]
//      }
//    "groups" has the shape of upstream's sample_id_groups (what its
//    get_groups_and_subsamples schedules): microbatch, then rank, then
//    sample ids.
//    Any other key is an error, so that a misspelt optional key (say
//    "min_cp") is not silently ignored.
//
// 2. "dcpsched.schedule_run.v1", what `dcpsched schedule --format json`
//    writes (io/schedule_json.h): its "parameters", "samples" and "groups"
//    are read, everything else is ignored. A run with "ok": false holds no
//    schedule and is an error.
//
// 3. "dcpsched.schedule_run.v2", what `dcpsched schedule --compact --format
//    json` writes: the compact form. Its "parameters", "samples" and, per
//    microbatch of "microbatches", the "first_rank", "size" and "ids" of
//    each of its "cp_groups" are read. The groups of a microbatch must
//    tile its ranks (MicrobatchWidth: the first at rank 0, each of at
//    least one rank, each starting where the one before ends; 65536 ranks
//    at most): a gap or an overlap describes no per-rank schedule, so it is
//    a parse error. A microbatch
//    whose groups end before or after rank G is the checker's to report,
//    as in the other forms.
//
// Every form is held in compact form (core/compact_schedule.h); a per-rank
// "groups" list becomes one group per maximal run of equal rank lists,
// which expands back to exactly what was written.
//
// Ids are signed 64-bit integers; lengths are integers in [1, 2^26]. The
// problem read must be valid as the specification's "Valid input" defines it
// (ValidateDynamicCpProblem); the schedule may be anything of the right
// shape, however broken: judging it is the checker's job, so a microbatch
// of the wrong width, an empty rank or an unknown id are not parse errors.
//
// Every error is InvalidArgument (NotFound when a file cannot be opened) and
// says what to change: the field, as a path like "groups[2][5][0]", what was
// found there and what is allowed. Malformed input of any kind, including
// deeply nested or truncated JSON, is an error, never a crash.

#ifndef DCPSCHED_IO_SCHEDULE_FILE_H_
#define DCPSCHED_IO_SCHEDULE_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// Name of form 1 above, the value of its "format" key.
inline constexpr char kScheduleFileFormat[] = "dcpsched.schedule.v1";

// Everything a schedule file says.
struct ScheduleFile {
  // The form it was read as: kScheduleFileFormat, kScheduleRunFormat or
  // kCompactScheduleRunFormat.
  std::string format;
  // "scheduler" and "description", or "" when absent. A run document's
  // description is its workload's.
  std::string scheduler;
  std::string description;
  // The problem: valid (ValidateDynamicCpProblem) in a parsed file.
  std::vector<Sample> samples;
  DynamicCpOptions options;
  // The schedule to judge, by sample id, as written (ExpandSchedule gives
  // the per-rank lists).
  CompactSchedule schedule;

  friend bool operator==(const ScheduleFile&, const ScheduleFile&) = default;
};

// Parses one JSON document in any of the forms.
absl::StatusOr<ScheduleFile> ParseScheduleFile(absl::string_view contents);

// Reads and parses the file at `path`; "-" reads standard input. NotFound if
// it cannot be opened; parse errors are prefixed with the path.
absl::StatusOr<ScheduleFile> ReadScheduleFile(const std::string& path);

// Writes `file` in form 1 on one line, followed by a newline. A valid
// ScheduleFile reads back equal, but for `format`, which becomes
// kScheduleFileFormat.
std::string FormatScheduleFile(const ScheduleFile& file);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_SCHEDULE_FILE_H_

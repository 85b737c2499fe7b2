// The readable text report of one schedule run, for people.
//
// A report has four parts:
//   1. a header: the workload (sample count, token count, length range and
//      mean, where the lengths came from), the topology (G = dp x cp), the
//      token budget max_seq_len_per_rank, min_cp and vpp;
//   2. each microbatch: its CP groups, one line each
//        ranks 0-3   cp=4  ids [12 40]  tokens/rank 1843.5  work/rank 2.1e+06
//      and its per-rank tokens and work (listed for small G, summarised as
//      min / mean / max for large G, from the groups: a report never
//      needs G lines per microbatch);
//   3. the figures of the specification's "Quality measures": balance efficiency, the microbatch
//      count against its lower bound, the critical-path work;
//   4. a side-by-side table of every scheduler on the same workload:
//      efficiency, microbatches, lower bound, critical-path work and
//      scheduling time. A scheduler that failed shows its error instead.
// With a cost profile (SchedulingProblem::cost_profile) the report also
// speaks GPU seconds: the header names the profile and says whether
// communication is modelled (and that it is modelled, not measured), each
// microbatch lists its ranks' milliseconds, part 3 adds the step time, its
// lower bound and the GPU efficiency (core/gpu_time.h), and the table adds
// their columns. Without one, not a byte changes.
// Long schedules, wide microbatches and long id lists are cut (see
// ReportOptions); the JSON form has everything.

#ifndef DCPSCHED_IO_REPORT_H_
#define DCPSCHED_IO_REPORT_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "io/schedule_run.h"

namespace dcpsched {

struct ReportOptions {
  // Microbatches shown in detail; the rest are counted.
  std::int64_t max_microbatches = 32;
  // CP groups listed per microbatch; the rest are counted.
  std::int64_t max_listed_groups = 32;
  // Per-rank figures are listed rank by rank up to this G, summarised above.
  std::int64_t max_listed_ranks = 16;
  // Ids listed per CP group; the rest are counted.
  std::int64_t max_listed_ids = 12;
  // Include the scheduling time column (tests turn it off to compare text).
  bool show_time = true;
};

// The whole report: header, `run` in detail, then the comparison table of
// `comparison` (typically RunAllSchedulers on the same problem; no table
// when it is empty). A skipped run's row says why it was skipped.
std::string FormatReport(const SchedulingProblem& problem,
                         const ScheduleRun& run,
                         absl::Span<const ScheduleRun> comparison,
                         const ReportOptions& options = {});

// Part 1 alone.
std::string FormatReportHeader(const SchedulingProblem& problem);

// Parts 2 and 3 alone: one run in detail, or its error.
std::string FormatRunDetail(const SchedulingProblem& problem,
                            const ScheduleRun& run,
                            const ReportOptions& options = {});

// The comparison tables' GPU-time columns (step ms, bound ms, GPU eff),
// shown when some run has a time: the header, and one run's cells ("-" for
// a run without a time).
std::string TimeColumnsHeader();
std::string TimeColumns(const ScheduleRun& run);

// Part 4 alone: one row per run.
std::string FormatComparisonTable(absl::Span<const ScheduleRun> runs,
                                  const ReportOptions& options = {});

}  // namespace dcpsched

#endif  // DCPSCHED_IO_REPORT_H_

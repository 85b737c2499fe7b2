// A picture of one schedule run, as a standalone SVG document.
//
// Ranks run across, microbatches down, one row per microbatch. Each CP group
// of the run's compact schedule (core/compact_schedule.h) is a box spanning
// its ranks, drawn from the group alone, so no per-rank list is ever built:
//   - its outline is the row's full height, which stands for the larger of
//     the microbatch's work cap (docs/specification.md: tallest len * mslpr * 1.05) and its
//     busiest rank's work;
//   - a bar filled with the colour of the group's CP size rises from the
//     bottom of the box to the group's work per rank;
//   - a hatched bar above it, up to the busiest rank's work, is the time the
//     group's ranks sit idle waiting for the microbatch's critical path;
//   - a dashed red line across the row marks the work cap.
// The title names the scheduler, the microbatch count and the balance
// efficiency; a legend maps colours to CP sizes (only those used); each row
// is labelled with its index on the left and its busy fraction (mean rank
// work / max rank work) on the right. Hovering over a box shows its ranks,
// ids, tokens and work (an SVG <title>). A run that failed is drawn as its
// error message.
//
// Every text from outside (scheduler, workload description, error) is
// escaped for XML, and bytes that are not valid UTF-8 become U+FFFD, so the
// output is always well-formed. The same run always gives the same bytes.
//
// Element classes, for tools and tests: each drawn microbatch is a
// <g class="microbatch"> holding one <line class="cap-line">, its labels and
// one <g class="cp-group"> per group, which holds exactly three <rect>s, in
// order "group-slot", "group-idle", "group-work". Legend swatches are
// <rect class="legend-swatch">.

#ifndef DCPSCHED_IO_SCHEDULE_SVG_H_
#define DCPSCHED_IO_SCHEDULE_SVG_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "io/schedule_run.h"

namespace dcpsched {

struct SvgOptions {
  // Microbatches drawn at most; a note counts the rest.
  std::int64_t max_microbatches = 200;
  // CP-group boxes drawn at most (bounds the size of the file for wide G):
  // drawing stops before the microbatch that would pass it.
  std::int64_t max_groups = 100000;
};

// The SVG document (UTF-8, starting with an XML declaration) of `run`, a
// run of a scheduler on `problem`.
std::string FormatScheduleSvg(const SchedulingProblem& problem,
                              const ScheduleRun& run,
                              const SvgOptions& options = {});

// Fill colour of CP groups of `cp_size` ranks ("#rrggbb"): one colour per
// power of two (cycling past 2^11), another for any other size (the whole-G
// groups of a fallback when G is not a power of two).
std::string CpSizeColor(std::int64_t cp_size);

// `text` made safe for XML character data and attribute values: & < > " '
// escaped, control characters other than tab and newline dropped, invalid
// UTF-8 replaced with U+FFFD.
std::string EscapeXml(absl::string_view text);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_SCHEDULE_SVG_H_

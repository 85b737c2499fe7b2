// A picture of one schedule run, as a standalone SVG document.
//
// Microbatches run down, one row per microbatch, and every row is drawn to
// one scale (the largest work cap or rank work of any microbatch drawn), so
// the rows that cost the most (their busiest rank's work: their step on the
// critical path) stand out as the tallest. The picture comes from the run's
// compact schedule (core/compact_schedule.h), so no per-rank list is built.
//
// Below `SvgOptions::band_min_gpus` ranks, each CP group is a box spanning
// its ranks:
//   - its outline is the row's full height;
//   - a bar filled with the colour of the group's CP size rises from the
//     bottom of the box to the group's work per rank;
//   - a hatched bar above it, up to the busiest rank's work, is the time the
//     group's ranks sit idle waiting for the microbatch's critical path.
// From that many ranks on (a group would be a pixel or less), each row
// gathers its CP groups into one band per CP size, largest first, with the
// empty groups last: a band's width is its rank count, its fill is the work
// profile of its groups sorted busiest first (about one step per pixel), and
// the hatch above reaches the busiest rank. A band has one outline, so
// outlines never swamp the fills.
//
// In both, a solid line across the row marks the busiest rank's work and a
// dashed red one the work cap (docs/specification.md: tallest len * mslpr *
// 1.05). The title names the scheduler, the microbatch count and the balance
// efficiency; the subtitle gives the topology the way that scheduler uses it
// (dp x cp for dp_balanced's fixed groups, G for the dynamic ones) and the
// limits; a legend maps colours to CP sizes (only those used), explains the
// lines and states the common scale. Each row is labelled with its index on
// the left and, on the right, its busy fraction (mean rank work / max rank
// work) and its share of the critical path. Hovering over a box or band shows
// its ranks, ids, tokens and work (an SVG <title>). A run that failed is
// drawn as its error message.
//
// With a cost profile (the run has a ScheduleTime, core/gpu_time.h) the
// picture is drawn in time instead of work, automatically: every bar is a
// rank's milliseconds by the profile, the scale a number of milliseconds per
// row, the title gives the step time and GPU efficiency, the legend names
// the profile and says whether communication is modelled, and there is
// no work cap line (the cap bounds work, not time). data-scale and
// data-max-work then hold milliseconds.
//
// Every text from outside (scheduler, workload description, error) is
// escaped for XML, and bytes that are not valid UTF-8 become U+FFFD, so the
// output is always well-formed. The same run always gives the same bytes.
//
// Element classes, for tools and tests: the <svg> carries data-layout
// ("groups" or "bands") and data-scale (the work of a full row). Each drawn
// microbatch is a <g class="microbatch" data-max-work=...> holding one
// <line class="busiest-line">, one <line class="cap-line">, its labels and
// either one <g class="cp-group"> per group, which holds exactly three
// <rect>s, in order "group-slot", "group-idle", "group-work", or one
// <g class="cp-band"> per band, holding <rect>s "band-slot" and "band-idle"
// and (unless the band is empty, data-size 0) a <path class="band-work">.
// Legend swatches are <rect class="legend-swatch">; the scale is stated in
// <text class="legend-scale">.

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
  // drawing stops before the microbatch that would pass it. Bands do not
  // count: a row has at most one per CP size.
  std::int64_t max_groups = 100000;
  // From this many ranks on, CP groups are gathered into bands of one CP
  // size (at 512 ranks on the widest plot a rank is about 3 pixels).
  std::int64_t band_min_gpus = 512;
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

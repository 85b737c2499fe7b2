#include "io/schedule_svg.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/quality.h"
#include "core/types.h"
#include "core/validate.h"
#include "io/schedule_run.h"

namespace dcpsched {
namespace {

// Geometry, in SVG user units (pixels).
constexpr double kMarginLeft = 64.0;   // row labels
constexpr double kMarginRight = 84.0;  // busy fractions
constexpr double kMinPlotWidth = 640.0;
constexpr double kMaxPlotWidth = 1600.0;
constexpr double kPixelsPerRank = 40.0;
constexpr double kRowHeight = 40.0;
constexpr double kRowGap = 8.0;
constexpr double kLegendY = 76.0;      // top of the legend swatches
constexpr double kRanksAxisY = 146.0;  // baseline of the rank labels
constexpr double kFirstRowY = 156.0;
constexpr double kMinLabelledGroupWidth = 30.0;
constexpr std::size_t kIdsInTooltip = 12;

constexpr std::array<absl::string_view, 12> kPowerOfTwoColors = {
    "#4e79a7", "#59a14f", "#f28e2b", "#e15759", "#b07aa1", "#76b7b2",
    "#edc948", "#9c755f", "#ff9da7", "#1f3b73", "#8cd17d", "#d37295"};
constexpr absl::string_view kOtherSizeColor = "#17becf";

std::string Num(double value) { return absl::StrFormat("%.2f", value); }

// Length of the valid UTF-8 sequence starting at text[i], or 0.
std::size_t Utf8SequenceLength(absl::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // at most U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

std::string IdList(const std::vector<SampleId>& ids) {
  const std::size_t listed = std::min(ids.size(), kIdsInTooltip);
  std::string text =
      absl::StrCat("[", absl::StrJoin(ids.begin(), ids.begin() + listed, " "));
  if (listed < ids.size()) {
    absl::StrAppend(&text, " ... +", ids.size() - listed, " more");
  }
  return text + "]";
}

// One <text> element; `text` is escaped here.
std::string Text(double x, double y, absl::string_view css_class,
                 absl::string_view attributes, absl::string_view text) {
  return absl::StrCat("<text class=\"", css_class, "\" x=\"", Num(x),
                      "\" y=\"", Num(y), "\"", attributes, ">",
                      EscapeXml(text), "</text>\n");
}

std::string Rect(absl::string_view css_class, double x, double y, double width,
                 double height, absl::string_view attributes) {
  return absl::StrCat("<rect class=\"", css_class, "\" x=\"", Num(x),
                      "\" y=\"", Num(y), "\" width=\"",
                      Num(std::max(width, 0.0)), "\" height=\"",
                      Num(std::max(height, 0.0)), "\"", attributes, "/>\n");
}

// The outline of a group or band across its row: red when it holds no
// sample.
std::string SlotRect(absl::string_view css_class, double x, double top,
                     double width, bool empty) {
  return Rect(css_class, x, top, width, kRowHeight,
              empty ? " fill=\"#ffffff\" stroke=\"#b00020\" stroke-width=\"1\""
                    : " fill=\"#ffffff\" stroke=\"#666666\" "
                      "stroke-width=\"0.75\"");
}

// The work cap of each microbatch: tallest len * mslpr * 1.05 (0 for a
// microbatch without a known id).
std::vector<double> MicrobatchCaps(const SchedulingProblem& problem,
                                   const CompactSchedule& schedule) {
  absl::flat_hash_map<SampleId, std::int64_t> len_of;
  len_of.reserve(problem.samples.size());
  for (const Sample& sample : problem.samples) len_of[sample.id] = sample.len;
  std::vector<double> caps;
  caps.reserve(schedule.microbatches.size());
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    std::int64_t tallest = 0;
    for (const CpGroupIds& group : microbatch.groups) {
      for (const SampleId id : group.ids) {
        const auto found = len_of.find(id);
        if (found != len_of.end()) tallest = std::max(tallest, found->second);
      }
    }
    caps.push_back(tallest == 0 ? 0.0
                                : WorkCap(tallest, problem.parameters
                                                       .max_seq_len_per_rank));
  }
  return caps;
}

// How many microbatches to draw within the options' limits. Bands have at
// most one box per CP size, so only group boxes count against max_groups.
std::size_t DrawnCount(const ScheduleQuality& quality,
                       const SvgOptions& options, bool banded) {
  const std::size_t limit = static_cast<std::size_t>(
      std::max<std::int64_t>(options.max_microbatches, 0));
  std::size_t drawn = 0;
  std::int64_t groups = 0;
  for (const MicrobatchLoad& load : quality.microbatches) {
    if (!banded) groups += static_cast<std::int64_t>(load.groups.size());
    if (drawn == limit || groups > options.max_groups) break;
    ++drawn;
  }
  return drawn;
}

// The CP groups of one size in one microbatch, gathered (empty groups form
// their own band, with cp_size 0).
struct Band {
  std::int64_t cp_size = 0;
  std::int64_t ranks = 0;
  std::int64_t ids = 0;
  // (work per rank, ranks) of each group, busiest first.
  std::vector<std::pair<double, std::int64_t>> groups;
  double min_work = 0.0;
  double max_work = 0.0;
  double mean_work = 0.0;  // per rank
};

// The bands of `load`: largest CP size first, the empty band last.
std::vector<Band> Bands(const MicrobatchLoad& load) {
  std::map<std::int64_t, Band, std::greater<>> by_size;
  for (const CpGroupLoad& group : load.groups) {
    const std::int64_t key = group.ids.empty() ? 0 : group.size;
    Band& band = by_size[key];
    band.cp_size = key;
    band.ranks += group.size;
    band.ids += static_cast<std::int64_t>(group.ids.size());
    band.groups.emplace_back(group.work_per_rank, group.size);
  }
  std::vector<Band> bands;
  bands.reserve(by_size.size());
  for (auto& [size, band] : by_size) {
    std::sort(band.groups.begin(), band.groups.end(), std::greater<>());
    double total = 0.0;
    for (const auto& [work, ranks] : band.groups) {
      total += work * static_cast<double>(ranks);
    }
    band.max_work = band.groups.front().first;
    band.min_work = band.groups.back().first;
    band.mean_work = total / static_cast<double>(band.ranks);
    bands.push_back(std::move(band));
  }
  return bands;
}

// The work per rank of `band` averaged over `columns` equal runs of its
// ranks (its groups busiest first): the outline of its profile.
std::vector<double> BandProfile(const Band& band, std::int64_t columns) {
  std::vector<double> profile;
  profile.reserve(static_cast<std::size_t>(columns));
  std::size_t group = 0;
  std::int64_t left_in_group = band.groups.front().second;
  for (std::int64_t c = 0; c < columns; ++c) {
    const std::int64_t begin = c * band.ranks / columns;
    const std::int64_t end = (c + 1) * band.ranks / columns;
    double sum = 0.0;
    for (std::int64_t need = end - begin; need > 0;) {
      const std::int64_t take = std::min(need, left_in_group);
      sum += band.groups[group].first * static_cast<double>(take);
      need -= take;
      left_in_group -= take;
      if (left_in_group == 0 && group + 1 < band.groups.size()) {
        left_in_group = band.groups[++group].second;
      }
    }
    profile.push_back(sum / static_cast<double>(end - begin));
  }
  return profile;
}

// Ranks across the picture: the schedule's width (G), else the problem's.
std::int64_t DrawnWidth(const SchedulingProblem& problem,
                        const ScheduleRun& run) {
  if (run.status.ok() && run.quality.total_gpus > 0) {
    return run.quality.total_gpus;
  }
  return std::max<std::int64_t>(problem.parameters.total_gpus(), 1);
}

// The run as the picture draws it in time (the run has a ScheduleTime): every
// group's and microbatch's work replaced by its milliseconds per rank, the
// critical path by the step time and the balance efficiency by the GPU
// efficiency, so the painter draws seconds with the same code.
ScheduleRun TimeView(const ScheduleRun& run) {
  ScheduleRun view = run;
  const ScheduleTime& time = *run.time;
  for (std::size_t m = 0; m < view.quality.microbatches.size(); ++m) {
    MicrobatchLoad& load = view.quality.microbatches[m];
    const MicrobatchTime& seconds = time.microbatches[m];
    for (std::size_t g = 0; g < load.groups.size(); ++g) {
      load.groups[g].work_per_rank = seconds.group_seconds[g] * 1e3;
    }
    load.max_work = seconds.max_seconds * 1e3;
    load.min_work = load.groups.empty() ? 0.0 : load.groups.front().work_per_rank;
    for (const CpGroupLoad& group : load.groups) {
      load.min_work = std::min(load.min_work, group.work_per_rank);
    }
  }
  view.quality.critical_path_work = time.step_seconds * 1e3;
  view.quality.balance_efficiency = time.gpu_efficiency;
  return view;
}

class SvgPainter {
 public:
  // `in_time`: `run` is a TimeView, drawn in milliseconds without work caps.
  SvgPainter(const SchedulingProblem& problem, const ScheduleRun& run,
             const SvgOptions& options, bool in_time)
      : problem_(problem),
        run_(run),
        in_time_(in_time),
        unit_(in_time ? "ms" : "work"),
        total_gpus_(DrawnWidth(problem, run)),
        banded_(total_gpus_ >= options.band_min_gpus),
        plot_width_(std::clamp(static_cast<double>(total_gpus_) * kPixelsPerRank,
                               kMinPlotWidth, kMaxPlotWidth)),
        rank_width_(plot_width_ / static_cast<double>(total_gpus_)),
        drawn_(run.status.ok() ? DrawnCount(run.quality, options, banded_)
                               : 0),
        caps_(run.status.ok() && !in_time ? MicrobatchCaps(problem, run.schedule)
                                          : std::vector<double>(drawn_, 0.0)),
        scale_(CommonScale()) {}

  std::string Paint() && {
    const double width = kMarginLeft + plot_width_ + kMarginRight;
    const std::size_t total = run_.quality.microbatches.size();
    const double rows_bottom =
        kFirstRowY + static_cast<double>(drawn_) * (kRowHeight + kRowGap);
    const double height =
        run_.status.ok() ? rows_bottom + (drawn_ < total ? 28.0 : 8.0) : 100.0;
    absl::StrAppend(
        &svg_, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
        Num(width), "\" height=\"", Num(height), "\" viewBox=\"0 0 ",
        Num(width), " ", Num(height),
        "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\"",
        " data-layout=\"", banded_ ? "bands" : "groups", "\" data-scale=\"",
        absl::StrFormat("%.6g", scale_), "\">\n");
    absl::StrAppend(&svg_, "<title>", EscapeXml(TitleText()), "</title>\n");
    absl::StrAppend(&svg_, Defs());
    absl::StrAppend(&svg_, Rect("background", 0, 0, width, height,
                                " fill=\"#ffffff\""));
    absl::StrAppend(&svg_, Text(12, 24, "title",
                                " font-size=\"16\" font-weight=\"bold\"",
                                TitleText()));
    absl::StrAppend(&svg_, Text(12, 44, "subtitle", "", SubtitleText()));
    absl::StrAppend(&svg_, Text(12, 60, "subtitle", "",
                                problem_.workload_description));
    if (!run_.status.ok()) {
      absl::StrAppend(&svg_, Text(12, 84, "error", " fill=\"#b00020\"",
                                  absl::StrCat("error: ",
                                               run_.status.message())));
      absl::StrAppend(&svg_, "</svg>\n");
      return std::move(svg_);
    }
    PaintLegend();
    PaintRankAxis();
    for (std::size_t m = 0; m < drawn_; ++m) PaintMicrobatch(m);
    if (drawn_ < total) {
      absl::StrAppend(
          &svg_, Text(kMarginLeft, rows_bottom + 12, "note", "",
                      absl::StrCat("... ", total - drawn_,
                                   " more microbatches not drawn (the JSON "
                                   "output has every one)")));
    }
    absl::StrAppend(&svg_, "</svg>\n");
    return std::move(svg_);
  }

 private:
  // The work a full row stands for, the same for every microbatch drawn:
  // the largest work cap or rank work among them (1 if all are 0).
  double CommonScale() const {
    double scale = 0.0;
    for (std::size_t m = 0; m < drawn_; ++m) {
      scale = std::max({scale, caps_[m], run_.quality.microbatches[m].max_work});
    }
    return scale > 0.0 ? scale : 1.0;
  }

  std::string TitleText() const {
    const absl::string_view name = SchedulerName(run_.scheduler);
    if (!run_.status.ok()) {
      return absl::StrCat(name, " schedule: failed");
    }
    if (in_time_) {
      return absl::StrFormat(
          "%s: %d microbatches, barrier step %.3f ms, GPU efficiency %.4f", name,
          run_.quality.microbatch_count, run_.quality.critical_path_work,
          run_.quality.balance_efficiency);
    }
    return absl::StrFormat(
        "%s: %d microbatches (lower bound %d), balance efficiency "
        "%.4f",
        name, run_.quality.microbatch_count,
        run_.quality.microbatch_lower_bound,
        run_.quality.balance_efficiency);
  }

  // The topology as the drawn scheduler sees it: dp_balanced runs fixed
  // groups of cp ranks, the dynamic schedulers size groups per microbatch.
  std::string SubtitleText() const {
    const RunParameters& parameters = problem_.parameters;
    std::string text = absl::StrCat(problem_.samples.size(),
                                    " samples on G = ",
                                    parameters.total_gpus(), " ranks");
    if (run_.scheduler == SchedulerKind::kDpBalanced) {
      absl::StrAppend(&text, " as dp ", parameters.dp_size, " x cp ",
                      parameters.cp_size, " (fixed CP groups)");
    } else {
      absl::StrAppend(&text, ", CP groups sized per microbatch (min_cp ",
                      parameters.min_cp_size, ")");
    }
    absl::StrAppend(
        &text, ", max_seq_len_per_rank ", parameters.max_seq_len_per_rank,
        ", vpp ",
        parameters.vpp_group.has_value() ? absl::StrCat(*parameters.vpp_group)
                                         : "none");
    if (parameters.max_num_seqs.has_value()) {
      absl::StrAppend(&text, ", max_num_seqs ", *parameters.max_num_seqs);
    }
    return text;
  }

  static std::string Defs() {
    return "<defs>\n<pattern id=\"idle-hatch\" width=\"6\" height=\"6\" "
           "patternUnits=\"userSpaceOnUse\" "
           "patternTransform=\"rotate(45)\">\n"
           "<rect class=\"hatch-background\" width=\"6\" height=\"6\" "
           "fill=\"#f0f0f0\"/>\n"
           "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#b8b8b8\" "
           "stroke-width=\"2\"/>\n</pattern>\n</defs>\n";
  }

  std::string HorizontalLine(absl::string_view css_class, double x1, double x2,
                             double y) const {
    const bool cap = css_class == "cap-line" || css_class == "legend-cap";
    return absl::StrCat("<line class=\"", css_class, "\" x1=\"", Num(x1),
                        "\" y1=\"", Num(y), "\" x2=\"", Num(x2), "\" y2=\"",
                        Num(y),
                        cap ? "\" stroke=\"#d62728\" stroke-width=\"1.5\" "
                              "stroke-dasharray=\"4 3\"/>\n"
                            : "\" stroke=\"#111111\" stroke-width=\"1\"/>\n");
  }

  // Swatches for the CP sizes used, the idle hatch, the cap and busiest-rank
  // lines, and the scale every row shares.
  void PaintLegend() {
    std::set<std::int64_t> sizes;
    for (std::size_t m = 0; m < drawn_; ++m) {
      for (const CpGroupLoad& group : run_.quality.microbatches[m].groups) {
        if (!group.ids.empty()) sizes.insert(group.size);
      }
    }
    absl::StrAppend(&svg_, "<g class=\"legend\">\n");
    double x = 12.0;
    constexpr double kY = kLegendY;
    absl::StrAppend(&svg_, Text(x, kY + 10, "legend-label", "", "CP size:"));
    x += 56.0;
    for (const std::int64_t size : sizes) {
      absl::StrAppend(&svg_, Rect("legend-swatch", x, kY, 14, 14,
                                  absl::StrCat(" fill=\"", CpSizeColor(size),
                                               "\" stroke=\"#555555\"")));
      const std::string label = absl::StrCat(size);
      absl::StrAppend(&svg_, Text(x + 18, kY + 11, "legend-label", "", label));
      x += 26.0 + 7.0 * static_cast<double>(label.size());
    }
    x += 12.0;
    absl::StrAppend(&svg_, Rect("legend-idle", x, kY, 14, 14,
                                " fill=\"url(#idle-hatch)\" stroke=\"#555555\""));
    absl::StrAppend(&svg_, Text(x + 18, kY + 11, "legend-label", "",
                                "idle (waiting for the busiest rank)"));
    constexpr double kLineY = kY + 27;
    if (in_time_) {
      absl::StrAppend(&svg_, Text(12, kLineY + 4, "legend-label", "",
                                  absl::StrCat(problem_.cost_profile->name,
                                               problem_.cost_profile->communication.has_value()
                                                   ? ", comm. modelled"
                                                   : ", compute only")));
    } else {
      absl::StrAppend(&svg_, HorizontalLine("legend-cap", 12, 34, kLineY));
      absl::StrAppend(&svg_, Text(38, kLineY + 4, "legend-label", "",
                                  "work cap (tallest len x mslpr x 1.05)"));
    }
    absl::StrAppend(&svg_, HorizontalLine("legend-busiest", 260, 282, kLineY));
    absl::StrAppend(&svg_,
                    Text(286, kLineY + 4, "legend-label", "",
                         "busiest rank: the microbatch's step on the critical "
                         "path (its share on the right)"));
    absl::StrAppend(
        &svg_,
        Text(12, kY + 48, "legend-scale", "",
             absl::StrFormat(
                 "one scale for every microbatch: a full row is %.4g %s per "
                 "rank; %s",
                 scale_, unit_,
                 banded_ ? "across, each microbatch's ranks gathered into one "
                           "band per CP size (largest first), its groups "
                           "busiest first"
                         : "ranks across, microbatches down")));
    absl::StrAppend(&svg_, "</g>\n");
  }

  // Rank numbers above the first row: every rank when there is room, else
  // about 16 evenly spaced ones (counts of ranks when banded).
  void PaintRankAxis() {
    const std::int64_t step =
        rank_width_ >= 18.0 ? 1 : std::max<std::int64_t>(1, total_gpus_ / 16);
    absl::StrAppend(&svg_, "<g class=\"rank-axis\">\n");
    absl::StrAppend(&svg_, Text(kMarginLeft - 8, kRanksAxisY, "axis-label",
                                " text-anchor=\"end\"",
                                banded_ ? "ranks" : "rank"));
    for (std::int64_t rank = 0; rank < total_gpus_; rank += step) {
      const double x = kMarginLeft + (static_cast<double>(rank) + 0.5) *
                                         rank_width_;
      absl::StrAppend(&svg_, Text(x, kRanksAxisY, "rank-label",
                                  " text-anchor=\"middle\"",
                                  absl::StrCat(rank)));
    }
    absl::StrAppend(&svg_, "</g>\n");
  }

  // The y of `work` in the row whose bottom is `bottom`.
  double Level(double bottom, double work) const {
    return bottom - kRowHeight * std::clamp(work / scale_, 0.0, 1.0);
  }

  void PaintMicrobatch(std::size_t m) {
    const MicrobatchLoad& load = run_.quality.microbatches[m];
    const double cap = caps_[m];
    const double top =
        kFirstRowY + static_cast<double>(m) * (kRowHeight + kRowGap);
    const double bottom = top + kRowHeight;

    absl::StrAppend(&svg_, "<g class=\"microbatch\" data-index=\"", m,
                    "\" data-max-work=\"",
                    absl::StrFormat("%.6g", load.max_work), "\">\n");
    absl::StrAppend(&svg_, Text(kMarginLeft - 8, top + kRowHeight / 2 + 4,
                                "microbatch-label", " text-anchor=\"end\"",
                                absl::StrCat("mb ", m)));
    if (banded_) {
      double x = kMarginLeft;
      for (const Band& band : Bands(load)) {
        const double width = static_cast<double>(band.ranks) * rank_width_;
        PaintBand(band, x, width, top, bottom, load.max_work, cap);
        x += width;
      }
    } else {
      for (const CpGroupLoad& group : load.groups) {
        PaintGroup(group, top, bottom, load.max_work, cap);
      }
    }
    const double right = kMarginLeft + plot_width_;
    absl::StrAppend(&svg_, HorizontalLine("busiest-line", kMarginLeft, right,
                                          Level(bottom, load.max_work)));
    if (!in_time_) {
      absl::StrAppend(&svg_, HorizontalLine("cap-line", kMarginLeft, right,
                                            Level(bottom, cap)));
    }
    absl::StrAppend(
        &svg_, Text(right + 6, top + 16, "busy-label", "",
                    absl::StrFormat("busy %.0f%%", 100.0 * BusyFraction(load))));
    absl::StrAppend(
        &svg_, Text(right + 6, top + 30, "path-label", "",
                    absl::StrFormat("path %.1f%%", 100.0 * PathShare(load))));
    absl::StrAppend(&svg_, "</g>\n");
  }

  static std::string WorkShareOfCap(double work, double cap) {
    if (!(cap > 0.0)) return "";
    return absl::StrFormat(" (%.0f%% of cap %.4g)", 100.0 * work / cap, cap);
  }

  void PaintGroup(const CpGroupLoad& group, double top, double bottom,
                  double max_work, double cap) {
    const double x =
        kMarginLeft + static_cast<double>(group.first_rank) * rank_width_;
    const double width = static_cast<double>(group.size) * rank_width_;
    const bool empty = group.ids.empty();
    std::string tooltip = absl::StrCat(RankRange(group.first_rank, group.size),
                                       ", cp ", group.size, ": ");
    if (empty) {
      absl::StrAppend(&tooltip, "empty (no sample)");
    } else {
      absl::StrAppend(
          &tooltip,
          absl::StrFormat("ids %s, %.1f tokens/rank, %s/rank %.4g",
                          IdList(group.ids), group.tokens_per_rank, unit_,
                          group.work_per_rank),
          WorkShareOfCap(group.work_per_rank, cap));
    }
    const double work_y = Level(bottom, group.work_per_rank);
    const double max_work_y = Level(bottom, max_work);
    absl::StrAppend(&svg_, "<g class=\"cp-group\" data-first-rank=\"",
                    group.first_rank, "\" data-size=\"", group.size, "\">\n");
    absl::StrAppend(&svg_, "<title>", EscapeXml(tooltip), "</title>\n");
    absl::StrAppend(&svg_, SlotRect("group-slot", x, top, width, empty));
    absl::StrAppend(&svg_, Rect("group-idle", x, max_work_y, width,
                                work_y - max_work_y,
                                " fill=\"url(#idle-hatch)\""));
    absl::StrAppend(
        &svg_, Rect("group-work", x, work_y, width, bottom - work_y,
                    absl::StrCat(" fill=\"", empty ? "#ffffff" : CpSizeColor(group.size),
                                 "\" stroke=\"#333333\" stroke-width=\"0.5\"")));
    if (width >= kMinLabelledGroupWidth) {
      absl::StrAppend(&svg_, Text(x + width / 2, top + 12, "group-label",
                                  " text-anchor=\"middle\" font-size=\"10\"",
                                  empty ? "empty"
                                        : absl::StrCat("cp", group.size)));
    }
    absl::StrAppend(&svg_, "</g>\n");
  }

  // One band: an outline, the idle hatch up to the busiest rank, and the
  // work profile of its groups (busiest first, about one step per pixel).
  void PaintBand(const Band& band, double x, double width, double top,
                 double bottom, double max_work, double cap) {
    const bool empty = band.cp_size == 0;
    std::string tooltip =
        empty ? absl::StrCat(band.groups.size(), " empty groups on ",
                             band.ranks, " ranks (no sample)")
              : absl::StrFormat(
                    "cp %d: %d groups on %d ranks, %d ids, %s/rank min "
                    "%.4g, mean %.4g, max %.4g",
                    band.cp_size, band.groups.size(), band.ranks, band.ids, unit_,
                    band.min_work, band.mean_work, band.max_work);
    if (!empty) absl::StrAppend(&tooltip, WorkShareOfCap(band.max_work, cap));
    absl::StrAppend(&svg_, "<g class=\"cp-band\" data-size=\"", band.cp_size,
                    "\" data-ranks=\"", band.ranks, "\" data-groups=\"",
                    band.groups.size(), "\">\n");
    absl::StrAppend(&svg_, "<title>", EscapeXml(tooltip), "</title>\n");
    absl::StrAppend(&svg_, SlotRect("band-slot", x, top, width, empty));
    const double max_work_y = Level(bottom, max_work);
    absl::StrAppend(&svg_, Rect("band-idle", x, max_work_y, width,
                                bottom - max_work_y,
                                " fill=\"url(#idle-hatch)\""));
    if (!empty) {
      const std::int64_t columns = std::clamp<std::int64_t>(
          static_cast<std::int64_t>(std::ceil(width)), 1, band.ranks);
      const std::vector<double> profile = BandProfile(band, columns);
      std::string path = absl::StrCat("M", Num(x), ",", Num(bottom));
      for (std::int64_t c = 0; c < columns; ++c) {
        const double y = Level(bottom, profile[static_cast<std::size_t>(c)]);
        absl::StrAppend(&path, " L", Num(x + width * static_cast<double>(c) /
                                                static_cast<double>(columns)),
                        ",", Num(y), " L",
                        Num(x + width * static_cast<double>(c + 1) /
                                    static_cast<double>(columns)),
                        ",", Num(y));
      }
      absl::StrAppend(&path, " L", Num(x + width), ",", Num(bottom), " Z");
      absl::StrAppend(&svg_, "<path class=\"band-work\" d=\"", path,
                      "\" fill=\"", CpSizeColor(band.cp_size),
                      "\" stroke=\"none\"/>\n");
    }
    if (width >= kMinLabelledGroupWidth) {
      absl::StrAppend(&svg_,
                      Text(x + width / 2, top + 12, "band-label",
                           " text-anchor=\"middle\" font-size=\"10\"",
                           empty ? "empty"
                                 : absl::StrCat("cp", band.cp_size, " x",
                                                band.groups.size())));
    }
    absl::StrAppend(&svg_, "</g>\n");
  }

  // Mean rank work over max rank work: 1 when no rank waits.
  static double BusyFraction(const MicrobatchLoad& load) {
    if (load.groups.empty() || !(load.max_work > 0.0)) return 1.0;
    return SumOverRanks(load, &CpGroupLoad::work_per_rank) /
           static_cast<double>(load.width()) / load.max_work;
  }

  // The microbatch's share of the critical path (the sum over microbatches
  // of the busiest rank's work).
  double PathShare(const MicrobatchLoad& load) const {
    const double path = run_.quality.critical_path_work;
    return path > 0.0 ? load.max_work / path : 0.0;
  }

  const SchedulingProblem& problem_;
  const ScheduleRun& run_;
  const bool in_time_;
  const char* const unit_;
  const std::int64_t total_gpus_;
  const bool banded_;
  const double plot_width_;
  const double rank_width_;
  const std::size_t drawn_;
  const std::vector<double> caps_;
  const double scale_;
  std::string svg_;
};

}  // namespace

std::string CpSizeColor(std::int64_t cp_size) {
  if (!IsPowerOfTwo(cp_size)) return std::string(kOtherSizeColor);
  const auto exponent =
      static_cast<std::size_t>(std::countr_zero(static_cast<std::uint64_t>(cp_size)));
  return std::string(kPowerOfTwoColors[exponent % kPowerOfTwoColors.size()]);
}

std::string EscapeXml(absl::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) {
      const std::size_t length = Utf8SequenceLength(text, i);
      if (length == 0) {
        escaped += "\xEF\xBF\xBD";  // U+FFFD
        ++i;
      } else {
        escaped.append(text.data() + i, length);
        i += length;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&apos;";
        break;
      default:
        if (byte >= 0x20 || c == '\t' || c == '\n') escaped += c;
        break;
    }
  }
  return escaped;
}

std::string FormatScheduleSvg(const SchedulingProblem& problem,
                              const ScheduleRun& run,
                              const SvgOptions& options) {
  if (run.status.ok() && run.time.has_value() && problem.cost_profile.has_value()) {
    const ScheduleRun view = TimeView(run);
    return SvgPainter(problem, view, options, /*in_time=*/true).Paint();
  }
  return SvgPainter(problem, run, options, /*in_time=*/false).Paint();
}

}  // namespace dcpsched

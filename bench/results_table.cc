// bench_results_table FILE.json
//
// Reads the JSON that packing_aware_bench writes (--benchmark_out=FILE
// --benchmark_out_format=json) and prints the markdown table of
// docs/performance.md, one row per point (workload, G, n): the core's time
// per global batch, per sample, peak heap and microbatch count, the oracle's
// and std::sort's times on the same batch, the ratios core/sort and
// oracle/core, and upstream's own time where its issue quotes one. Then the
// tables of the compact form (bench/compact_bench.h): the adversarial
// batches (time, peak heap, microbatches, groups) and the per-rank call
// against the full call (time and peak heap of each, and their ratios).
//
// With --benchmark_repetitions the median of the repetitions is used.
// Written in C++ on nlohmann_json (a dependency of the project already) so
// that it runs wherever the project builds, with no script interpreter.
//
// Exit status: 0 when the table was printed (failed benchmarks show as
// "error" and are listed under it), 1 when the file cannot be read, is not
// Google Benchmark JSON or holds no packing_aware_bench result, 2 on a wrong
// command line.

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace dcpsched::bench {
namespace {

using Json = nlohmann::json;

// --- Reading the runs --------------------------------------------------------

// One point of the grid, as named by packing_aware_bench:
// <what>/<workload>/G:<G>/n:<n>[/real_time].
struct PointKey {
  std::string workload;
  std::int64_t total_gpus = 0;
  std::int64_t num_samples = 0;

  friend bool operator<(const PointKey& a, const PointKey& b) {
    return std::tie(a.workload, a.total_gpus, a.num_samples) <
           std::tie(b.workload, b.total_gpus, b.num_samples);
  }
};

// One benchmark's result: what ran ("core", "oracle" or "sort"), where.
struct Run {
  std::string what;
  PointKey point;
  double seconds = 0.0;       // CPU time per iteration
  double wall_seconds = 0.0;  // real time per iteration
  std::optional<double> per_sample_seconds;
  std::optional<double> peak_mib;
  std::optional<double> microbatches;
  std::optional<double> groups;
  std::optional<std::string> error;
};

std::optional<std::int64_t> ParseTaggedInt(std::string_view part,
                                           std::string_view tag) {
  if (!part.starts_with(tag)) return std::nullopt;
  std::int64_t value = 0;
  const std::string digits(part.substr(tag.size()));
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    return std::nullopt;
  }
  for (const char c : digits) value = value * 10 + (c - '0');
  return value;
}

// Splits a run name into what ran and its point; nullopt for names that are
// not packing_aware_bench's.
std::optional<std::pair<std::string, PointKey>> ParseRunName(
    const std::string& name) {
  const std::vector<std::string> parts = absl::StrSplit(name, '/');
  if (parts.size() < 4) return std::nullopt;
  const std::optional<std::int64_t> total_gpus = ParseTaggedInt(parts[2], "G:");
  const std::optional<std::int64_t> num_samples =
      ParseTaggedInt(parts[3], "n:");
  if (!total_gpus || !num_samples) return std::nullopt;
  return std::make_pair(parts[0],
                        PointKey{parts[1], *total_gpus, *num_samples});
}

std::optional<double> NumberField(const Json& entry, const char* key) {
  const auto field = entry.find(key);
  if (field == entry.end() || !field->is_number()) return std::nullopt;
  return field->get<double>();
}

std::string StringField(const Json& entry, const char* key) {
  const auto field = entry.find(key);
  if (field == entry.end() || !field->is_string()) return "";
  return field->get<std::string>();
}

double SecondsPerTimeUnit(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  return 1.0;
}

// The run of one "iteration" entry; nullopt for aggregates and foreign
// names.
std::optional<Run> ReadRun(const Json& entry) {
  if (!entry.is_object() || StringField(entry, "run_type") == "aggregate") {
    return std::nullopt;
  }
  std::string name = StringField(entry, "run_name");
  if (name.empty()) name = StringField(entry, "name");
  std::optional<std::pair<std::string, PointKey>> parsed = ParseRunName(name);
  if (!parsed) return std::nullopt;
  Run run;
  run.what = std::move(parsed->first);
  run.point = std::move(parsed->second);
  const auto error = entry.find("error_occurred");
  if (error != entry.end() && error->is_boolean() && error->get<bool>()) {
    run.error = StringField(entry, "error_message");
    return run;
  }
  const double unit = SecondsPerTimeUnit(StringField(entry, "time_unit"));
  run.seconds = NumberField(entry, "cpu_time").value_or(0.0) * unit;
  run.wall_seconds = NumberField(entry, "real_time").value_or(0.0) * unit;
  run.per_sample_seconds = NumberField(entry, "per_sample");
  run.peak_mib = NumberField(entry, "peak_MiB");
  run.microbatches = NumberField(entry, "microbatches");
  run.groups = NumberField(entry, "groups");
  return run;
}

// --- Combining repetitions
// ----------------------------------------------------

// The runs of one benchmark, repetitions combined by their median time.
Run MedianRun(std::vector<Run> repetitions) {
  for (const Run& run : repetitions) {
    if (run.error) return run;
  }
  std::sort(repetitions.begin(), repetitions.end(),
            [](const Run& a, const Run& b) { return a.seconds < b.seconds; });
  return repetitions[repetitions.size() / 2];
}

// A table row: the runs of one point, in the order the points first appear.
struct PointRuns {
  PointKey point;
  std::map<std::string, Run> by_what;  // "core", "oracle", "sort"
};

std::vector<PointRuns> GroupByPoint(const std::vector<Run>& runs) {
  std::vector<PointKey> order;
  std::map<PointKey, std::map<std::string, std::vector<Run>>> repetitions;
  for (const Run& run : runs) {
    auto [found, inserted] = repetitions.try_emplace(run.point);
    if (inserted) order.push_back(run.point);
    found->second[run.what].push_back(run);
  }
  std::vector<PointRuns> rows;
  for (const PointKey& point : order) {
    PointRuns row{point, {}};
    for (auto& [what, runs_of_what] : repetitions[point]) {
      row.by_what.emplace(what, MedianRun(std::move(runs_of_what)));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// --- Formatting
// ---------------------------------------------------------------

// Three significant digits in a unit that keeps the number below 1000.
std::string FormatDuration(double seconds) {
  if (seconds >= 1.0) return absl::StrFormat("%.3g s", seconds);
  if (seconds >= 1e-3) return absl::StrFormat("%.3g ms", seconds * 1e3);
  if (seconds >= 1e-6) return absl::StrFormat("%.3g us", seconds * 1e6);
  return absl::StrFormat("%.3g ns", seconds * 1e9);
}

std::string FormatRatio(double ratio) {
  if (ratio >= 100.0) return absl::StrFormat("%.0fx", ratio);
  return absl::StrFormat("%.3gx", ratio);
}

const Run* FindRun(const PointRuns& row, const std::string& what) {
  const auto found = row.by_what.find(what);
  return found == row.by_what.end() ? nullptr : &found->second;
}

bool Succeeded(const Run* run) { return run != nullptr && !run->error; }

std::string TimeCell(const Run* run) {
  if (run == nullptr) return "skipped";
  if (run->error) return "error";
  return FormatDuration(run->seconds);
}

std::string RatioCell(const Run* numerator, const Run* denominator) {
  if (!Succeeded(numerator) || !Succeeded(denominator) ||
      denominator->seconds <= 0.0) {
    return "-";
  }
  return FormatRatio(numerator->seconds / denominator->seconds);
}

std::string PerSampleCell(const Run* core) {
  if (!Succeeded(core) || !core->per_sample_seconds) return "-";
  return FormatDuration(*core->per_sample_seconds);
}

std::string PeakMibCell(const Run* core) {
  if (!Succeeded(core) || !core->peak_mib) return "-";
  if (*core->peak_mib >= 100.0) return absl::StrFormat("%.0f", *core->peak_mib);
  return absl::StrFormat("%.3g", *core->peak_mib);
}

std::string CountCell(const Run* run, std::optional<double> Run::*count) {
  if (!Succeeded(run) || !(run->*count)) return "-";
  return absl::StrFormat("%.0f", *(run->*count));
}

// numerator's peak heap over denominator's.
std::string PeakRatioCell(const Run* numerator, const Run* denominator) {
  if (!Succeeded(numerator) || !Succeeded(denominator) ||
      !numerator->peak_mib || !denominator->peak_mib ||
      *denominator->peak_mib <= 0.0) {
    return "-";
  }
  return FormatRatio(*numerator->peak_mib / *denominator->peak_mib);
}

// The core's microbatch count; the oracle's too when it differs (it must
// not: both implement docs/specification.md).
std::string MicrobatchCell(const Run* core, const Run* oracle) {
  if (!Succeeded(core) || !core->microbatches) return "-";
  std::string cell = absl::StrFormat("%.0f", *core->microbatches);
  if (Succeeded(oracle) && oracle->microbatches &&
      *oracle->microbatches != *core->microbatches) {
    absl::StrAppendFormat(&cell, " (oracle %.0f!)", *oracle->microbatches);
  }
  return cell;
}

// Upstream's own times for one global batch, as its issue quotes them
// (benchmark workload): ~1.5 s at G = 64, n = 2048; 20-27 s for n = 8192 at
// G <= 128; over 45 s for n = 8192 at G >= 256.
std::string UpstreamQuotedCell(const PointKey& point) {
  if (point.workload != "benchmark") return "";
  if (point.total_gpus == 64 && point.num_samples == 2048) return "~1.5 s";
  if (point.num_samples == 8192) {
    return point.total_gpus <= 128 ? "20-27 s" : ">45 s";
  }
  return "";
}

std::vector<std::string> RowCells(const PointRuns& row) {
  const Run* core = FindRun(row, "core");
  const Run* oracle = FindRun(row, "oracle");
  const Run* sort = FindRun(row, "sort");
  return {absl::StrFormat("%d", row.point.total_gpus),
          absl::StrFormat("%d", row.point.num_samples),
          row.point.workload,
          TimeCell(core),
          PerSampleCell(core),
          PeakMibCell(core),
          MicrobatchCell(core, oracle),
          TimeCell(oracle),
          TimeCell(sort),
          RatioCell(core, sort),
          RatioCell(oracle, core),
          UpstreamQuotedCell(row.point)};
}

std::string MarkdownRow(const std::vector<std::string>& cells) {
  return absl::StrCat("| ", absl::StrJoin(cells, " | "), " |");
}

bool HasAny(const PointRuns& row, std::initializer_list<const char*> whats) {
  for (const char* what : whats) {
    if (FindRun(row, what) != nullptr) return true;
  }
  return false;
}

void PrintHeader(const std::vector<std::string>& header) {
  std::cout << MarkdownRow(header) << "\n";
  std::cout << MarkdownRow(std::vector<std::string>(header.size(), "---"))
            << "\n";
}

// The compact scheduler on the adversarial batches.
void PrintAdversarialTable(const std::vector<PointRuns>& rows) {
  bool first = true;
  for (const PointRuns& row : rows) {
    const Run* compact = FindRun(row, "compact");
    if (compact == nullptr) continue;
    if (first) {
      std::cout << "\nAdversarial batches (compact schedule):\n\n";
      PrintHeader({"distribution", "G", "n", "time/batch", "per sample",
                   "peak MiB", "microbatches", "CP groups"});
      first = false;
    }
    std::cout << MarkdownRow({row.point.workload,
                              absl::StrFormat("%d", row.point.total_gpus),
                              absl::StrFormat("%d", row.point.num_samples),
                              TimeCell(compact), PerSampleCell(compact),
                              PeakMibCell(compact),
                              CountCell(compact, &Run::microbatches),
                              CountCell(compact, &Run::groups)})
              << "\n";
  }
}

// One rank's lists from the compact schedule against every rank's lists.
void PrintPerRankTable(const std::vector<PointRuns>& rows) {
  bool first = true;
  for (const PointRuns& row : rows) {
    const Run* rank_view = FindRun(row, "rank_view");
    const Run* full = FindRun(row, "full");
    if (rank_view == nullptr && full == nullptr) continue;
    if (first) {
      std::cout << "\nPer-rank call (compact schedule, then RankIds) against "
                   "the full call (per-rank Schedule):\n\n";
      PrintHeader({"G", "n", "workload", "per-rank call", "peak MiB",
                   "full call", "peak MiB", "full/per-rank time",
                   "full/per-rank peak"});
      first = false;
    }
    std::cout << MarkdownRow({absl::StrFormat("%d", row.point.total_gpus),
                              absl::StrFormat("%d", row.point.num_samples),
                              row.point.workload, TimeCell(rank_view),
                              PeakMibCell(rank_view), TimeCell(full),
                              PeakMibCell(full), RatioCell(full, rank_view),
                              PeakRatioCell(full, rank_view)})
              << "\n";
  }
}

void PrintTable(const std::vector<PointRuns>& rows) {
  const std::vector<std::string> header = {"G",
                                           "n",
                                           "workload",
                                           "core time/batch",
                                           "per sample",
                                           "peak MiB",
                                           "microbatches",
                                           "oracle time",
                                           "std::sort time",
                                           "core/sort",
                                           "oracle/core",
                                           "upstream (quoted)"};
  const bool any = std::any_of(rows.begin(), rows.end(), [](const PointRuns& row) {
    return HasAny(row, {"core", "oracle", "sort"});
  });
  if (!any) return;
  PrintHeader(header);
  for (const PointRuns& row : rows) {
    if (HasAny(row, {"core", "oracle", "sort"})) {
      std::cout << MarkdownRow(RowCells(row)) << "\n";
    }
  }
}

void PrintErrors(const std::vector<PointRuns>& rows) {
  bool first = true;
  for (const PointRuns& row : rows) {
    for (const auto& [what, run] : row.by_what) {
      if (!run.error) continue;
      if (first) std::cout << "\n";
      first = false;
      std::cout << absl::StrFormat("error: %s/%s/G:%d/n:%d: %s\n", what,
                                   row.point.workload, row.point.total_gpus,
                                   row.point.num_samples, *run.error);
    }
  }
}

// Wall time above CPU time means other processes took the CPU during the
// run: the CPU times still hold, but the machine was not quiet.
constexpr double kLoadedWallOverCpu = 1.1;

void PrintLoadWarning(const std::vector<PointRuns>& rows) {
  int loaded = 0;
  int total = 0;
  for (const PointRuns& row : rows) {
    for (const auto& [what, run] : row.by_what) {
      if (run.error) continue;
      ++total;
      if (run.wall_seconds > kLoadedWallOverCpu * run.seconds) ++loaded;
    }
  }
  if (loaded == 0) return;
  std::cout << absl::StrFormat(
      "\nnote: wall time exceeded CPU time by more than 10%% in %d of %d "
      "benchmarks; the machine was busy (times are CPU times).\n",
      loaded, total);
}

// One line on where the numbers come from (Google Benchmark's context).
void PrintContext(const Json& context) {
  if (!context.is_object()) return;
  const std::optional<double> cpus = NumberField(context, "num_cpus");
  const std::optional<double> mhz = NumberField(context, "mhz_per_cpu");
  std::cout << absl::StrFormat(
      "Run %s on %s: %.0f CPUs at %.0f MHz, Google Benchmark built as %s.\n\n",
      StringField(context, "date"), StringField(context, "host_name"),
      cpus.value_or(0), mhz.value_or(0),
      StringField(context, "library_build_type"));
}

std::optional<Json> ReadJsonFile(const char* path) {
  std::ifstream file(path);
  if (!file) {
    std::cerr << "bench_results_table: cannot read " << path << "\n";
    return std::nullopt;
  }
  Json json = Json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object() ||
      !json.contains("benchmarks") || !json["benchmarks"].is_array()) {
    std::cerr
        << "bench_results_table: " << path
        << " is not Google Benchmark JSON (--benchmark_out_format=json)\n";
    return std::nullopt;
  }
  return json;
}

int PrintResultsTable(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: bench_results_table FILE.json\n";
    return 2;
  }
  const std::optional<Json> json = ReadJsonFile(argv[1]);
  if (!json) return 1;
  std::vector<Run> runs;
  for (const Json& entry : (*json)["benchmarks"]) {
    if (std::optional<Run> run = ReadRun(entry)) runs.push_back(*run);
  }
  if (runs.empty()) {
    std::cerr << "bench_results_table: " << argv[1]
              << " holds no packing_aware_bench results\n";
    return 1;
  }
  const std::vector<PointRuns> rows = GroupByPoint(runs);
  if (json->contains("context")) PrintContext((*json)["context"]);
  PrintTable(rows);
  PrintAdversarialTable(rows);
  PrintPerRankTable(rows);
  PrintErrors(rows);
  PrintLoadWarning(rows);
  return 0;
}

}  // namespace
}  // namespace dcpsched::bench

int main(int argc, char** argv) {
  return dcpsched::bench::PrintResultsTable(argc, argv);
}

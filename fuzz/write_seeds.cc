// fuzz_write_seeds: writes the seed corpora of the fuzz targets.
//
//   fuzz_write_seeds DIR [GOLDEN_DIR]
//
// writes named seed files into DIR/fuzz_<target>/seeds/ for every target,
// and an empty DIR/fuzz_<target>/regressions/ (with a .gitkeep) where
// minimized findings go. (Files directly in DIR/fuzz_<target>/ are the
// coverage corpus that libFuzzer's -merge=1 keeps minimal; see
// fuzz/README.md.) Structured targets get inputs written with FuzzInputWriter, so
// each seed decodes to exactly the case its name describes: the specification's and the
// review's cases, lengths at k * mslpr - 1, k * mslpr and k * mslpr + 1, min_cp
// and VPP cases, large G, the empty problem, and invalid problems. Text
// targets get text: lengths files, problem lines, cost profiles (a few
// hand-written, valid and not, and every shipped one), and the shortest lines of
// the golden vectors in GOLDEN_DIR (default: the source tree's tests/golden).
// Existing files of the same name are overwritten; others are left alone.
//
//   fuzz_write_seeds --decode TARGET FILE...
//
// prints, one line per file, what each file decodes to for the structured
// TARGET (fuzz_packing_aware, fuzz_packing_aware_differential, fuzz_legacy,
// fuzz_cost_aware, fuzz_dp_balanced or fuzz_vpp_align): for reading corpus
// files and findings (fuzz_cost_aware's profile choice is not shown).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/golden.h"
#include "io/problem_text.h"
#include "io/shipped_profiles.h"
#include "io/workload.h"
#include "properties/generators.h"

namespace dcpsched::fuzz {
namespace {

namespace fs = std::filesystem;

struct NamedText {
  const char* name;
  const char* text;
};

// Dynamic-CP problems, for fuzz_packing_aware, its differential twin and
// fuzz_legacy.
constexpr NamedText kProblems[] = {
    {"review_g14_two_halves", "G=14 mslpr=100 samples=0:50,1:50"},
    {"spec_g5_mslpr1_expand_past_g", "G=5 mslpr=1 samples=0:1,1:1"},
    {"spec_g3_mslpr1_vpp2_align_hang", "G=3 mslpr=1 vpp=2 samples=0:1,1:1"},
    {"empty_problem", "G=8 mslpr=2048 samples="},
    {"g1_mslpr1_empty", "G=1 mslpr=1 samples="},
    {"boundary_k1_mslpr2048", "G=8 mslpr=2048 samples=0:2047,1:2048,2:2049"},
    {"boundary_k2_mslpr2048", "G=8 mslpr=2048 samples=0:4095,1:4096,2:4097"},
    {"boundary_k4_mslpr2048", "G=8 mslpr=2048 samples=0:8191,1:8192,2:8193"},
    {"boundary_k3_mslpr37_g12", "G=12 mslpr=37 samples=0:110,1:111,2:112,3:36,4:37,5:38"},
    {"boundary_k8_mslpr100_g8", "G=8 mslpr=100 samples=0:799,1:800,2:801,3:99,4:100,5:101"},
    {"min_cp4_g32_vpp3", "G=32 mslpr=37 min_cp=4 vpp=3 samples=0:128,1:128,2:128,3:1,4:128,5:128"},
    {"min_cp2_g4_short", "G=4 mslpr=37 min_cp=2 samples=0:36"},
    {"min_cp8_g24", "G=24 mslpr=1024 min_cp=8 samples=0:100,1:3000,2:9000,3:100"},
    {"vpp2_g32_one_sample", "G=32 mslpr=2048 vpp=2 samples=0:2047"},
    {"vpp4_g8_mixed", "G=8 mslpr=2048 vpp=4 samples=0:8000,1:300,2:1200,3:5000,4:128,5:128,6:4096"},
    {"vpp3_g6_small", "G=6 mslpr=8 vpp=3 samples=0:3,1:9,2:17,3:1,4:1,5:2"},
    {"large_g4096_two_samples", "G=4096 mslpr=2048 samples=0:8192,1:100"},
    {"large_g65536_one_sample", "G=65536 mslpr=1 samples=0:65536"},
    {"large_g1000_two_samples", "G=1000 mslpr=1 samples=0:512,1:3"},
    {"equal_run_g4_mslpr1",
     "G=4 mslpr=1 samples=0:1,1:4,2:1,3:1,4:1,5:1,6:1,7:1,8:4,9:1,10:1,11:4,12:1,"
     "13:4,14:1,15:1,16:4"},
    {"g7_mslpr4_fallback", "G=7 mslpr=4 samples=0:14,1:5,2:7,3:6"},
    {"g6_tiny_equal", "G=6 mslpr=3 samples=0:2,1:2,2:2,3:2,4:2,5:2,6:2"},
    // From mutation testing (docs/mutation.md): an exact tie between an add
    // at CP size 2 and a new group at CP size 1, and the expand-once bound
    // at exactly G.
    {"tie_add_cp2_vs_new_cp1_g5", "G=5 mslpr=10 samples=0:11,1:10,2:10"},
    {"g7_expand_bound_at_g", "G=7 mslpr=10 samples=0:40,1:20"},
    {"scrambled_ids_negative",
     "G=3 mslpr=10 samples=-9:7,4611686018427387904:12,-9223372036854775808:30"},
    // max_num_seqs (Megatron-LM PR #6479). A group that holds the cap is
    // skipped (the second 3 finds both ranks' groups full); the review's
    // case, where the full-group fallback stops at the cap and leaves a 50
    // over; cap 1 on a mixed batch; caps on VPP problems; a cap of every
    // sample, which changes nothing; a literal cap.
    {"max_num_seqs1_full_group_skipped", "G=2 mslpr=100 max_num_seqs=1 samples=0:10,1:3,2:3"},
    {"max_num_seqs2_full_groups_skipped_g4",
     "G=4 mslpr=100 max_num_seqs=2 samples=0:10,1:9,2:3,3:3,4:3,5:3,6:3,7:3,8:3,9:3"},
    {"max_num_seqs1_review_g14_fallback_stops", "G=14 mslpr=100 max_num_seqs=1 samples=0:50,1:50"},
    {"max_num_seqs2_g7_fallback_stops", "G=7 mslpr=10 max_num_seqs=2 samples=0:5,1:5,2:5,3:5"},
    {"max_num_seqs1_g8_mixed",
     "G=8 mslpr=2048 max_num_seqs=1 samples=0:8000,1:300,2:1200,3:5000,4:128,5:128,6:4096"},
    {"max_num_seqs2_vpp4_g8_mixed",
     "G=8 mslpr=2048 vpp=4 max_num_seqs=2 samples=0:8000,1:300,2:1200,3:5000,4:128,5:128,6:4096"},
    {"max_num_seqs1_vpp3_g6_small",
     "G=6 mslpr=8 vpp=3 max_num_seqs=1 samples=0:3,1:9,2:17,3:1,4:1,5:2"},
    {"max_num_seqs_of_every_sample_g7", "G=7 mslpr=4 max_num_seqs=4 samples=0:14,1:5,2:7,3:6"},
    {"max_num_seqs_int64_max", "G=4 mslpr=10 max_num_seqs=9223372036854775807 samples=0:1,1:2"},
    {"invalid_g0", "G=0 mslpr=1 samples=0:1"},
    {"invalid_g65537", "G=65537 mslpr=1 samples=0:1"},
    {"invalid_mslpr0", "G=4 mslpr=0 samples=0:1"},
    {"invalid_mslpr_2pow31", "G=4 mslpr=2147483648 samples=0:1"},
    {"invalid_min_cp3", "G=4 mslpr=1 min_cp=3 samples=0:1"},
    {"invalid_min_cp_above_g", "G=6 mslpr=10 min_cp=8 samples=0:1"},
    {"invalid_vpp0", "G=4 mslpr=10 vpp=0 samples=0:1"},
    {"invalid_duplicate_id", "G=2 mslpr=1 samples=0:1,0:1"},
    {"invalid_len0", "G=2 mslpr=10 samples=0:5,1:0"},
    {"invalid_len_2pow26_plus1", "G=2 mslpr=2147483647 samples=0:67108865"},
    {"invalid_needs_more_than_g", "G=6 mslpr=10 samples=0:41"},
    {"invalid_max_num_seqs0", "G=4 mslpr=10 max_num_seqs=0 samples=0:1"},
    {"invalid_max_num_seqs_negative", "G=4 mslpr=10 max_num_seqs=-1 samples=0:1,1:2"},
};

// Problem lines for fuzz_problem_text (not necessarily valid problems).
constexpr NamedText kProblemLines[] = {
    {"review_g14", "G=14 mslpr=100 min_cp=1 vpp=none samples=0:50,1:50"},
    {"all_fields", "G=32 mslpr=37 min_cp=4 vpp=3 samples=0:128,1:128,2:128,3:1"},
    {"empty_samples", "G=1 mslpr=1 samples="},
    {"fields_reordered", "samples=7:5000,8:300,9:1200 vpp=4 mslpr=2048 G=8"},
    {"tabs_and_newline", "G=5\tmslpr=1\nsamples=0:1,1:1"},
    {"extremes", "G=-9223372036854775808 mslpr=9223372036854775807 samples=-1:-1"},
    {"missing_g", "mslpr=1 samples=0:1"},
    {"repeated_field", "G=1 G=2 mslpr=1 samples="},
    {"bad_sample", "G=1 mslpr=1 samples=0:1,2"},
    {"unknown_field", "G=1 mslpr=1 samples= dp=2"},
    {"max_num_seqs_set", "G=4 mslpr=8 min_cp=1 vpp=none max_num_seqs=2 samples=0:9,1:3"},
    {"max_num_seqs_none_first", "max_num_seqs=none G=4 mslpr=8 samples=0:9"},
    {"max_num_seqs_not_a_number", "G=4 mslpr=8 max_num_seqs=two samples=0:9"},
};

// Lengths files for fuzz_lengths_file.
constexpr NamedText kLengthsFiles[] = {
    {"len_form", "4096\n512\n128\n8192\n"},
    {"id_len_form_with_comments", "# id,len\n7,4096\n3, 512   # a short one\n\n-5,1\n"},
    {"crlf_and_blanks", "  100\r\n\t\r\n# comment only\r\n200 # trailing\r\n"},
    {"extremes", "9223372036854775807,67108864\n-9223372036854775808,1\n"},
    {"mixed_forms", "5\n1,5\n"},
    {"duplicate_id", "1,5\n1,6\n"},
    {"len_out_of_range", "67108865\n"},
    {"not_a_number", "12a\n"},
    {"empty", ""},
};

// Cost profiles for fuzz_cost_profile (the shipped ones are added too).
constexpr NamedText kCostProfiles[] = {
    {"minimal",
     R"({"schema": "dcpsched.cost_profile.v1", "name": "m",
  "attention": {"causal": {"lengths": [64], "seconds": [1e-6]},
                "full": {"lengths": [64], "seconds": [2e-6]}},
  "non_attention": {"tokens": [128], "seconds": [1e-3]}})"},
    {"communication",
     R"({"schema": "dcpsched.cost_profile.v1", "name": "c", "interpolation": "log-log",
  "attention": {"causal": {"lengths": [64, 4096], "seconds": [1e-6, 2e-3]},
                "full": {"lengths": [64, 4096], "seconds": [2e-6, 4e-3]}},
  "non_attention": {"tokens": [128, 131072], "seconds": [1e-3, 0.3]},
  "communication": {"gpus_per_node": 8, "intra_node_gb_per_s": 400.0,
                    "inter_node_gb_per_s": 50.0, "kv_bytes_per_token": 2048},
  "provenance": {"note": "modelled"}})"},
    {"negative_time",
     R"({"schema": "dcpsched.cost_profile.v1", "name": "n",
  "attention": {"causal": {"lengths": [1, 2, 3, 4], "seconds": [1, 1, 1, -1]},
                "full": {"lengths": [1], "seconds": [1]}},
  "non_attention": {"tokens": [1], "seconds": [1]}})"},
    {"not_increasing",
     R"({"schema": "dcpsched.cost_profile.v1", "name": "i",
  "attention": {"causal": {"lengths": [8, 8], "seconds": [1, 2]},
                "full": {"lengths": [1], "seconds": [1]}},
  "non_attention": {"tokens": [1], "seconds": [1]}})"},
    {"missing_full",
     R"({"schema": "dcpsched.cost_profile.v1", "name": "f",
  "attention": {"causal": {"lengths": [1], "seconds": [1]}},
  "non_attention": {"tokens": [1], "seconds": [1]}})"},
    {"unknown_schema", R"({"schema": "dcpsched.cost_profile.v2", "name": "u"})"},
    {"huge_values",
     R"({"schema": "dcpsched.cost_profile.v1", "name": "h",
  "attention": {"causal": {"lengths": [1099511627776], "seconds": [1e6]},
                "full": {"lengths": [1], "seconds": [1e-12]}},
  "non_attention": {"tokens": [1, 1099511627776], "seconds": [1e-12, 1e6]},
  "communication": {"gpus_per_node": 1, "intra_node_gb_per_s": 0.001,
                    "inter_node_gb_per_s": 0.001, "kv_bytes_per_token": 1e9}})"},
    {"not_json", "{\"schema\": "},
};

// Dp_balanced problems for fuzz_dp_balanced.
struct NamedDpBalanced {
  const char* name;
  properties::DpBalancedProblem problem;
};

std::vector<NamedDpBalanced> DpBalancedSeeds() {
  using Problem = properties::DpBalancedProblem;
  return {
      {"dp2_cp4_mixed",
       Problem{{8000, 300, 1200, 5000, 128, 128, 4096, 2048}, {2, 4, 2048, {}, {}}}},
      {"dp3_cp1_vpp2", Problem{{100, 100, 100, 50, 50, 1, 99}, {3, 1, 100, {}, 2}}},
      {"dp2_cp2_max_num_seqs2", Problem{{1, 2, 3, 4, 5, 6, 7}, {2, 2, 8, 2, {}}}},
      {"boundary_cp3_mslpr100", Problem{{299, 300, 301, 1, 300, 300}, {1, 3, 100, {}, {}}}},
      {"too_few_to_move_vpp4", Problem{{5}, {4, 1, 8, {}, 2}}},
      {"empty", Problem{{}, {2, 2, 2048, {}, {}}}},
      {"large_dp1024", Problem{{1, 2, 3}, {1024, 1, 4, {}, {}}}},
      {"invalid_len_over_budget", Problem{{201}, {1, 2, 100, {}, {}}}},
      {"invalid_dp0", Problem{{1}, {0, 1, 100, {}, {}}}},
      {"invalid_max_num_seqs0", Problem{{1}, {1, 1, 100, 0, {}}}},
  };
}

// Hand-made schedules for fuzz_vpp_align.
struct NamedAlignment {
  const char* name;
  VppAlignInput input;
};

Microbatch Runs(const std::vector<std::pair<int, std::vector<SampleId>>>& runs) {
  Microbatch microbatch;
  for (const auto& [size, ids] : runs)
    microbatch.rank_ids.insert(microbatch.rank_ids.end(), size, ids);
  return microbatch;
}

std::vector<NamedAlignment> AlignmentSeeds() {
  return {
      {"w8_two_microbatches_vpp4",
       {4, Schedule{{Runs({{4, {0, 1}}, {2, {2}}, {1, {3}}, {1, {4, 5}}}), Runs({{8, {6}}})}}}},
      {"spec_g3_hang_shape_vpp2", {2, Schedule{{Runs({{2, {0}}, {1, {1}}})}}}},
      {"w14_review_shape_vpp3", {3, Schedule{{Runs({{8, {0}}, {4, {1}}, {2, {2}}})}}}},
      {"w16_many_runs_vpp4",
       {4,
        Schedule{{Runs(
            {{4, {0}}, {4, {1}}, {2, {2}}, {2, {3}}, {1, {4}}, {1, {5}}, {1, {6}}, {1, {7}}})}}}},
      {"w6_non_power_of_two_vpp2",
       {2, Schedule{{Runs({{2, {0}}, {2, {1}}, {1, {2}}, {1, {3}}}), Runs({{4, {4}}, {2, {5}}}),
                     Runs({{6, {6, 7}}})}}}},
      {"w1_nothing_to_split_vpp2", {2, Schedule{{Runs({{1, {0}}})}}}},
      {"vpp1_unchanged", {1, Schedule{{Runs({{2, {0}}, {2, {1}}})}}}},
      {"empty_schedule_vpp3", {3, Schedule{}}},
      {"malformed_growing_runs", {2, Schedule{{Runs({{1, {0}}, {2, {1}}, {4, {2}}})}}}},
      {"malformed_empty_rank", {2, Schedule{{Runs({{2, {0}}, {1, {1}}, {1, {}}})}}}},
      {"malformed_ragged", {2, Schedule{{Runs({{2, {0}}, {2, {1}}}), Runs({{3, {2}}})}}}},
      {"malformed_run_split_apart", {2, Schedule{{Runs({{2, {0}}, {1, {1}}, {1, {0}}})}}}},
      {"invalid_vpp0", {0, Schedule{{Runs({{2, {0}}, {2, {1}}})}}}},
  };
}

absl::Status WriteFile(const fs::path& path, absl::string_view contents) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  file.close();
  if (!file) return absl::DataLossError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// Writes DIR/fuzz_<target>/seeds/<name> and counts it.
class SeedWriter {
 public:
  explicit SeedWriter(fs::path dir) : dir_(std::move(dir)) {}

  absl::Status Write(absl::string_view target, absl::string_view name, absl::string_view contents) {
    const fs::path target_dir = dir_ / absl::StrCat("fuzz_", target);
    std::error_code error;
    fs::create_directories(target_dir / "regressions", error);
    if (!error) fs::create_directories(target_dir / "seeds", error);
    if (error) {
      return absl::DataLossError(
          absl::StrCat("cannot create ", target_dir.string(), ": ", error.message()));
    }
    if (!fs::exists(target_dir / "regressions" / ".gitkeep")) {
      if (absl::Status status = WriteFile(target_dir / "regressions" / ".gitkeep", "");
          !status.ok())
        return status;
    }
    ++written_;
    return WriteFile(target_dir / "seeds" / std::string(name), contents);
  }

  absl::Status WriteBytes(absl::string_view target, absl::string_view name,
                          const FuzzInputWriter& writer) {
    const std::vector<std::uint8_t> bytes = writer.Bytes();
    return Write(target, name,
                 absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

  int written() const { return written_; }

 private:
  fs::path dir_;
  int written_ = 0;
};

absl::Status WriteProblem(SeedWriter& seeds, absl::string_view name,
                          const DynamicCpProblem& problem) {
  FuzzInputWriter writer;
  if (absl::Status status = writer.WriteDynamicCpProblem(problem); !status.ok()) return status;
  for (const absl::string_view target :
       {"packing_aware", "packing_aware_differential", "legacy", "cost_aware"}) {
    if (absl::Status status = seeds.WriteBytes(target, name, writer); !status.ok()) return status;
  }
  return absl::OkStatus();
}

// For fuzz_cost_aware: lognormal batches at G that is not a power of two,
// with VPP groups of 4, where packing-aware is refused or fails most often.
absl::Status WriteCostAwareSeeds(SeedWriter& seeds) {
  for (const std::int64_t gpus : {6, 14}) {
    LognormalWorkload workload = DcpBenchmarkWorkload();
    workload.num_samples = 48;
    absl::StatusOr<std::vector<Sample>> samples = GenerateLognormalWorkload(workload);
    if (!samples.ok()) return samples.status();
    DynamicCpProblem problem;
    problem.samples = *std::move(samples);
    problem.options.total_gpus = gpus;
    problem.options.max_seq_len_per_rank = 4096;
    problem.options.vpp_group = 4;
    FuzzInputWriter writer;
    if (absl::Status status = writer.WriteDynamicCpProblem(problem); !status.ok()) return status;
    if (absl::Status status = seeds.WriteBytes(
            "cost_aware", absl::StrCat("lognormal_48_samples_g", gpus, "_vpp4"), writer);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status WriteProblemSeeds(SeedWriter& seeds) {
  for (const NamedText& seed : kProblems) {
    const absl::StatusOr<DynamicCpProblem> problem = ParseProblem(seed.text);
    if (!problem.ok()) return problem.status();
    if (absl::Status status = WriteProblem(seeds, seed.name, *problem); !status.ok()) return status;
  }
  // Upstream's DCP benchmark workload, 128 samples on dp 2 x cp 4.
  LognormalWorkload workload = DcpBenchmarkWorkload();
  workload.num_samples = 128;
  absl::StatusOr<std::vector<Sample>> samples = GenerateLognormalWorkload(workload);
  if (!samples.ok()) return samples.status();
  DynamicCpProblem benchmark;
  benchmark.samples = *std::move(samples);
  benchmark.options.total_gpus = 8;
  benchmark.options.max_seq_len_per_rank = 2048;
  return WriteProblem(seeds, "benchmark_128_samples_g8_mslpr2048", benchmark);
}

absl::Status WriteStructuredSeeds(SeedWriter& seeds) {
  if (absl::Status status = WriteProblemSeeds(seeds); !status.ok()) return status;
  if (absl::Status status = WriteCostAwareSeeds(seeds); !status.ok()) return status;
  for (const NamedDpBalanced& seed : DpBalancedSeeds()) {
    FuzzInputWriter writer;
    if (absl::Status status = writer.WriteDpBalancedProblem(seed.problem); !status.ok())
      return status;
    if (absl::Status status = seeds.WriteBytes("dp_balanced", seed.name, writer); !status.ok())
      return status;
  }
  for (const NamedAlignment& seed : AlignmentSeeds()) {
    FuzzInputWriter writer;
    if (absl::Status status = writer.WriteVppAlignInput(seed.input); !status.ok()) return status;
    if (absl::Status status = seeds.WriteBytes("vpp_align", seed.name, writer); !status.ok())
      return status;
  }
  return absl::OkStatus();
}

absl::Status WriteTextSeeds(SeedWriter& seeds) {
  for (const NamedText& seed : kProblemLines) {
    if (absl::Status status = seeds.Write("problem_text", seed.name, seed.text); !status.ok())
      return status;
  }
  for (const NamedText& seed : kProblems) {
    if (absl::Status status = seeds.Write("problem_text", seed.name, seed.text); !status.ok())
      return status;
  }
  for (const NamedText& seed : kLengthsFiles) {
    if (absl::Status status = seeds.Write("lengths_file", seed.name, seed.text); !status.ok())
      return status;
  }
  for (const NamedText& seed : kCostProfiles) {
    if (absl::Status status = seeds.Write("cost_profile", seed.name, seed.text); !status.ok())
      return status;
  }
  for (const ShippedProfile& shipped : ShippedProfiles()) {
    if (absl::Status status = seeds.Write("cost_profile", absl::StrCat("shipped_", shipped.name),
                                          shipped.json);
        !status.ok())
      return status;
  }
  return absl::OkStatus();
}

// The lines of one golden file, shortest first.
absl::StatusOr<std::vector<std::string>> LinesByLength(const fs::path& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  return lines;
}

// From every golden file: its two shortest lines, and its shortest ok:false
// line if that is another one.
absl::Status WriteGoldenSeeds(SeedWriter& seeds, const fs::path& golden_dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(golden_dir)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  if (files.empty())
    return absl::NotFoundError(absl::StrCat("no .jsonl file in ", golden_dir.string()));
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) {
    absl::StatusOr<std::vector<std::string>> lines = LinesByLength(path);
    if (!lines.ok()) return lines.status();
    std::vector<std::size_t> chosen = {0, 1};
    for (std::size_t i = 0; i < lines->size(); ++i) {
      const absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase((*lines)[i]);
      if (!golden_case.ok()) return golden_case.status();
      if (golden_case->expect_ok) continue;
      if (i >= 2) chosen.push_back(i);
      break;
    }
    for (const std::size_t i : chosen) {
      if (i >= lines->size()) continue;
      const absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase((*lines)[i]);
      if (!golden_case.ok()) return golden_case.status();
      const std::string name = absl::StrCat("golden_", golden_case->name);
      if (absl::Status status = seeds.Write("golden", name, (*lines)[i]); !status.ok())
        return status;
    }
  }
  return absl::OkStatus();
}

int Decode(absl::string_view target, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      std::cerr << "fuzz_write_seeds: cannot open " << path << "\n";
      return 1;
    }
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                          std::istreambuf_iterator<char>());
    const std::optional<TargetInput> decoded = DecodeTargetInput(target, bytes);
    if (!decoded.has_value()) {
      std::cerr << "fuzz_write_seeds: " << target << " is not a structured fuzz target\n";
      return 2;
    }
    std::cout << path << ": " << FormatTargetInput(*decoded) << "\n";
  }
  return 0;
}

int Main(int argc, char** argv) {
  if (argc >= 4 && absl::string_view(argv[1]) == "--decode") {
    return Decode(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  }
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: fuzz_write_seeds DIR [GOLDEN_DIR]\n"
                 "       fuzz_write_seeds --decode TARGET FILE...\n";
    return 2;
  }
  SeedWriter seeds{fs::path(argv[1])};
  const fs::path golden_dir = argc == 3 ? fs::path(argv[2]) : fs::path(DCPSCHED_GOLDEN_DIR);
  absl::Status status = WriteStructuredSeeds(seeds);
  if (status.ok()) status = WriteTextSeeds(seeds);
  if (status.ok()) status = WriteGoldenSeeds(seeds, golden_dir);
  if (!status.ok()) {
    std::cerr << "fuzz_write_seeds: " << status << "\n";
    return 1;
  }
  std::cout << "fuzz_write_seeds: wrote " << seeds.written() << " seed files under " << argv[1]
            << "\n";
  return 0;
}

}  // namespace
}  // namespace dcpsched::fuzz

int main(int argc, char** argv) { return dcpsched::fuzz::Main(argc, argv); }

#include "cli/problem_flags.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/cost_profile_flag.h"
#include "cli/exit_codes.h"
#include "cli/flag_hints.h"
#include "cli/integer_flag.h"
#include "core/types.h"
#include "core/validate.h"
#include "io/lengths_file.h"
#include "io/problem_text.h"
#include "io/schedule_run.h"
#include "io/workload.h"

namespace dcpsched {
namespace {

constexpr std::int64_t kMaxVppGroup = std::int64_t{1} << 20;

std::optional<std::int64_t> IfGiven(const CLI::Option* option,
                                    std::int64_t value) {
  if (option->count() == 0) return std::nullopt;
  return value;
}

// The topology is dp x cp; with one of --dp and --cp given, the other's
// default silently decides G, so say what it is.
void NoteOneSidedTopology(const CLI::Option& dp, const CLI::Option& cp,
                          const RunParameters& parameters, std::ostream& err) {
  if ((dp.count() > 0) == (cp.count() > 0)) return;
  const bool dp_given = dp.count() > 0;
  err << "dcpsched: note: " << (dp_given ? "--dp " : "--cp ")
      << (dp_given ? parameters.dp_size : parameters.cp_size) << " without "
      << (dp_given ? "--cp" : "--dp") << " runs dp " << parameters.dp_size
      << " x cp " << parameters.cp_size << " (the default "
      << (dp_given ? "--cp " : "--dp ")
      << (dp_given ? parameters.cp_size : parameters.dp_size) << "), G = "
      << parameters.dp_size * parameters.cp_size << " ranks; give "
      << (dp_given ? "--cp C" : "--dp D") << " to choose\n";
}

}  // namespace

ProblemFlags::ProblemFlags(CLI::App& command) : runtime_flags_(command) {
  CLI::Option* lengths =
      command
          .add_option("--lengths", flags_.lengths_file,
                      "Read the batch from FILE: one sample per line, `len` "
                      "or `id,len`, # comments; - reads standard input (default: "
                      "generate it)")
          ->type_name("FILE");

  total_gpus_option_ =
      command
          .add_option("--total-gpus", flags_.total_gpus,
                      "G, the number of DPxCP ranks; dp_balanced then runs "
                      "as dp G x cp 1")
          ->type_name("G")
          ->check(IntegerIn(std::int64_t{1}, kMaxTotalGpus));
  dp_option_ =
      command
          .add_option("--dp", flags_.dp_size,
                      "Data-parallel size D; G = D x C ranks (give --cp too)")
          ->type_name("D")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxTotalGpus));
  cp_option_ =
      command
          .add_option("--cp", flags_.cp_size,
                      "Context-parallel size C; G = D x C ranks (give --dp too)")
          ->type_name("C")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxTotalGpus));
  total_gpus_option_->excludes(dp_option_)->excludes(cp_option_);

  CLI::Option* mslpr =
      command
          .add_option("--mslpr,--max-seq-len-per-rank", flags_.max_seq_len_per_rank,
                      "Token budget of one rank in one microbatch")
          ->type_name("M")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxSeqLenPerRank));
  CLI::Option* min_cp =
      command
          .add_option("--min-cp", flags_.min_cp_size,
                      "Smallest CP group a sample may use (a power of two <= G)")
          ->type_name("N")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxTotalGpus));
  vpp_option_ =
      command
          .add_option("--vpp", flags_.vpp_group,
                      "Make the microbatch count a multiple of K "
                      "(microbatch_group_size_per_vp_stage; default: none)")
          ->type_name("K")
          ->check(IntegerIn(std::int64_t{1}, kMaxVppGroup));
  max_num_seqs_option_ =
      command
          .add_option("--max-num-seqs", flags_.max_num_seqs,
                      "At most N samples on a rank in one microbatch: per CP "
                      "group for packing_aware (upstream's max_num_seqs, "
                      "Megatron-LM PR #6479), per packed sequence for "
                      "dp_balanced; legacy refuses it (default: no limit)")
          ->type_name("N")
          ->check(IntegerIn(std::int64_t{1}, INT64_MAX));

  // Every flag that says what the problem is, but the generated workload's.
  const std::vector<CLI::Option*> problem_shape = {
      lengths, total_gpus_option_, dp_option_, cp_option_, mslpr, min_cp, vpp_option_,
      max_num_seqs_option_};

  std::vector<CLI::Option*> workload_options;
  workload_options.push_back(
      command
          .add_option("--preset", flags_.preset,
                      "Generated workload: benchmark (upstream DCP benchmark: "
                      "mean 1024, sigma 1.5) or skewed (mean 768, sigma 1.8); "
                      "both clipped to [128, 8192]")
          ->capture_default_str()
          ->check(CLI::IsMember({"benchmark", "skewed"})));
  workload_options.push_back(command
                                 .add_option("--seed", flags_.workload.seed,
                                             "Seed of the generated workload")
                                 ->capture_default_str()
                                 ->check(UnsignedInteger()));
  workload_options.push_back(
      command
          .add_option("--samples", flags_.workload.num_samples,
                      "Number of generated samples")
          ->type_name("N")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{0}, kMaxWorkloadSamples)));
  mean_option_ = command.add_option(
      "--mean", flags_.workload.mean_len,
      "Mean of the unclipped lognormal (upstream's mean_seq_len)");
  workload_options.push_back(mean_option_);
  sigma_option_ = command.add_option("--sigma", flags_.workload.sigma,
                                     "Sigma of the lognormal");
  workload_options.push_back(sigma_option_);
  workload_options.push_back(
      command
          .add_option("--min-len", flags_.workload.min_len,
                      "Generated lengths are clipped up to this")
          ->type_name("N")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxSampleLen)));
  workload_options.push_back(
      command
          .add_option("--max-len", flags_.workload.max_len,
                      "Generated lengths are clipped down to this")
          ->type_name("N")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxSampleLen)));
  for (CLI::Option* option : workload_options) lengths->excludes(option);

  // The whole problem in one line: it excludes every flag above but the
  // cost profile, which measures the schedule and is no part of the problem.
  problem_option_ =
      command
          .add_option("--problem", flags_.problem_line,
                      "The whole problem as one line, e.g. 'G=12 mslpr=100 "
                      "min_cp=1 vpp=none samples=4:1,5:1' (io/problem_text.h; "
                      "what the conformance check and the property tests "
                      "print): G ranks (dp_balanced: dp G x cp 1), the "
                      "limits, and the samples as id:len")
          ->type_name("LINE");
  for (CLI::Option* option : problem_shape) problem_option_->excludes(option);
  for (CLI::Option* option : workload_options) problem_option_->excludes(option);
  AddCostProfileFlag(command, &flags_.cost_profile);
}

int ProblemFlags::BuildProblem(std::ostream& err,
                               SchedulingProblem* problem) const {
  if (problem_option_->count() > 0) return BuildFromLine(err, problem);
  RunParameters& parameters = problem->parameters;
  if (total_gpus_option_->count() > 0) {
    parameters.dp_size = flags_.total_gpus;
    parameters.cp_size = 1;
    parameters.cp_size_implied = true;
  } else {
    parameters.dp_size = flags_.dp_size;
    parameters.cp_size = flags_.cp_size;
  }
  parameters.max_seq_len_per_rank = flags_.max_seq_len_per_rank;
  parameters.min_cp_size = flags_.min_cp_size;
  parameters.vpp_group = IfGiven(vpp_option_, flags_.vpp_group);
  parameters.max_num_seqs = IfGiven(max_num_seqs_option_, flags_.max_num_seqs);
  if (absl::Status valid = ValidateRunParameters(parameters); !valid.ok()) {
    err << "dcpsched: " << WithFlagHint(valid.message(), parameters) << "\n";
    return kExitUsage;
  }
  if (total_gpus_option_->count() == 0) {
    NoteOneSidedTopology(*dp_option_, *cp_option_, parameters, err);
  }
  if (const int measured = BuildMeasure(err, problem); measured != kExitSuccess) {
    return measured;
  }
  return BuildSamples(err, problem);
}

int ProblemFlags::BuildFromLine(std::ostream& err,
                                SchedulingProblem* problem) const {
  absl::StatusOr<DynamicCpProblem> parsed = ParseProblem(flags_.problem_line);
  if (!parsed.ok()) {
    err << "dcpsched: --problem: " << parsed.status().message() << "\n";
    return kExitUsage;
  }
  RunParameters& parameters = problem->parameters;
  parameters.dp_size = parsed->options.total_gpus;
  parameters.cp_size = 1;
  parameters.cp_size_implied = true;
  parameters.max_seq_len_per_rank = parsed->options.max_seq_len_per_rank;
  parameters.min_cp_size = parsed->options.min_cp_size;
  parameters.vpp_group = parsed->options.vpp_group;
  parameters.max_num_seqs = parsed->options.max_num_seqs;
  if (absl::Status valid = ValidateRunParameters(parameters); !valid.ok()) {
    err << "dcpsched: --problem: " << valid.message() << "\n";
    return kExitUsage;
  }
  if (const int measured = BuildMeasure(err, problem); measured != kExitSuccess) {
    return measured;
  }
  problem->samples = std::move(parsed->samples);
  problem->workload_description = "problem line (--problem)";
  return kExitSuccess;
}

int ProblemFlags::BuildMeasure(std::ostream& err, SchedulingProblem* problem) const {
  if (const int loaded =
          LoadCostProfileFlag(flags_.cost_profile, err, &problem->cost_profile);
      loaded != kExitSuccess) {
    return loaded;
  }
  return runtime_flags_.Build(problem->parameters.total_gpus(), problem->parameters.vpp_group,
                              problem->cost_profile.has_value(), err, &problem->runtime);
}

int ProblemFlags::BuildSamples(std::ostream& err,
                               SchedulingProblem* problem) const {
  if (!flags_.lengths_file.empty()) {
    absl::StatusOr<std::vector<Sample>> samples =
        ReadLengthsFile(flags_.lengths_file);
    if (!samples.ok()) {
      err << "dcpsched: " << samples.status().message() << "\n";
      return kExitUsage;
    }
    if (samples->empty()) {
      err << "dcpsched: the lengths file " << flags_.lengths_file
          << " holds no sample (only blank lines and # comments): nothing "
             "to schedule; write one `len` or `id,len` per line\n";
      return kExitUsage;
    }
    problem->samples = *std::move(samples);
    problem->workload_description =
        absl::StrCat("lengths file ", flags_.lengths_file);
    return kExitSuccess;
  }
  LognormalWorkload workload = flags_.workload;
  if (flags_.preset == "skewed") {
    const LognormalWorkload skewed = SkewedDcpBenchmarkWorkload();
    if (mean_option_->count() == 0) workload.mean_len = skewed.mean_len;
    if (sigma_option_->count() == 0) workload.sigma = skewed.sigma;
  }
  absl::StatusOr<std::vector<Sample>> samples =
      GenerateLognormalWorkload(workload);
  if (!samples.ok()) {
    err << "dcpsched: " << samples.status().message()
        << " (set by --samples, --mean, --sigma, --min-len, --max-len)\n";
    return kExitUsage;
  }
  if (samples->empty()) {
    err << "dcpsched: note: --samples 0: the batch is empty, so the schedule "
           "has no microbatch and the figures are 0\n";
  }
  problem->samples = *std::move(samples);
  problem->workload_description = DescribeWorkload(workload);
  return kExitSuccess;
}

}  // namespace dcpsched

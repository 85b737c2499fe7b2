#include "io/problem_text.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "io/input_text.h"

namespace dcpsched {
namespace {

absl::StatusOr<std::int64_t> ParseInteger(absl::string_view field,
                                          absl::string_view text) {
  std::int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "problem text: ", field, " is ", QuotedInput(text),
        ", not a 64-bit integer"));
  }
  return value;
}

absl::StatusOr<std::vector<Sample>> ParseSamples(absl::string_view text) {
  std::vector<Sample> samples;
  if (text.empty()) return samples;
  for (const absl::string_view item : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "problem text: sample ", QuotedInput(item),
          " is not of the form id:len"));
    }
    absl::StatusOr<std::int64_t> id = ParseInteger("sample id", parts[0]);
    if (!id.ok()) return id.status();
    absl::StatusOr<std::int64_t> len = ParseInteger("sample len", parts[1]);
    if (!len.ok()) return len.status();
    samples.push_back(Sample{*id, *len});
  }
  return samples;
}

}  // namespace

std::string FormatProblem(const DynamicCpProblem& problem) {
  const DynamicCpOptions& options = problem.options;
  return absl::StrCat(
      "G=", options.total_gpus, " mslpr=", options.max_seq_len_per_rank,
      " min_cp=", options.min_cp_size, " vpp=",
      options.vpp_group ? absl::StrCat(*options.vpp_group) : "none",
      options.max_num_seqs ? absl::StrCat(" max_num_seqs=", *options.max_num_seqs)
                           : "",
      " samples=",
      absl::StrJoin(problem.samples, ",", [](std::string* out, const Sample& s) {
        absl::StrAppend(out, s.id, ":", s.len);
      }));
}

absl::StatusOr<DynamicCpProblem> ParseProblem(absl::string_view text) {
  if (text.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "problem text: holds a NUL byte; a problem line is text");
  }
  DynamicCpProblem problem;
  absl::flat_hash_set<std::string> seen;
  for (const absl::string_view field :
       absl::StrSplit(WithoutByteOrderMark(text), absl::ByAnyChar(" \t\r\n"),
                      absl::SkipEmpty())) {
    const std::vector<absl::string_view> key_value =
        absl::StrSplit(field, absl::MaxSplits('=', 1));
    if (key_value.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "problem text: ", QuotedInput(field),
          " is not of the form key=value"));
    }
    const absl::string_view key = key_value[0];
    const absl::string_view value = key_value[1];
    if (!seen.insert(std::string(key)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("problem text: ", QuotedInput(key), " is given twice"));
    }
    if (key == "samples") {
      absl::StatusOr<std::vector<Sample>> samples = ParseSamples(value);
      if (!samples.ok()) return samples.status();
      problem.samples = *std::move(samples);
      continue;
    }
    if ((key == "vpp" || key == "max_num_seqs") && value == "none") continue;
    absl::StatusOr<std::int64_t> number = ParseInteger(key, value);
    if (!number.ok()) return number.status();
    if (key == "G") {
      problem.options.total_gpus = *number;
    } else if (key == "mslpr") {
      problem.options.max_seq_len_per_rank = *number;
    } else if (key == "min_cp") {
      problem.options.min_cp_size = *number;
    } else if (key == "vpp") {
      problem.options.vpp_group = *number;
    } else if (key == "max_num_seqs") {
      problem.options.max_num_seqs = *number;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "problem text: unknown field ", QuotedInput(key),
          "; the fields are G, mslpr, min_cp, vpp, max_num_seqs and samples"));
    }
  }
  for (const char* required : {"G", "mslpr", "samples"}) {
    if (!seen.contains(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("problem text: field '", required, "' is missing"));
    }
  }
  return problem;
}

}  // namespace dcpsched

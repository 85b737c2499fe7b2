// Golden vectors: parsing one JSON line into a GoldenCase, and checking a case
// against the core.
//
// nlohmann-json reports errors by throwing; every call into it that can throw
// is inside ParseGoldenCase's try block, so no exception crosses the
// absl::Status API. The field readers below check types before converting, so
// in practice only the JSON parser itself throws.
//
// Debian's Abseil is built with its own absl::string_view (not an alias of
// std::string_view), so the helpers here take absl::string_view, which
// absl::StrCat accepts.

#include "io/golden.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/dp_balanced.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "io/json_document.h"
#include "io/json_value.h"
#include "io/input_text.h"
#include "nlohmann/json.hpp"

namespace dcpsched {
// This file's helpers, in a namespace of its own: io/ compiles as one unity
// translation unit, where other readers have helpers of the same names.
namespace golden_reader {
namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------
// Parsing. Every reader takes the JSON path of the value it reads
// ("samples[3][0]") so that its error names the field.

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("golden case field \"", EscapedInput(field), "\": ", what));
}


// The member `key` of `object`, or InvalidArgument if it is absent.
absl::StatusOr<const Json*> Member(const Json& object, absl::string_view path,
                                   absl::string_view key) {
  const std::string field =
      path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
  if (!object.is_object()) {
    return FieldError(path.empty() ? "<line>" : path,
                      absl::StrCat("not an object (", DescribeJsonValue(object), ")"));
  }
  const auto it = object.find(std::string(key));
  if (it == object.end()) return FieldError(field, "missing");
  return &*it;
}

// A JSON integer that fits in int64. Floats (even 5.0), strings, booleans and
// integers outside int64 (which nlohmann keeps as uint64 or as a float) are
// rejected.
absl::StatusOr<std::int64_t> ReadInt64(const Json& value,
                                       absl::string_view field) {
  if (const std::optional<std::int64_t> integer = JsonInt64(value)) return *integer;
  return FieldError(field, absl::StrCat("not an integer in int64 range (",
                                        DescribeJsonValue(value), ")"));
}

// A JSON number as a double. Floats are taken as parsed (nlohmann rounds
// correctly); an integer is accepted only if a double holds it exactly.
absl::StatusOr<double> ReadDouble(const Json& value, absl::string_view field) {
  if (value.is_number_float()) return value.get<double>();
  if (value.is_number_integer()) {
    const absl::StatusOr<std::int64_t> integer = ReadInt64(value, field);
    if (integer.ok()) {
      const auto as_double = static_cast<double>(*integer);
      // 2^63 is not an int64, so the round trip is only tried below it.
      if (std::abs(as_double) < 0x1p63 &&
          static_cast<std::int64_t>(as_double) == *integer) {
        return as_double;
      }
    }
  }
  return FieldError(field, absl::StrCat("not a number exactly representable "
                                        "as a double (",
                                        DescribeJsonValue(value), ")"));
}

absl::StatusOr<const Json*> ReadArray(const Json& value,
                                      absl::string_view field) {
  if (!value.is_array()) {
    return FieldError(field,
                      absl::StrCat("not an array (", DescribeJsonValue(value), ")"));
  }
  return &value;
}

absl::StatusOr<std::int64_t> IntMember(const Json& object,
                                       absl::string_view key) {
  absl::StatusOr<const Json*> value = Member(object, "", key);
  if (!value.ok()) return value.status();
  return ReadInt64(**value, key);
}

// A member that must be present and is either null or an integer.
absl::StatusOr<std::optional<std::int64_t>> OptionalIntMember(
    const Json& object, absl::string_view key) {
  absl::StatusOr<const Json*> value = Member(object, "", key);
  if (!value.ok()) return value.status();
  if ((*value)->is_null()) return std::optional<std::int64_t>();
  absl::StatusOr<std::int64_t> integer = ReadInt64(**value, key);
  if (!integer.ok()) {
    return FieldError(key, absl::StrCat("neither null nor an integer in int64 "
                                        "range (",
                                        DescribeJsonValue(**value), ")"));
  }
  return std::optional<std::int64_t>(*integer);
}

absl::StatusOr<std::string> StringMember(const Json& object,
                                         absl::string_view path,
                                         absl::string_view key) {
  absl::StatusOr<const Json*> value = Member(object, path, key);
  if (!value.ok()) return value.status();
  if (!(*value)->is_string()) {
    return FieldError(
        path.empty() ? std::string(key) : absl::StrCat(path, ".", key),
        absl::StrCat("not a string (", DescribeJsonValue(**value), ")"));
  }
  return (*value)->get<std::string>();
}

// A string member that must be one of `allowed`.
absl::StatusOr<std::string> EnumMember(
    const Json& object, absl::string_view key,
    absl::Span<const absl::string_view> allowed) {
  absl::StatusOr<std::string> value = StringMember(object, "", key);
  if (!value.ok()) return value.status();
  if (std::find(allowed.begin(), allowed.end(), *value) == allowed.end()) {
    return FieldError(key, absl::StrCat(QuotedInput(*value), " is not one of ",
                                        absl::StrJoin(allowed, ", ")));
  }
  return value;
}

// [[i0, i1, ...], ...]: per rank a list of integers.
absl::StatusOr<std::vector<std::vector<std::int64_t>>> ReadIntLists(
    const Json& value, absl::string_view field) {
  absl::StatusOr<const Json*> outer = ReadArray(value, field);
  if (!outer.ok()) return outer.status();
  std::vector<std::vector<std::int64_t>> lists;
  lists.reserve((*outer)->size());
  for (std::size_t i = 0; i < (*outer)->size(); ++i) {
    const std::string list_field = absl::StrCat(field, "[", i, "]");
    absl::StatusOr<const Json*> inner = ReadArray((**outer)[i], list_field);
    if (!inner.ok()) return inner.status();
    std::vector<std::int64_t>& list = lists.emplace_back();
    list.reserve((*inner)->size());
    for (std::size_t j = 0; j < (*inner)->size(); ++j) {
      absl::StatusOr<std::int64_t> integer =
          ReadInt64((**inner)[j], absl::StrCat(list_field, "[", j, "]"));
      if (!integer.ok()) return integer.status();
      list.push_back(*integer);
    }
  }
  return lists;
}

// [[id, len], ...].
absl::StatusOr<std::vector<Sample>> ReadSamples(const Json& value,
                                                absl::string_view field) {
  absl::StatusOr<const Json*> array = ReadArray(value, field);
  if (!array.ok()) return array.status();
  std::vector<Sample> samples;
  samples.reserve((*array)->size());
  for (std::size_t i = 0; i < (*array)->size(); ++i) {
    const Json& pair = (**array)[i];
    const std::string pair_field = absl::StrCat(field, "[", i, "]");
    if (!pair.is_array() || pair.size() != 2) {
      return FieldError(pair_field, absl::StrCat("not an [id, len] pair (",
                                                 DescribeJsonValue(pair), ")"));
    }
    absl::StatusOr<std::int64_t> id =
        ReadInt64(pair[0], absl::StrCat(pair_field, "[0] (id)"));
    if (!id.ok()) return id.status();
    absl::StatusOr<std::int64_t> len =
        ReadInt64(pair[1], absl::StrCat(pair_field, "[1] (len)"));
    if (!len.ok()) return len.status();
    samples.push_back(Sample{*id, *len});
  }
  return samples;
}

absl::StatusOr<std::vector<double>> ReadDoubles(const Json& value,
                                                absl::string_view field) {
  absl::StatusOr<const Json*> array = ReadArray(value, field);
  if (!array.ok()) return array.status();
  std::vector<double> doubles;
  doubles.reserve((*array)->size());
  for (std::size_t i = 0; i < (*array)->size(); ++i) {
    absl::StatusOr<double> number =
        ReadDouble((**array)[i], absl::StrCat(field, "[", i, "]"));
    if (!number.ok()) return number.status();
    doubles.push_back(*number);
  }
  return doubles;
}

// expect of an ok:true step case: micro_batches, sample_ids, exec_times and
// leftovers, all required.
absl::StatusOr<PackedMicrobatch> ReadExpectedStep(const Json& expect) {
  PackedMicrobatch step;
  absl::StatusOr<const Json*> field = Member(expect, "expect", "micro_batches");
  if (!field.ok()) return field.status();
  absl::StatusOr<std::vector<std::vector<std::int64_t>>> lens =
      ReadIntLists(**field, "expect.micro_batches");
  if (!lens.ok()) return lens.status();
  step.rank_lens = *std::move(lens);

  field = Member(expect, "expect", "sample_ids");
  if (!field.ok()) return field.status();
  absl::StatusOr<std::vector<std::vector<std::int64_t>>> ids =
      ReadIntLists(**field, "expect.sample_ids");
  if (!ids.ok()) return ids.status();
  step.microbatch.rank_ids = *std::move(ids);

  field = Member(expect, "expect", "exec_times");
  if (!field.ok()) return field.status();
  absl::StatusOr<std::vector<double>> times =
      ReadDoubles(**field, "expect.exec_times");
  if (!times.ok()) return times.status();
  step.rank_work = *std::move(times);

  field = Member(expect, "expect", "leftovers");
  if (!field.ok()) return field.status();
  absl::StatusOr<std::vector<Sample>> leftovers =
      ReadSamples(**field, "expect.leftovers");
  if (!leftovers.ok()) return leftovers.status();
  step.leftovers = *std::move(leftovers);
  return step;
}

// expect of an ok:true schedule case: groups, per microbatch per rank a list
// of ids.
absl::StatusOr<Schedule> ReadExpectedSchedule(const Json& expect) {
  absl::StatusOr<const Json*> groups = Member(expect, "expect", "groups");
  if (!groups.ok()) return groups.status();
  absl::StatusOr<const Json*> array = ReadArray(**groups, "expect.groups");
  if (!array.ok()) return array.status();
  Schedule schedule;
  schedule.microbatches.reserve((*array)->size());
  for (std::size_t i = 0; i < (*array)->size(); ++i) {
    absl::StatusOr<std::vector<std::vector<std::int64_t>>> rank_ids =
        ReadIntLists((**array)[i], absl::StrCat("expect.groups[", i, "]"));
    if (!rank_ids.ok()) return rank_ids.status();
    schedule.microbatches.push_back(Microbatch{*std::move(rank_ids)});
  }
  return schedule;
}

// Fills the expect_* members of `golden_case` from the "expect" object.
absl::Status ReadExpect(const Json& line, GoldenCase& golden_case) {
  absl::StatusOr<const Json*> expect = Member(line, "", "expect");
  if (!expect.ok()) return expect.status();
  if (!(*expect)->is_object()) {
    return FieldError("expect",
                      absl::StrCat("not an object (", DescribeJsonValue(**expect), ")"));
  }
  absl::StatusOr<const Json*> ok = Member(**expect, "expect", "ok");
  if (!ok.ok()) return ok.status();
  if (!(*ok)->is_boolean()) {
    return FieldError("expect.ok",
                      absl::StrCat("not a boolean (", DescribeJsonValue(**ok), ")"));
  }
  golden_case.expect_ok = (*ok)->get<bool>();
  if (!golden_case.expect_ok) {
    absl::StatusOr<std::string> error =
        StringMember(**expect, "expect", "error");
    if (!error.ok()) return error.status();
    golden_case.expect_error = *std::move(error);
    return absl::OkStatus();
  }
  if (golden_case.kind == "step") {
    absl::StatusOr<PackedMicrobatch> step = ReadExpectedStep(**expect);
    if (!step.ok()) return step.status();
    golden_case.expect_step = *std::move(step);
  } else {
    absl::StatusOr<Schedule> schedule = ReadExpectedSchedule(**expect);
    if (!schedule.ok()) return schedule.status();
    golden_case.expect_schedule = *std::move(schedule);
  }
  return absl::OkStatus();
}

// Reads the fields that describe the problem (everything but "expect").
absl::Status ReadProblem(const Json& line, GoldenCase& golden_case) {
  constexpr absl::string_view kKinds[] = {"step", "schedule"};
  constexpr absl::string_view kSchedulers[] = {"packing_aware", "legacy",
                                               "dp_balanced"};
  absl::StatusOr<std::string> text = StringMember(line, "", "name");
  if (!text.ok()) return text.status();
  golden_case.name = *std::move(text);
  text = EnumMember(line, "kind", kKinds);
  if (!text.ok()) return text.status();
  golden_case.kind = *std::move(text);
  text = EnumMember(line, "scheduler", kSchedulers);
  if (!text.ok()) return text.status();
  golden_case.scheduler = *std::move(text);
  if (golden_case.kind == "step" && golden_case.scheduler != "packing_aware") {
    return FieldError(
        "scheduler",
        absl::StrCat("kind \"step\" needs \"packing_aware\", not ",
                     QuotedInput(golden_case.scheduler)));
  }

  const std::pair<absl::string_view, std::int64_t*> int_fields[] = {
      {"total_gpus", &golden_case.total_gpus},
      {"dp_size", &golden_case.dp_size},
      {"cp_size", &golden_case.cp_size},
      {"max_seq_len_per_rank", &golden_case.max_seq_len_per_rank},
      {"min_cp_size", &golden_case.min_cp_size},
  };
  for (const auto& [key, destination] : int_fields) {
    absl::StatusOr<std::int64_t> value = IntMember(line, key);
    if (!value.ok()) return value.status();
    *destination = *value;
  }
  const std::pair<absl::string_view, std::optional<std::int64_t>*>
      optional_fields[] = {
          {"vpp_group", &golden_case.vpp_group},
          {"max_num_seqs", &golden_case.max_num_seqs},
      };
  for (const auto& [key, destination] : optional_fields) {
    absl::StatusOr<std::optional<std::int64_t>> value =
        OptionalIntMember(line, key);
    if (!value.ok()) return value.status();
    *destination = *value;
  }

  absl::StatusOr<const Json*> samples = Member(line, "", "samples");
  if (!samples.ok()) return samples.status();
  absl::StatusOr<std::vector<Sample>> parsed =
      ReadSamples(**samples, "samples");
  if (!parsed.ok()) return parsed.status();
  golden_case.samples = *std::move(parsed);
  return absl::OkStatus();
}

// The keys a golden case has; any other is an error, so that a misspelt key
// is not silently ignored.
constexpr absl::string_view kGoldenCaseKeys[] = {
    "name",        "kind",    "scheduler",  "total_gpus",
    "dp_size",     "cp_size", "max_seq_len_per_rank", "min_cp_size",
    "vpp_group",   "max_num_seqs", "samples", "expect"};

absl::Status CheckKnownKeys(const Json& line) {
  for (const auto& [key, value] : line.items()) {
    if (std::find(std::begin(kGoldenCaseKeys), std::end(kGoldenCaseKeys), key) ==
        std::end(kGoldenCaseKeys)) {
      return FieldError(absl::CHexEscape(key),
                        absl::StrCat("unknown key; a golden case has only ",
                                     absl::StrJoin(kGoldenCaseKeys, ", ")));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GoldenCase> ParseGoldenCaseOrThrow(absl::string_view json_line) {
  const absl::StatusOr<Json> parsed = ParseJsonDocument(json_line);
  if (!parsed.ok()) return parsed.status();
  const Json& line = *parsed;
  if (!line.is_object()) {
    return FieldError("<line>",
                      absl::StrCat("not a JSON object (", DescribeJsonValue(line), ")"));
  }
  if (absl::Status known = CheckKnownKeys(line); !known.ok()) return known;
  GoldenCase golden_case;
  absl::Status status = ReadProblem(line, golden_case);
  if (!status.ok()) return status;
  status = ReadExpect(line, golden_case);
  if (!status.ok()) return status;
  return golden_case;
}

// ---------------------------------------------------------------------------
// Comparison. Every mismatch is one line that says where the first difference
// is and shows a short excerpt of the expected and the actual value.

// Replaces line breaks so that a message stays on one line.
std::string OneLine(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"\r\n", " "}, {"\n", " "}, {"\r", " "}});
}

// The core's answer differs from upstream's: Internal, so that it cannot be
// mistaken for the core's own InvalidArgument / FailedPrecondition.
absl::Status Mismatch(absl::string_view what) {
  return absl::InternalError(OneLine(what));
}

std::string FormatElement(std::int64_t value) { return absl::StrCat(value); }
std::string FormatElement(const Sample& sample) {
  return absl::StrCat("[", sample.id, ",", sample.len, "]");
}

// Elements of `list` around index `at` (up to 3 before, 4 from it on), with
// "..." where elements are left out, and the total length:
// "[... 5,7,9,11 ...] (12 items)".
template <typename T>
std::string Excerpt(absl::Span<const T> list, std::size_t at) {
  constexpr std::size_t kBefore = 3;
  constexpr std::size_t kFrom = 4;
  const std::size_t begin = at > kBefore ? at - kBefore : 0;
  const std::size_t end = std::min(list.size(), at + kFrom);
  std::string text = "[";
  if (begin > 0) absl::StrAppend(&text, "... ");
  for (std::size_t i = begin; i < end; ++i) {
    absl::StrAppend(&text, i > begin ? "," : "", FormatElement(list[i]));
  }
  if (end < list.size()) absl::StrAppend(&text, " ...");
  absl::StrAppend(&text, "] (", list.size(), " items)");
  return text;
}

// Index of the first element where `expected` and `actual` differ (the
// shorter length when one is a prefix of the other), or nullopt if equal.
template <typename T>
std::optional<std::size_t> FirstDifference(absl::Span<const T> expected,
                                           absl::Span<const T> actual) {
  const std::size_t common = std::min(expected.size(), actual.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (!(expected[i] == actual[i])) return i;
  }
  if (expected.size() != actual.size()) return common;
  return std::nullopt;
}

// "<where>: <what> differ at index k: expected [...] got [...]", or OK.
template <typename T>
absl::Status CompareLists(absl::string_view where, absl::string_view what,
                          absl::Span<const T> expected,
                          absl::Span<const T> actual) {
  const std::optional<std::size_t> at = FirstDifference(expected, actual);
  if (!at.has_value()) return absl::OkStatus();
  return Mismatch(absl::StrCat(where, ": ", what, " differ at index ", *at,
                               ": expected ", Excerpt(expected, *at), " got ",
                               Excerpt(actual, *at)));
}

std::string FormatDouble(double value) {
  return absl::StrFormat("%.17g (0x%016x)", value,
                         std::bit_cast<std::uint64_t>(value));
}

// Compares one step rank by rank: ids, then lens, then work (bit for bit).
absl::Status CompareStep(const PackedMicrobatch& expected,
                         const PackedMicrobatch& actual) {
  const std::size_t ranks = expected.rank_lens.size();
  if (actual.rank_lens.size() != ranks ||
      actual.microbatch.rank_ids.size() != ranks ||
      actual.rank_work.size() != ranks ||
      expected.microbatch.rank_ids.size() != ranks ||
      expected.rank_work.size() != ranks) {
    return Mismatch(absl::StrCat(
        "step: rank count differs: expected ", ranks, " lens / ",
        expected.microbatch.rank_ids.size(), " id lists / ",
        expected.rank_work.size(), " exec times, got ", actual.rank_lens.size(),
        " / ", actual.microbatch.rank_ids.size(), " / ",
        actual.rank_work.size()));
  }
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    const std::string where = absl::StrCat("step rank ", rank);
    absl::Status status = CompareLists<std::int64_t>(
        where, "sample ids", expected.microbatch.rank_ids[rank],
        actual.microbatch.rank_ids[rank]);
    if (!status.ok()) return status;
    status = CompareLists<std::int64_t>(where, "lens", expected.rank_lens[rank],
                                        actual.rank_lens[rank]);
    if (!status.ok()) return status;
    const double expected_work = expected.rank_work[rank];
    const double actual_work = actual.rank_work[rank];
    if (std::bit_cast<std::uint64_t>(expected_work) !=
        std::bit_cast<std::uint64_t>(actual_work)) {
      return Mismatch(absl::StrCat(where, ": exec time differs: expected ",
                                   FormatDouble(expected_work), " got ",
                                   FormatDouble(actual_work)));
    }
  }
  return CompareLists<Sample>("step", "leftovers", expected.leftovers,
                              actual.leftovers);
}

// Compares two schedules: the first differing (microbatch, rank), then the
// widths, then the number of microbatches.
absl::Status CompareSchedules(const Schedule& expected,
                              const Schedule& actual) {
  const std::size_t expected_count = expected.microbatches.size();
  const std::size_t actual_count = actual.microbatches.size();
  const std::string counts = absl::StrCat(
      " (expected ", expected_count, " microbatches, got ", actual_count, ")");
  for (std::size_t i = 0; i < std::min(expected_count, actual_count); ++i) {
    const auto& expected_ranks = expected.microbatches[i].rank_ids;
    const auto& actual_ranks = actual.microbatches[i].rank_ids;
    for (std::size_t rank = 0;
         rank < std::min(expected_ranks.size(), actual_ranks.size()); ++rank) {
      const absl::Status status = CompareLists<std::int64_t>(
          absl::StrCat("microbatch ", i, " rank ", rank), "ids",
          expected_ranks[rank], actual_ranks[rank]);
      if (!status.ok()) return Mismatch(absl::StrCat(status.message(), counts));
    }
    if (expected_ranks.size() != actual_ranks.size()) {
      return Mismatch(absl::StrCat("microbatch ", i, ": expected ",
                                   expected_ranks.size(), " ranks, got ",
                                   actual_ranks.size(), counts));
    }
  }
  if (expected_count != actual_count) {
    return Mismatch(
        absl::StrCat("microbatch count differs: expected ", expected_count,
                     ", got ", actual_count, "; the first ",
                     std::min(expected_count, actual_count), " are equal"));
  }
  return absl::OkStatus();
}

// Runs the schedule the case names. dp_balanced gets the lens in input order.
absl::StatusOr<Schedule> RunSchedule(const GoldenCase& golden_case) {
  if (golden_case.scheduler == "packing_aware") {
    return ScheduleDynamicCp(golden_case.samples,
                             DynamicCpOptionsOf(golden_case));
  }
  if (golden_case.scheduler == "legacy") {
    return ScheduleLegacy(golden_case.samples, DynamicCpOptionsOf(golden_case));
  }
  if (golden_case.scheduler == "dp_balanced") {
    std::vector<std::int64_t> lens;
    lens.reserve(golden_case.samples.size());
    for (const Sample& sample : golden_case.samples) lens.push_back(sample.len);
    return ScheduleDpBalanced(lens, DpBalancedOptionsOf(golden_case));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown scheduler ", QuotedInput(golden_case.scheduler)));
}

// The verdict on a run that the golden case says must succeed (`expected`
// set) or fail. `summarize` describes a successful result for the message.
template <typename Result, typename Compare, typename Summarize>
absl::Status Judge(const GoldenCase& golden_case,
                   const absl::StatusOr<Result>& actual,
                   const std::optional<Result>& expected, Compare compare,
                   Summarize summarize) {
  if (!golden_case.expect_ok) {
    if (!actual.ok()) return absl::OkStatus();
    return Mismatch(absl::StrCat(
        "core accepted an input that upstream rejects "
        "(upstream: \"",
        golden_case.expect_error, "\"); core returned ", summarize(*actual)));
  }
  if (!expected.has_value()) {
    return absl::InvalidArgumentError(
        "golden case says ok:true but holds no expected result");
  }
  if (!actual.ok()) {
    return Mismatch(absl::StrCat("core failed where upstream succeeded: ",
                                 actual.status().ToString()));
  }
  return compare(*expected, *actual);
}

constexpr absl::string_view kUnrunnablePrefix =
    "upstream returns a schedule its runtime cannot run: invariant 11";

// A case whose expected schedule Megatron-LM's runtime cannot run: the core
// must reproduce upstream's schedule exactly (ScheduleDynamicCpAsUpstream,
// ScheduleLegacyAsUpstream) and refuse it where it schedules for a job.
absl::Status CheckUnrunnableCase(const GoldenCase& golden_case, const Schedule& expected) {
  const DynamicCpOptions options = DynamicCpOptionsOf(golden_case);
  const absl::StatusOr<CompactSchedule> as_upstream =
      golden_case.scheduler == "legacy"
          ? ScheduleLegacyAsUpstream(golden_case.samples, options)
          : ScheduleDynamicCpAsUpstream(golden_case.samples, options);
  if (!as_upstream.ok()) {
    return Mismatch(absl::StrCat("core failed where upstream returned a schedule: ",
                                 as_upstream.status().ToString()));
  }
  const absl::StatusOr<Schedule> expanded = ExpandSchedule(*as_upstream);
  if (!expanded.ok()) return Mismatch(expanded.status().message());
  if (absl::Status same = CompareSchedules(expected, *expanded); !same.ok()) return same;
  const absl::StatusOr<Schedule> refused = RunSchedule(golden_case);
  if (refused.ok()) {
    return Mismatch(
        "core returned upstream's schedule, which breaks invariant 11 (runtime groups), "
        "instead of refusing it");
  }
  if (refused.status().code() != absl::StatusCode::kFailedPrecondition ||
      !absl::StartsWith(refused.status().message(), kUnrunnablePrefix)) {
    return Mismatch(absl::StrCat("core refused upstream's unrunnable schedule with ",
                                 refused.status().ToString(), ", expected FailedPrecondition: ",
                                 kUnrunnablePrefix, " ..."));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace golden_reader

bool ExpectsUnrunnableSchedule(const GoldenCase& golden_case) {
  if (golden_case.kind != "schedule" || !golden_case.expect_ok ||
      !golden_case.expect_schedule.has_value() ||
      (golden_case.scheduler != "packing_aware" && golden_case.scheduler != "legacy")) {
    return false;
  }
  for (const Violation& violation : FindViolations(
           golden_case.samples, *golden_case.expect_schedule, DynamicCpOptionsOf(golden_case))) {
    if (violation.invariant == Invariant::kRuntimeGroups) return true;
  }
  return false;
}

absl::StatusOr<GoldenCase> ParseGoldenCase(std::string_view json_line) {
  try {
    return golden_reader::ParseGoldenCaseOrThrow(
        absl::string_view(json_line.data(), json_line.size()));
  } catch (const nlohmann::json::exception&) {
    // Every field is type-checked before it is read; this is a safety net
    // that keeps the library's text out of the message.
    return absl::InvalidArgumentError(
        "golden case cannot be read: a field has an unexpected type");
  }
}

DynamicCpOptions DynamicCpOptionsOf(const GoldenCase& golden_case) {
  return DynamicCpOptions{golden_case.total_gpus,
                          golden_case.max_seq_len_per_rank,
                          golden_case.min_cp_size, golden_case.vpp_group,
                          golden_case.max_num_seqs};
}

DpBalancedOptions DpBalancedOptionsOf(const GoldenCase& golden_case) {
  return DpBalancedOptions{golden_case.dp_size, golden_case.cp_size,
                           golden_case.max_seq_len_per_rank,
                           golden_case.max_num_seqs, golden_case.vpp_group};
}

absl::Status CheckGoldenCase(const GoldenCase& golden_case) {
  if (golden_case.kind == "step") {
    if (golden_case.scheduler != "packing_aware") {
      return absl::InvalidArgumentError(absl::StrCat(
          "kind \"step\" needs scheduler \"packing_aware\", not ",
          QuotedInput(golden_case.scheduler)));
    }
    const absl::StatusOr<PackedMicrobatch> actual =
        PackingAwareStep(golden_case.samples, DynamicCpOptionsOf(golden_case));
    return golden_reader::Judge(golden_case, actual, golden_case.expect_step,
                                golden_reader::CompareStep,
                                [](const PackedMicrobatch& step) {
                                  return absl::StrCat("a step over ", step.rank_lens.size(),
                                                      " ranks with ", step.leftovers.size(),
                                                      " leftovers");
                                });
  }
  if (golden_case.kind == "schedule") {
    if (ExpectsUnrunnableSchedule(golden_case)) {
      return golden_reader::CheckUnrunnableCase(golden_case, *golden_case.expect_schedule);
    }
    const absl::StatusOr<Schedule> actual = golden_reader::RunSchedule(golden_case);
    return golden_reader::Judge(golden_case, actual, golden_case.expect_schedule,
                                golden_reader::CompareSchedules,
                                [](const Schedule& schedule) {
                                  return absl::StrCat("a schedule of ",
                                                      schedule.microbatches.size(),
                                                      " microbatches");
                                });
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown kind ", QuotedInput(golden_case.kind)));
}

namespace golden_reader {
namespace {

// The case name of a line that did not parse, if it is JSON with a string
// "name"; else "?".
std::string NameOrUnknown(absl::string_view json_line) {
  try {
    const Json line = Json::parse(json_line.begin(), json_line.end(),
                                  /*cb=*/nullptr, /*allow_exceptions=*/false);
    if (line.is_object()) {
      const auto it = line.find("name");
      if (it != line.end() && it->is_string()) return it->get<std::string>();
    }
  } catch (const nlohmann::json::exception&) {
    // Not JSON at all: the name stays unknown.
  }
  return "?";
}

}  // namespace
}  // namespace golden_reader

absl::StatusOr<GoldenFileReport> CheckGoldenFile(const std::string& path) {
  std::ifstream opened;
  if (path != "-") {
    opened.open(path);
    if (!opened) {
      return absl::NotFoundError(
          absl::StrCat("cannot open golden file \"", path, "\""));
    }
  }
  std::istream& file = path == "-" ? std::cin : opened;
  GoldenFileReport report;
  std::string line;
  for (std::int64_t line_number = 1; std::getline(file, line); ++line_number) {
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    const absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase(line);
    const absl::Status status =
        golden_case.ok() ? CheckGoldenCase(*golden_case) : golden_case.status();
    if (status.ok()) {
      ++report.passed;
      if (ExpectsUnrunnableSchedule(*golden_case)) ++report.unrunnable;
      continue;
    }
    ++report.failed;
    const std::string name =
        golden_case.ok() ? golden_case->name : golden_reader::NameOrUnknown(line);
    report.failures.push_back(absl::StrCat(path, ":", line_number, " ", name,
                                           ": ", golden_reader::OneLine(status.message())));
  }
  if (file.bad()) {
    return absl::DataLossError(
        absl::StrCat("error while reading golden file \"", path, "\""));
  }
  return report;
}

}  // namespace dcpsched

// Schedule files (see the header). nlohmann-json reports errors by throwing;
// only its parser can throw here (every reader checks a value's type before
// converting it), and ParseScheduleFile catches that. The parser and the
// destructor of nlohmann-json 3.11 are iterative, so deep nesting cannot
// overflow the stack.

#include "io/schedule_file.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/compact_schedule.h"
#include "core/types.h"
#include "core/validate.h"
#include "io/json_document.h"
#include "io/json_value.h"
#include "io/schedule_json.h"
#include "io/input_text.h"
#include "nlohmann/json.hpp"

namespace dcpsched {
// This file's helpers, in a namespace of its own: io/ compiles as one unity
// translation unit, where other readers have helpers of the same names.
namespace schedule_file_reader {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kSeeDocs = " (see docs/schedule_json.md)";

// Keys form 1 may have; anything else is an error.
constexpr absl::string_view kScheduleFileKeys[] = {
    "format",    "scheduler", "description", "total_gpus",
    "max_seq_len_per_rank", "min_cp_size", "vpp_group", "max_num_seqs",
    "samples", "groups"};

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("field \"", EscapedInput(field), "\": ", what));
}


std::string Child(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

std::string Element(absl::string_view path, std::size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

// The member `key` of `object`, or nullptr if it is absent.
const Json* FindMember(const Json& object, absl::string_view key) {
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

absl::StatusOr<const Json*> RequiredMember(const Json& object,
                                           absl::string_view path,
                                           absl::string_view key) {
  const Json* member = FindMember(object, key);
  if (member == nullptr) {
    return FieldError(Child(path, key), absl::StrCat("missing", kSeeDocs));
  }
  return member;
}

absl::Status ExpectObject(const Json& value, absl::string_view path) {
  if (value.is_object()) return absl::OkStatus();
  return FieldError(path.empty() ? "<document>" : path,
                    absl::StrCat("not a JSON object (", DescribeJsonValue(value), ")"));
}

absl::Status ExpectArray(const Json& value, absl::string_view field,
                         absl::string_view what) {
  if (value.is_array()) return absl::OkStatus();
  return FieldError(field, absl::StrCat("not an array (", DescribeJsonValue(value),
                                        "); it must be ", what));
}

// A JSON integer that fits in int64. Floats (even 5.0), strings, booleans
// and integers outside int64 are rejected.
absl::StatusOr<std::int64_t> ReadInt64(const Json& value,
                                       absl::string_view field) {
  if (const std::optional<std::int64_t> integer = JsonInt64(value)) return *integer;
  return FieldError(field, absl::StrCat("not an integer in int64 range (",
                                        DescribeJsonValue(value), ")"));
}

absl::StatusOr<std::int64_t> RequiredInt(const Json& object,
                                         absl::string_view path,
                                         absl::string_view key) {
  absl::StatusOr<const Json*> member = RequiredMember(object, path, key);
  if (!member.ok()) return member.status();
  return ReadInt64(**member, Child(path, key));
}

// An optional integer member: absent or null gives `absent`.
absl::StatusOr<std::optional<std::int64_t>> OptionalInt(
    const Json& object, absl::string_view path, absl::string_view key,
    std::optional<std::int64_t> absent) {
  const Json* member = FindMember(object, key);
  if (member == nullptr || member->is_null()) return absent;
  absl::StatusOr<std::int64_t> value = ReadInt64(*member, Child(path, key));
  if (!value.ok()) {
    return FieldError(Child(path, key),
                      absl::StrCat("neither null nor an integer (",
                                   DescribeJsonValue(*member), ")"));
  }
  return std::optional<std::int64_t>(*value);
}

// An optional string member: absent gives "".
absl::StatusOr<std::string> OptionalString(const Json& object,
                                           absl::string_view path,
                                           absl::string_view key) {
  const Json* member = FindMember(object, key);
  if (member == nullptr) return std::string();
  if (!member->is_string()) {
    return FieldError(Child(path, key),
                      absl::StrCat("not a string (", DescribeJsonValue(*member), ")"));
  }
  return member->get<std::string>();
}

// [[id, len], ...], every len in [1, 2^26].
absl::StatusOr<std::vector<Sample>> ReadSamples(const Json& value,
                                                absl::string_view field) {
  if (absl::Status array = ExpectArray(value, field, "a list of [id, len]");
      !array.ok()) {
    return array;
  }
  std::vector<Sample> samples;
  samples.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const Json& pair = value[i];
    const std::string pair_field = Element(field, i);
    if (!pair.is_array() || pair.size() != 2) {
      return FieldError(pair_field,
                        absl::StrCat("not an [id, len] pair (",
                                     pair.is_array()
                                         ? absl::StrCat("got an array of ",
                                                        pair.size())
                                         : DescribeJsonValue(pair),
                                     ")"));
    }
    absl::StatusOr<std::int64_t> id =
        ReadInt64(pair[0], absl::StrCat(pair_field, "[0] (id)"));
    if (!id.ok()) return id.status();
    absl::StatusOr<std::int64_t> len =
        ReadInt64(pair[1], absl::StrCat(pair_field, "[1] (len)"));
    if (!len.ok()) return len.status();
    if (*len < 1 || *len > kMaxSampleLen) {
      return FieldError(
          absl::StrCat(pair_field, "[1] (len)"),
          absl::StrCat("length ", *len, " of sample ", *id,
                       *len < 1 ? " is not positive" : " is too long",
                       "; a sample has 1 to ", kMaxSampleLen, " tokens"));
    }
    samples.push_back(Sample{*id, *len});
  }
  return samples;
}

// [[[id, ...] per rank] per microbatch].
absl::StatusOr<Schedule> ReadGroups(const Json& value,
                                    absl::string_view field) {
  if (absl::Status array = ExpectArray(
          value, field, "a list of microbatches, each a list of ranks, each "
                        "a list of sample ids");
      !array.ok()) {
    return array;
  }
  Schedule schedule;
  schedule.microbatches.reserve(value.size());
  for (std::size_t m = 0; m < value.size(); ++m) {
    const std::string microbatch_field = Element(field, m);
    const Json& ranks = value[m];
    if (absl::Status array =
            ExpectArray(ranks, microbatch_field,
                        "a microbatch: one list of sample ids per rank");
        !array.ok()) {
      return array;
    }
    Microbatch& microbatch = schedule.microbatches.emplace_back();
    microbatch.rank_ids.reserve(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const std::string rank_field = Element(microbatch_field, r);
      const Json& ids = ranks[r];
      if (absl::Status array = ExpectArray(
              ids, rank_field, "the list of sample ids this rank holds");
          !array.ok()) {
        return array;
      }
      std::vector<SampleId>& rank = microbatch.rank_ids.emplace_back();
      rank.reserve(ids.size());
      for (std::size_t i = 0; i < ids.size(); ++i) {
        absl::StatusOr<std::int64_t> id =
            ReadInt64(ids[i], absl::StrCat(Element(rank_field, i), " (id)"));
        if (!id.ok()) return id.status();
        rank.push_back(*id);
      }
    }
  }
  return schedule;
}

// A CP group {"first_rank": r, "size": c, "ids": [...]} of the compact
// form. Whether the groups tile their microbatch is checked once they are
// all read.
absl::StatusOr<CpGroupIds> ReadCpGroup(const Json& value,
                                       absl::string_view field) {
  if (absl::Status object = ExpectObject(value, field); !object.ok()) {
    return object;
  }
  CpGroupIds group;
  absl::StatusOr<std::int64_t> number = RequiredInt(value, field, "first_rank");
  if (!number.ok()) return number.status();
  group.first_rank = *number;
  number = RequiredInt(value, field, "size");
  if (!number.ok()) return number.status();
  group.size = *number;
  absl::StatusOr<const Json*> ids = RequiredMember(value, field, "ids");
  if (!ids.ok()) return ids.status();
  const std::string ids_field = Child(field, "ids");
  if (absl::Status array =
          ExpectArray(**ids, ids_field, "the list of sample ids the group holds");
      !array.ok()) {
    return array;
  }
  group.ids.reserve((*ids)->size());
  for (std::size_t i = 0; i < (*ids)->size(); ++i) {
    absl::StatusOr<std::int64_t> id =
        ReadInt64((**ids)[i], absl::StrCat(Element(ids_field, i), " (id)"));
    if (!id.ok()) return id.status();
    group.ids.push_back(*id);
  }
  return group;
}

// OK if the groups of microbatch `index` tile its ranks (MicrobatchWidth)
// and it has at most kMaxTotalGpus of them, so that it can be expanded.
absl::Status CheckCompactMicrobatch(const CompactMicrobatch& microbatch,
                                    std::size_t index,
                                    absl::string_view groups_field) {
  const absl::StatusOr<std::int64_t> width = MicrobatchWidth(microbatch, index);
  if (!width.ok()) return FieldError(groups_field, width.status().message());
  if (*width > kMaxTotalGpus) {
    return FieldError(groups_field,
                      absl::StrCat("the groups cover ", *width,
                                   " ranks; a microbatch has at most ",
                                   kMaxTotalGpus));
  }
  return absl::OkStatus();
}

// The compact form's "microbatches": per microbatch its "cp_groups", which
// tile its ranks. What else a microbatch holds (its load) is ignored.
absl::StatusOr<CompactSchedule> ReadCompactMicrobatches(
    const Json& value, absl::string_view field) {
  if (absl::Status array = ExpectArray(
          value, field, "a list of microbatches, each {\"cp_groups\": [...]}");
      !array.ok()) {
    return array;
  }
  CompactSchedule schedule;
  schedule.microbatches.reserve(value.size());
  for (std::size_t m = 0; m < value.size(); ++m) {
    const std::string microbatch_field = Element(field, m);
    if (absl::Status object = ExpectObject(value[m], microbatch_field);
        !object.ok()) {
      return object;
    }
    absl::StatusOr<const Json*> groups =
        RequiredMember(value[m], microbatch_field, "cp_groups");
    if (!groups.ok()) return groups.status();
    const std::string groups_field = Child(microbatch_field, "cp_groups");
    if (absl::Status array = ExpectArray(
            **groups, groups_field,
            "the microbatch's CP groups in rank order, tiling its ranks");
        !array.ok()) {
      return array;
    }
    CompactMicrobatch& microbatch = schedule.microbatches.emplace_back();
    microbatch.groups.reserve((*groups)->size());
    for (std::size_t g = 0; g < (*groups)->size(); ++g) {
      absl::StatusOr<CpGroupIds> group =
          ReadCpGroup((**groups)[g], Element(groups_field, g));
      if (!group.ok()) return group.status();
      microbatch.groups.push_back(*std::move(group));
    }
    if (absl::Status tiled =
            CheckCompactMicrobatch(microbatch, m, groups_field);
        !tiled.ok()) {
      return tiled;
    }
  }
  return schedule;
}

absl::Status ReadSamplesInto(const Json& document, ScheduleFile& file) {
  absl::StatusOr<const Json*> member =
      RequiredMember(document, "", "samples");
  if (!member.ok()) return member.status();
  absl::StatusOr<std::vector<Sample>> samples = ReadSamples(**member, "samples");
  if (!samples.ok()) return samples.status();
  file.samples = *std::move(samples);
  return absl::OkStatus();
}

// "samples" and the schedule: per rank ("groups", kept in compact form) or
// compact ("microbatches").
absl::Status ReadSamplesAndSchedule(const Json& document, ScheduleForm form,
                                    ScheduleFile& file) {
  if (absl::Status samples = ReadSamplesInto(document, file); !samples.ok()) {
    return samples;
  }
  if (form == ScheduleForm::kCompact) {
    absl::StatusOr<const Json*> member =
        RequiredMember(document, "", "microbatches");
    if (!member.ok()) return member.status();
    absl::StatusOr<CompactSchedule> schedule =
        ReadCompactMicrobatches(**member, "microbatches");
    if (!schedule.ok()) return schedule.status();
    file.schedule = *std::move(schedule);
    return absl::OkStatus();
  }
  absl::StatusOr<const Json*> member = RequiredMember(document, "", "groups");
  if (!member.ok()) return member.status();
  absl::StatusOr<Schedule> schedule = ReadGroups(**member, "groups");
  if (!schedule.ok()) return schedule.status();
  file.schedule = CompactFromRanks(*schedule);
  return absl::OkStatus();
}

// G, max_seq_len_per_rank, min_cp_size, vpp_group and max_num_seqs from
// `object` (the document in form 1, "parameters" in forms 2 and 3).
absl::Status ReadOptions(const Json& object, absl::string_view path,
                         DynamicCpOptions& options) {
  absl::StatusOr<std::int64_t> total_gpus =
      RequiredInt(object, path, "total_gpus");
  if (!total_gpus.ok()) return total_gpus.status();
  absl::StatusOr<std::int64_t> budget =
      RequiredInt(object, path, "max_seq_len_per_rank");
  if (!budget.ok()) return budget.status();
  absl::StatusOr<std::optional<std::int64_t>> min_cp =
      OptionalInt(object, path, "min_cp_size", 1);
  if (!min_cp.ok()) return min_cp.status();
  absl::StatusOr<std::optional<std::int64_t>> vpp =
      OptionalInt(object, path, "vpp_group", std::nullopt);
  if (!vpp.ok()) return vpp.status();
  absl::StatusOr<std::optional<std::int64_t>> max_num_seqs =
      OptionalInt(object, path, "max_num_seqs", std::nullopt);
  if (!max_num_seqs.ok()) return max_num_seqs.status();
  options.total_gpus = *total_gpus;
  options.max_seq_len_per_rank = *budget;
  options.min_cp_size = **min_cp;
  options.vpp_group = *vpp;
  options.max_num_seqs = *max_num_seqs;
  return absl::OkStatus();
}

absl::StatusOr<ScheduleFile> ReadScheduleForm(const Json& document) {
  for (const auto& [key, value] : document.items()) {
    if (std::find(std::begin(kScheduleFileKeys), std::end(kScheduleFileKeys),
                  key) == std::end(kScheduleFileKeys)) {
      return FieldError(key, absl::StrCat("unknown key; a ", kScheduleFileFormat,
                                          " document has only ",
                                          absl::StrJoin(kScheduleFileKeys, ", "),
                                          kSeeDocs));
    }
  }
  ScheduleFile file;
  file.format = kScheduleFileFormat;
  absl::StatusOr<std::string> text = OptionalString(document, "", "scheduler");
  if (!text.ok()) return text.status();
  file.scheduler = *std::move(text);
  text = OptionalString(document, "", "description");
  if (!text.ok()) return text.status();
  file.description = *std::move(text);
  if (absl::Status options = ReadOptions(document, "", file.options);
      !options.ok()) {
    return options;
  }
  if (absl::Status read =
          ReadSamplesAndSchedule(document, ScheduleForm::kPerRank, file);
      !read.ok()) {
    return read;
  }
  return file;
}

// A run document, "dcpsched.schedule_run.v1" (per rank) or ".v2" (compact).
absl::StatusOr<ScheduleFile> ReadRunForm(const Json& document,
                                         ScheduleForm form) {
  ScheduleFile file;
  file.format = form == ScheduleForm::kCompact ? kCompactScheduleRunFormat
                                               : kScheduleRunFormat;
  absl::StatusOr<std::string> text = OptionalString(document, "", "scheduler");
  if (!text.ok()) return text.status();
  file.scheduler = *std::move(text);

  const Json* ok = FindMember(document, "ok");
  if (ok != nullptr && ok->is_boolean() && !ok->get<bool>()) {
    const Json* error = FindMember(document, "error");
    return absl::InvalidArgumentError(absl::StrCat(
        "this ", file.format, " document records a failed run (\"ok\": "
        "false",
        error != nullptr && error->is_string()
            ? absl::StrCat(", error: ", error->get<std::string>())
            : "",
        "); it holds no schedule to verify"));
  }
  if (const Json* workload = FindMember(document, "workload");
      workload != nullptr && workload->is_object()) {
    text = OptionalString(*workload, "workload", "description");
    if (!text.ok()) return text.status();
    file.description = *std::move(text);
  }
  absl::StatusOr<const Json*> parameters =
      RequiredMember(document, "", "parameters");
  if (!parameters.ok()) return parameters.status();
  if (absl::Status object = ExpectObject(**parameters, "parameters");
      !object.ok()) {
    return object;
  }
  if (absl::Status options =
          ReadOptions(**parameters, "parameters", file.options);
      !options.ok()) {
    return options;
  }
  if (absl::Status read = ReadSamplesAndSchedule(document, form, file);
      !read.ok()) {
    return read;
  }
  return file;
}

absl::StatusOr<ScheduleFile> ReadDocument(const Json& document) {
  if (absl::Status object = ExpectObject(document, ""); !object.ok()) {
    return object;
  }
  absl::StatusOr<std::string> format = OptionalString(document, "", "format");
  if (!format.ok()) return format.status();
  absl::StatusOr<ScheduleFile> file;
  if (format->empty() || *format == kScheduleFileFormat) {
    file = ReadScheduleForm(document);
  } else if (*format == kScheduleRunFormat) {
    file = ReadRunForm(document, ScheduleForm::kPerRank);
  } else if (*format == kCompactScheduleRunFormat) {
    file = ReadRunForm(document, ScheduleForm::kCompact);
  } else {
    return FieldError(
        "format", absl::StrCat("unknown format ", QuotedInput(*format), "; use \"",
                               kScheduleFileFormat, "\", \"", kScheduleRunFormat,
                               "\" or \"", kCompactScheduleRunFormat, "\"",
                               kSeeDocs));
  }
  if (!file.ok()) return file;
  if (absl::Status valid = ValidateDynamicCpProblem(file->samples,
                                                    file->options);
      !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the problem is not valid: ", valid.message()));
  }
  return file;
}

}  // namespace
}  // namespace schedule_file_reader

absl::StatusOr<ScheduleFile> ParseScheduleFile(absl::string_view contents) {
  if (absl::StripAsciiWhitespace(contents).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "empty input; a schedule file holds one JSON object", schedule_file_reader::kSeeDocs));
  }
  const absl::StatusOr<nlohmann::json> document = ParseJsonDocument(contents);
  if (!document.ok()) return document.status();
  return schedule_file_reader::ReadDocument(*document);
}

absl::StatusOr<ScheduleFile> ReadScheduleFile(const std::string& path) {
  std::ostringstream contents;
  if (path == "-") {
    contents << std::cin.rdbuf();
  } else {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", path, "\" is a directory; give the path of a schedule file"));
    }
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      return absl::NotFoundError(
          absl::StrCat("cannot open schedule file \"", path,
                       "\"; check the path and its permissions"));
    }
    contents << file.rdbuf();
    if (file.bad()) {
      return absl::DataLossError(
          absl::StrCat("error while reading schedule file \"", path, "\""));
    }
  }
  absl::StatusOr<ScheduleFile> parsed = ParseScheduleFile(contents.str());
  if (!parsed.ok()) {
    const std::string name = path == "-" ? "<stdin>" : path;
    return absl::Status(parsed.status().code(),
                        absl::StrCat(name, ": ", parsed.status().message()));
  }
  return parsed;
}

std::string FormatScheduleFile(const ScheduleFile& file) {
  nlohmann::json samples = nlohmann::json::array();
  for (const Sample& sample : file.samples) {
    samples.push_back(nlohmann::json::array({sample.id, sample.len}));
  }
  nlohmann::json groups = PerRankGroupsToJson(file.schedule);
  nlohmann::json document{
      {"format", kScheduleFileFormat},
      {"total_gpus", file.options.total_gpus},
      {"max_seq_len_per_rank", file.options.max_seq_len_per_rank},
      {"min_cp_size", file.options.min_cp_size},
      {"vpp_group", file.options.vpp_group.has_value()
                        ? nlohmann::json(*file.options.vpp_group)
                        : nlohmann::json(nullptr)},
      {"samples", std::move(samples)},
      {"groups", std::move(groups)},
  };
  if (file.options.max_num_seqs.has_value()) {
    document["max_num_seqs"] = *file.options.max_num_seqs;
  }
  if (!file.scheduler.empty()) document["scheduler"] = file.scheduler;
  if (!file.description.empty()) document["description"] = file.description;
  return document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace dcpsched

#include "io/cost_profile_file.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/cost_profile.h"
#include "io/json_document.h"
#include "io/json_value.h"
#include "io/shipped_profiles.h"
#include "nlohmann/json.hpp"

namespace dcpsched {
// This file's helpers, in a namespace of its own: io/ compiles as one unity
// translation unit, where other readers have helpers of the same names.
namespace cost_profile_reader {
namespace {

using Json = nlohmann::json;

// A value for a message: a string quoted (cut at 64 bytes, bad UTF-8
// replaced), a number or boolean as written, anything else by its type.
std::string Shown(const Json& value) {
  if (value.is_number() || value.is_boolean()) return value.dump();
  if (!value.is_string()) return std::string("a JSON ") + value.type_name();
  std::string text = value.get<std::string>();
  if (text.size() > 64) text = text.substr(0, 64) + "...";
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("cost profile: ", field, " ", problem));
}

// The member `key` of object `parent` (named `field`), or an error when it
// is missing.
absl::StatusOr<const Json*> Member(const Json& parent, absl::string_view field,
                                   const char* key) {
  const auto it = parent.find(key);
  if (it == parent.end()) {
    return FieldError(absl::StrCat(field, field.empty() ? "" : ".", key),
                      "is missing; see docs/cost_model.md for the schema");
  }
  return &*it;
}

absl::StatusOr<const Json*> ObjectMember(const Json& parent,
                                         absl::string_view field,
                                         const char* key) {
  absl::StatusOr<const Json*> member = Member(parent, field, key);
  if (member.ok() && !(*member)->is_object()) {
    return FieldError(absl::StrCat(field, field.empty() ? "" : ".", key),
                      absl::StrCat("must be an object, ",
                                   DescribeJsonValue(**member)));
  }
  return member;
}

// An optional string member; "" when absent or null.
absl::StatusOr<std::string> OptionalString(const Json& parent,
                                           absl::string_view field,
                                           const char* key) {
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return FieldError(absl::StrCat(field, field.empty() ? "" : ".", key),
                      absl::StrCat("must be a string, ", DescribeJsonValue(*it)));
  }
  return it->get<std::string>();
}

// "name" of the optional object `key` ("device", "model"), or "".
absl::StatusOr<std::string> OptionalObjectName(const Json& document,
                                               const char* key) {
  const auto it = document.find(key);
  if (it == document.end() || it->is_null()) return std::string();
  if (!it->is_object()) {
    return FieldError(key, absl::StrCat("must be an object, ", DescribeJsonValue(*it)));
  }
  return OptionalString(*it, key, "name");
}

absl::StatusOr<MeasuredCurve> ReadCurve(const Json& parent,
                                        const std::string& field,
                                        const char* sizes_key) {
  absl::StatusOr<const Json*> sizes = Member(parent, field, sizes_key);
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<const Json*> seconds = Member(parent, field, "seconds");
  if (!seconds.ok()) return seconds.status();
  const std::string sizes_field = absl::StrCat(field, ".", sizes_key);
  const std::string seconds_field = absl::StrCat(field, ".seconds");
  if (!(*sizes)->is_array()) {
    return FieldError(sizes_field, absl::StrCat("must be an array of integers, ",
                                                DescribeJsonValue(**sizes)));
  }
  if (!(*seconds)->is_array()) {
    return FieldError(seconds_field, absl::StrCat("must be an array of numbers, ",
                                                  DescribeJsonValue(**seconds)));
  }
  MeasuredCurve curve;
  for (std::size_t i = 0; i < (*sizes)->size(); ++i) {
    const std::optional<std::int64_t> size = JsonInt64((**sizes)[i]);
    if (!size.has_value()) {
      return FieldError(absl::StrCat(sizes_field, "[", i, "]"),
                        absl::StrCat("must be an integer, ",
                                     DescribeJsonValue((**sizes)[i])));
    }
    curve.sizes.push_back(*size);
  }
  for (std::size_t i = 0; i < (*seconds)->size(); ++i) {
    const Json& value = (**seconds)[i];
    if (!value.is_number()) {
      return FieldError(absl::StrCat(seconds_field, "[", i, "]"),
                        absl::StrCat("must be a number, ", DescribeJsonValue(value)));
    }
    curve.seconds.push_back(value.get<double>());
  }
  return curve;
}

absl::StatusOr<double> Number(const Json& parent, const char* key) {
  absl::StatusOr<const Json*> member = Member(parent, "communication", key);
  if (!member.ok()) return member.status();
  if (!(*member)->is_number()) {
    return FieldError(absl::StrCat("communication.", key),
                      absl::StrCat("must be a number, ", DescribeJsonValue(**member)));
  }
  return (*member)->get<double>();
}

absl::StatusOr<std::optional<CommunicationModel>> ReadCommunication(
    const Json& document) {
  const auto it = document.find("communication");
  if (it == document.end() || it->is_null()) {
    return std::optional<CommunicationModel>();
  }
  if (!it->is_object()) {
    return FieldError("communication",
                      absl::StrCat("must be null or an object, ", DescribeJsonValue(*it)));
  }
  CommunicationModel model;
  absl::StatusOr<const Json*> gpus = Member(*it, "communication", "gpus_per_node");
  if (!gpus.ok()) return gpus.status();
  const std::optional<std::int64_t> gpus_per_node = JsonInt64(**gpus);
  if (!gpus_per_node.has_value()) {
    return FieldError("communication.gpus_per_node",
                      absl::StrCat("must be an integer, ", DescribeJsonValue(**gpus)));
  }
  model.gpus_per_node = *gpus_per_node;
  absl::StatusOr<double> intra = Number(*it, "intra_node_gb_per_s");
  if (!intra.ok()) return intra.status();
  absl::StatusOr<double> inter = Number(*it, "inter_node_gb_per_s");
  if (!inter.ok()) return inter.status();
  absl::StatusOr<double> kv_bytes = Number(*it, "kv_bytes_per_token");
  if (!kv_bytes.ok()) return kv_bytes.status();
  model.intra_node_gb_per_s = *intra;
  model.inter_node_gb_per_s = *inter;
  model.kv_bytes_per_token = *kv_bytes;
  return std::optional<CommunicationModel>(model);
}

absl::Status CheckSchema(const Json& document) {
  absl::StatusOr<const Json*> schema = Member(document, "", "schema");
  if (!schema.ok()) return schema.status();
  if (!(*schema)->is_string() || (*schema)->get<std::string>() != kCostProfileSchema) {
    return FieldError("schema", absl::StrCat("is ", Shown(**schema), "; this dcpsched reads \"",
                                             kCostProfileSchema, "\""));
  }
  const auto interpolation = document.find("interpolation");
  if (interpolation != document.end() &&
      !(interpolation->is_string() && interpolation->get<std::string>() == "log-log")) {
    return FieldError("interpolation", absl::StrCat("is ", Shown(*interpolation),
                                                    "; the only rule is \"log-log\""));
  }
  return absl::OkStatus();
}

// The profile `document` describes, before ValidateCostProfile.
absl::StatusOr<CostProfile> ReadProfile(const Json& document) {
  if (!document.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost profile: the document must be a JSON object, ", DescribeJsonValue(document)));
  }
  if (absl::Status schema = CheckSchema(document); !schema.ok()) return schema;
  CostProfile profile;
  absl::StatusOr<const Json*> name = Member(document, "", "name");
  if (!name.ok()) return name.status();
  if (!(*name)->is_string() || (*name)->get<std::string>().empty()) {
    return FieldError("name", absl::StrCat("must be a non-empty string, ",
                                           DescribeJsonValue(**name)));
  }
  profile.name = (*name)->get<std::string>();
  absl::StatusOr<std::string> description = OptionalString(document, "", "description");
  if (!description.ok()) return description.status();
  profile.description = *std::move(description);
  absl::StatusOr<std::string> device = OptionalObjectName(document, "device");
  if (!device.ok()) return device.status();
  profile.device = *std::move(device);
  absl::StatusOr<std::string> model = OptionalObjectName(document, "model");
  if (!model.ok()) return model.status();
  profile.model = *std::move(model);

  absl::StatusOr<const Json*> attention = ObjectMember(document, "", "attention");
  if (!attention.ok()) return attention.status();
  absl::StatusOr<const Json*> causal = ObjectMember(**attention, "attention", "causal");
  if (!causal.ok()) return causal.status();
  absl::StatusOr<const Json*> full = ObjectMember(**attention, "attention", "full");
  if (!full.ok()) return full.status();
  absl::StatusOr<const Json*> rest = ObjectMember(document, "", "non_attention");
  if (!rest.ok()) return rest.status();
  absl::StatusOr<MeasuredCurve> causal_curve = ReadCurve(**causal, "attention.causal", "lengths");
  if (!causal_curve.ok()) return causal_curve.status();
  absl::StatusOr<MeasuredCurve> full_curve = ReadCurve(**full, "attention.full", "lengths");
  if (!full_curve.ok()) return full_curve.status();
  absl::StatusOr<MeasuredCurve> rest_curve = ReadCurve(**rest, "non_attention", "tokens");
  if (!rest_curve.ok()) return rest_curve.status();
  profile.causal_attention = *std::move(causal_curve);
  profile.full_attention = *std::move(full_curve);
  profile.non_attention = *std::move(rest_curve);

  absl::StatusOr<std::optional<CommunicationModel>> communication =
      ReadCommunication(document);
  if (!communication.ok()) return communication.status();
  profile.communication = *communication;
  return profile;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", path, "\" is a directory; give the path of a cost profile file"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(absl::StrCat(
        "no shipped cost profile is named \"", path,
        "\" and no file has that path; give one of ",
        absl::StrJoin(ShippedCostProfileNames(), ", "),
        " or the path of a profile file (docs/cost_model.md)"));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) {
    return absl::DataLossError(
        absl::StrCat("error while reading cost profile \"", path, "\""));
  }
  return contents.str();
}

}  // namespace
}  // namespace cost_profile_reader

absl::StatusOr<CostProfile> ParseCostProfile(absl::string_view contents) {
  absl::StatusOr<nlohmann::json> document = ParseJsonDocument(contents);
  if (!document.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost profile: ", document.status().message()));
  }
  absl::StatusOr<CostProfile> profile = cost_profile_reader::ReadProfile(*document);
  if (!profile.ok()) return profile.status();
  if (absl::Status valid = ValidateCostProfile(*profile); !valid.ok()) return valid;
  return profile;
}

std::vector<std::string> ShippedCostProfileNames() {
  std::vector<std::string> names;
  for (const ShippedProfile& shipped : ShippedProfiles()) {
    names.emplace_back(shipped.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<CostProfile> LoadCostProfile(const std::string& name_or_path) {
  for (const ShippedProfile& shipped : ShippedProfiles()) {
    if (shipped.name == name_or_path) {
      absl::StatusOr<CostProfile> profile = ParseCostProfile(shipped.json);
      if (!profile.ok()) {
        return absl::InternalError(absl::StrCat(
            "shipped cost profile ", shipped.name, ": ", profile.status().message()));
      }
      return profile;
    }
  }
  absl::StatusOr<std::string> contents = cost_profile_reader::ReadFile(name_or_path);
  if (!contents.ok()) return contents.status();
  absl::StatusOr<CostProfile> profile = ParseCostProfile(*contents);
  if (!profile.ok()) {
    return absl::Status(profile.status().code(),
                        absl::StrCat(name_or_path, ": ", profile.status().message()));
  }
  return profile;
}

}  // namespace dcpsched

// Reading cost profiles (core/cost_profile.h) from JSON, by file or by the
// name of a profile shipped with dcpsched (profiles/*.json, embedded in the
// program at build time, so a name works from any directory).
//
// Schema "dcpsched.cost_profile.v1" (docs/cost_model.md describes it):
//   {
//     "schema": "dcpsched.cost_profile.v1",
//     "name": "h200-llama3-8b",
//     "description": "one line",                        -- optional
//     "device": {"name": "NVIDIA H200", ...},           -- optional
//     "model": {"name": "llama3-8b", ...},              -- optional
//     "interpolation": "log-log",                       -- optional
//     "attention": {"causal": {"lengths": [...], "seconds": [...]},
//                   "full":   {"lengths": [...], "seconds": [...]}},
//     "non_attention": {"tokens": [...], "seconds": [...]},
//     "communication": null | {"gpus_per_node": 8,
//                              "intra_node_gb_per_s": 400.0,
//                              "inter_node_gb_per_s": 50.0,
//                              "kv_bytes_per_token": 2048},  -- optional
//     ...
//   }
// Lengths and tokens are strictly increasing positive integers up to 2^40;
// seconds are finite numbers from 1e-12 to 1e6; every table is non-empty and
// has one time per size (ValidateCostProfile, core/cost_profile.h).
// Any other key ("software", "dtype", "passes", "validation",
// "provenance", or one a later version adds) is allowed and ignored, so a
// newer profile still reads; "interpolation", when present, must be
// "log-log", the only rule there is.
//
// Every error is InvalidArgument (NotFound for a file that cannot be
// opened or a name that is neither shipped nor a file) and names the field
// as a path, e.g. "cost profile: attention.causal.seconds[3] is -1; every
// time must be a finite number > 0".

#ifndef DCPSCHED_IO_COST_PROFILE_FILE_H_
#define DCPSCHED_IO_COST_PROFILE_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/cost_profile.h"

namespace dcpsched {

// The value of "schema" this reader accepts.
inline constexpr char kCostProfileSchema[] = "dcpsched.cost_profile.v1";

// Parses one profile document; the result is valid (ValidateCostProfile).
absl::StatusOr<CostProfile> ParseCostProfile(absl::string_view contents);

// The names of the shipped profiles, sorted.
std::vector<std::string> ShippedCostProfileNames();

// A shipped profile by name, or else the profile in the file at
// `name_or_path`. NotFound, listing the shipped names, when it is neither;
// parse errors of a file are prefixed with its path.
absl::StatusOr<CostProfile> LoadCostProfile(const std::string& name_or_path);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_COST_PROFILE_FILE_H_

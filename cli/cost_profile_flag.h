// --cost-profile NAME|FILE, shared by `dcpsched schedule`, `compare` and
// `verify`: measure schedules in GPU seconds by a cost profile
// (docs/cost_model.md), one shipped with dcpsched by name (h200-llama3-8b,
// ...) or one in a JSON file by path.

#ifndef DCPSCHED_CLI_COST_PROFILE_FLAG_H_
#define DCPSCHED_CLI_COST_PROFILE_FLAG_H_

#include <optional>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "core/cost_profile.h"

namespace dcpsched {

// Registers --cost-profile on `command`, storing its value in `*value`,
// which must outlive the parse.
void AddCostProfileFlag(CLI::App& command, std::string* value);

// The profile `value` names, into `*profile` (left unset for an empty
// value). Returns kExitSuccess, or writes one error line (naming the bad
// field of a malformed profile, or listing the shipped names for an unknown
// one) to `err` and returns kExitUsage.
int LoadCostProfileFlag(const std::string& value, std::ostream& err,
                        std::optional<CostProfile>* profile);

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_COST_PROFILE_FLAG_H_

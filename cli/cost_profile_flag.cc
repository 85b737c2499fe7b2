#include "cli/cost_profile_flag.h"

#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/exit_codes.h"
#include "core/cost_profile.h"
#include "io/cost_profile_file.h"

namespace dcpsched {

void AddCostProfileFlag(CLI::App& command, std::string* value) {
  command
      .add_option(
          "--cost-profile", *value,
          absl::StrCat("Also measure in GPU seconds by this cost profile: "
                       "step time, its lower bound and GPU efficiency "
                       "(docs/cost_model.md). A shipped one by name (",
                       absl::StrJoin(ShippedCostProfileNames(), ", "),
                       ") or a profile JSON file by path"))
      ->type_name("NAME|FILE");
}

int LoadCostProfileFlag(const std::string& value, std::ostream& err,
                        std::optional<CostProfile>* profile) {
  if (value.empty()) return kExitSuccess;
  absl::StatusOr<CostProfile> loaded = LoadCostProfile(value);
  if (!loaded.ok()) {
    err << "dcpsched: --cost-profile: " << loaded.status().message() << "\n";
    return kExitUsage;
  }
  *profile = *std::move(loaded);
  return kExitSuccess;
}

}  // namespace dcpsched

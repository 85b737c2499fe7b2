// The cost profiles shipped with dcpsched: the files profiles/*.json of the
// source tree, embedded in the program when it is built (CMake generates
// the definition of ShippedProfiles from them, cmake/EmbedProfiles.cmake),
// so `--cost-profile h200-llama3-8b` works from any directory and an
// installed program needs no data files. Read them with LoadCostProfile
// (io/cost_profile_file.h).

#ifndef DCPSCHED_IO_SHIPPED_PROFILES_H_
#define DCPSCHED_IO_SHIPPED_PROFILES_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace dcpsched {

// One embedded file: its name (the file name without ".json") and its text.
struct ShippedProfile {
  absl::string_view name;
  absl::string_view json;
};

// Every shipped profile, in file-name order.
absl::Span<const ShippedProfile> ShippedProfiles();

}  // namespace dcpsched

#endif  // DCPSCHED_IO_SHIPPED_PROFILES_H_

#include "core/schedule_loop.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/vpp_align.h"

namespace dcpsched {

std::vector<Sample> SortedLongestFirst(absl::Span<const Sample> samples) {
  std::vector<Sample> sorted(samples.begin(), samples.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Sample& a, const Sample& b) { return a.len > b.len; });
  return sorted;
}

absl::StatusOr<CompactSchedule> ScheduleBySteps(absl::Span<const Sample> samples,
                                                const DynamicCpOptions& options,
                                                absl::string_view scheduler,
                                                StepFunction step) {
  CompactSchedule schedule;
  std::vector<Sample> remaining = SortedLongestFirst(samples);
  while (!remaining.empty()) {
    absl::StatusOr<CompactStep> built = step(remaining);
    if (!built.ok()) return built.status();
    if (built->leftovers.size() >= remaining.size()) {
      return absl::InternalError(absl::StrCat(
          scheduler, " step placed no sample; this cannot happen for validated input"));
    }
    schedule.microbatches.push_back(std::move(built->microbatch));
    remaining = std::move(built->leftovers);
  }
  if (options.vpp_group.has_value() && *options.vpp_group > 1) {
    return AlignToVppGroup(std::move(schedule), *options.vpp_group);
  }
  return schedule;
}

}  // namespace dcpsched

// Schedules a small batch through the installed library and prints the
// microbatch count and the checker's verdict, exactly:
//   dcpsched consumer: 2 microbatches, valid
// Four 100-token samples on G = 2 ranks of 100 tokens: two per microbatch.

#include <iostream>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/checker.h"
#include "core/packing_aware.h"
#include "core/types.h"

int main() {
  dcpsched::DynamicCpOptions options;
  options.total_gpus = 2;
  options.max_seq_len_per_rank = 100;
  const std::vector<dcpsched::Sample> batch = {
      {0, 100}, {1, 100}, {2, 100}, {3, 100}};

  const absl::StatusOr<dcpsched::Schedule> schedule =
      dcpsched::ScheduleDynamicCp(batch, options);
  if (!schedule.ok()) {
    std::cerr << "dcpsched consumer: " << schedule.status().message() << "\n";
    return 1;
  }
  const absl::Status verdict =
      dcpsched::CheckSchedule(batch, *schedule, options);
  std::cout << "dcpsched consumer: " << schedule->microbatches.size()
            << " microbatches, "
            << (verdict.ok() ? "valid" : std::string(verdict.message()))
            << "\n";
  return verdict.ok() ? 0 : 1;
}

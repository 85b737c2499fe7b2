// Scheduling problems shared by the input/output tests.

#ifndef DCPSCHED_TESTS_TEST_PROBLEMS_H_
#define DCPSCHED_TESTS_TEST_PROBLEMS_H_

#include "io/schedule_run.h"

namespace dcpsched {

// Five samples of mixed lengths on 2 x 2 ranks, mslpr 256: the packing-aware
// schedule has several microbatches and CP groups of sizes 1 and 2.
inline SchedulingProblem FiveSamplesOnFourRanks() {
  SchedulingProblem problem;
  problem.workload_description = "real";
  problem.samples = {{10, 300}, {11, 50}, {12, 120}, {13, 90}, {14, 700}};
  problem.parameters.dp_size = 2;
  problem.parameters.cp_size = 2;
  problem.parameters.max_seq_len_per_rank = 256;
  return problem;
}

}  // namespace dcpsched

#endif  // DCPSCHED_TESTS_TEST_PROBLEMS_H_

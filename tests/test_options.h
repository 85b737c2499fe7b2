// Shorthands shared by the unit tests.

#ifndef DCPSCHED_TESTS_TEST_OPTIONS_H_
#define DCPSCHED_TESTS_TEST_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace dcpsched {

// Dynamic-CP options with no VPP group.
inline DynamicCpOptions Options(std::int64_t total_gpus, std::int64_t mslpr,
                                std::int64_t min_cp_size = 1) {
  DynamicCpOptions options;
  options.total_gpus = total_gpus;
  options.max_seq_len_per_rank = mslpr;
  options.min_cp_size = min_cp_size;
  return options;
}

// A microbatch's per-rank id lists, as literals in expectations.
using RankLists = std::vector<std::vector<SampleId>>;

}  // namespace dcpsched

#endif  // DCPSCHED_TESTS_TEST_OPTIONS_H_

// Properties of invariant 11, the CP groups Megatron-LM's runtime has
// (core/runtime_groups.h): the schedulers reproduce upstream's schedule
// exactly and refuse it where the runtime cannot run it, at every G (odd and
// non-power-of-two G included); and the checker's reading of the rule
// agrees with the exhaustive oracle's, on every placement it ranks best.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/runtime_groups.h"
#include "core/types.h"
#include "oracle/reference_definitions.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::runtime_groups_properties {
namespace {

RC_GTEST_PROP(RuntimeGroupsProperties, PackingAwareRefusesExactlyTheUnrunnable, ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenValidProblem(), /*legacy=*/false));
}

RC_GTEST_PROP(RuntimeGroupsProperties, PackingAwareOnMixedSizesRefusesExactlyTheUnrunnable,
              ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenMixedCpSizeProblem(), /*legacy=*/false));
}

RC_GTEST_PROP(RuntimeGroupsProperties, LegacyRefusesExactlyTheUnrunnable, ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenMixedCpSizeProblem(), /*legacy=*/true));
}

RC_GTEST_PROP(RuntimeGroupsProperties, TieProneRefusesExactlyTheUnrunnable, ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenTieProneProblem(), /*legacy=*/false));
}

// The core's reading of the runtime's groups against the reference
// definitions (written from upstream's loops), at any G up to 4096, any
// min_cp_size, any CP size and any rank, out-of-range ones included.
RC_GTEST_PROP(RuntimeGroupsProperties, RuntimeGroupOfMatchesTheReferenceDefinitions, ()) {
  const std::int64_t total = *rc::gen::weightedOneOf<std::int64_t>(
      {{3, rc::gen::inRange<std::int64_t>(1, 65)},
       {1, rc::gen::inRange<std::int64_t>(1, 4097)}});
  const std::int64_t widest = std::int64_t{1} << (std::bit_width(
                                  static_cast<std::uint64_t>(total)) - 1);
  const int widest_exponent =
      static_cast<int>(std::bit_width(static_cast<std::uint64_t>(widest))) - 1;
  const std::int64_t min_cp = std::int64_t{1} << *rc::gen::inRange(0, widest_exponent + 1);
  DynamicCpOptions options;
  options.total_gpus = total;
  options.max_seq_len_per_rank = 1;
  options.min_cp_size = min_cp;
  const std::int64_t cp = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(1, total + 3),
                                          rc::gen::just(total), rc::gen::just(widest));
  const std::int64_t rank = *rc::gen::inRange<std::int64_t>(-2, total + 3);
  const std::optional<RankBlock> block = RuntimeGroupOf(rank, cp, options);
  const std::optional<std::vector<std::int64_t>> expected =
      oracle::RuntimeGroupRanks(rank, cp, total, min_cp);
  RC_ASSERT(block.has_value() == expected.has_value());
  const std::vector<std::int64_t> created = oracle::RuntimeCreatedSizes(total, min_cp);
  RC_ASSERT(RuntimeHasGroupSize(cp, options) ==
            (cp == total || std::find(created.begin(), created.end(), cp) != created.end()));
  if (!block.has_value()) return;
  std::vector<std::int64_t> ranks;
  for (std::int64_t r = block->first_rank; r < block->first_rank + block->size; ++r) {
    ranks.push_back(r);
  }
  RC_ASSERT(ranks == *expected);
}

RC_GTEST_PROP(RuntimeGroupsProperties, TheExhaustiveOracleAgreesWithTheChecker, ()) {
  RC_ASSERT_OK(CheckRuntimeOptimumAgreesWithChecker(*GenExhaustiveProblem()));
}

}  // namespace
}  // namespace dcpsched::properties::runtime_groups_properties

#include "core/pipeline_order.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::pipeline_order_test {
namespace {

using ::testing::HasSubstr;

// The order in Megatron-LM's signed notation (convert_schedule_table_to_order):
// +k is the forward of chunk k - 1, -k its backward.
std::vector<std::int64_t> Signed(const std::vector<StageOp>& order) {
  std::vector<std::int64_t> out;
  for (const StageOp& op : order) out.push_back(op.forward ? op.chunk + 1 : -(op.chunk + 1));
  return out;
}

// Microbatch ids in order, forwards as m and backwards as ~m.
std::vector<std::int64_t> Microbatches(const std::vector<StageOp>& order) {
  std::vector<std::int64_t> out;
  for (const StageOp& op : order) out.push_back(op.forward ? op.microbatch : ~op.microbatch);
  return out;
}

TEST(PipelineStageOrderTest, WithoutPipeliningEachForwardIsFollowedByItsBackward) {
  EXPECT_EQ(Microbatches(PipelineStageOrder({.stages = 1}, 3, 0)),
            (std::vector<std::int64_t>{0, ~0, 1, ~1, 2, ~2}));
}

TEST(PipelineStageOrderTest, OneFOneBWarmsUpByTheStagesBehind) {
  const PipelineShape shape{.stages = 4};
  // Stage 0 of 4: three warm-up forwards, three 1F1B pairs, three backwards.
  EXPECT_EQ(Microbatches(PipelineStageOrder(shape, 6, 0)),
            (std::vector<std::int64_t>{0, 1, 2, 3, ~0, 4, ~1, 5, ~2, ~3, ~4, ~5}));
  // The last stage has no warm-up.
  EXPECT_EQ(Microbatches(PipelineStageOrder(shape, 3, 3)),
            (std::vector<std::int64_t>{0, ~0, 1, ~1, 2, ~2}));
  // More stages behind than microbatches: all forwards, then all backwards.
  EXPECT_EQ(Microbatches(PipelineStageOrder(shape, 2, 0)),
            (std::vector<std::int64_t>{0, 1, ~0, ~1}));
}

// Upstream's own example (schedules.py, convert_schedule_table_to_order's
// docstring): PP 2, N 3, M 5, VP 2, with 5 warm-ups, which pipeline rank 0
// has ((2 - 0 - 1) * 2 + (2 - 1) * 3).
TEST(PipelineStageOrderTest, InterleavedOrderIsUpstreamsDocstringExample) {
  const std::vector<StageOp> order =
      PipelineStageOrder({.stages = 2, .virtual_stages = 2, .microbatch_group_size = 3}, 5, 0);
  EXPECT_EQ(Signed(order), (std::vector<std::int64_t>{1, 1, 1, 2, 2, 2, -2, 1, -2, 1, -2, 2,
                                                      -1, 2, -1, -1, -2, -2, -1, -1}));
  // Table microbatch ids 0 1 2 0 1 2 3 4 3 4, for the forwards and the
  // backwards alike.
  std::vector<std::int64_t> forwards;
  std::vector<std::int64_t> backwards;
  for (const StageOp& op : order) (op.forward ? forwards : backwards).push_back(op.microbatch);
  const std::vector<std::int64_t> table{0, 1, 2, 0, 1, 2, 3, 4, 3, 4};
  EXPECT_EQ(forwards, table);
  EXPECT_EQ(backwards, table);
}

TEST(PipelineStageOrderTest, GroupSizeDefaultsToThePipelineSize) {
  const std::vector<StageOp> unset = PipelineStageOrder({.stages = 2, .virtual_stages = 2}, 4, 1);
  const std::vector<StageOp> two =
      PipelineStageOrder({.stages = 2, .virtual_stages = 2, .microbatch_group_size = 2}, 4, 1);
  EXPECT_EQ(Signed(unset), Signed(two));
  EXPECT_EQ(Microbatches(unset), Microbatches(two));
}

TEST(CheckPipelineShapeTest, AcceptsWhatMegatronRuns) {
  EXPECT_TRUE(CheckPipelineShape({.stages = 1}, 0).ok());
  EXPECT_TRUE(CheckPipelineShape({.stages = 4}, 1).ok());
  EXPECT_TRUE(CheckPipelineShape({.stages = 4, .virtual_stages = 4}, 8).ok());
  // A last group of 0 < 6 mod 4 = 2 < P = 2 is not refused: 2 >= P.
  EXPECT_TRUE(CheckPipelineShape({.stages = 2, .virtual_stages = 2, .microbatch_group_size = 4}, 6).ok());
}

void ExpectRefused(const PipelineShape& shape, std::int64_t microbatches, const std::string& says) {
  const absl::Status status = CheckPipelineShape(shape, microbatches);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(says));
}

TEST(CheckPipelineShapeTest, RefusesWhatMegatronRefuses) {
  ExpectRefused({.stages = 0}, 1, "give --pp 1 or more");
  ExpectRefused({.stages = 2, .virtual_stages = 0}, 1, "give --virtual-stages 1 or more");
  ExpectRefused({.stages = 1, .virtual_stages = 2}, 4, "needs a pipeline");
  ExpectRefused({.stages = 2}, -1, "a step has 0 or more");
  ExpectRefused({.stages = 2, .microbatch_group_size = -1}, 4, "give 1 or more");
  // N > M, and N < P.
  ExpectRefused({.stages = 4, .virtual_stages = 2}, 3, "ValueError");
  ExpectRefused({.stages = 4, .virtual_stages = 2, .microbatch_group_size = 2}, 8, "ValueError");
  // 9 in groups of 4 leaves 1 < P = 4.
  ExpectRefused({.stages = 4, .virtual_stages = 2}, 9, "leaves a last group of 1");
}

}  // namespace
}  // namespace dcpsched::pipeline_order_test

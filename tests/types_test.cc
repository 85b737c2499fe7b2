// The value types' comparisons: equal exactly when every member is equal.
// Tests, properties and the parsers' round trips compare these types, so a
// comparison that ignored a member would hide a difference there.

#include "core/types.h"

#include "gtest/gtest.h"
#include "tests/test_options.h"

namespace dcpsched::types_test {
namespace {

TEST(SampleTest, EqualWhenIdAndLengthAreEqual) {
  EXPECT_EQ((Sample{3, 100}), (Sample{3, 100}));
  EXPECT_NE((Sample{3, 100}), (Sample{4, 100}));
  EXPECT_NE((Sample{3, 100}), (Sample{3, 101}));
}

TEST(DynamicCpOptionsTest, EachMemberTakesPartInEquality) {
  DynamicCpOptions base = Options(8, 2048, 2);
  base.vpp_group = 4;
  EXPECT_EQ(base, base);

  DynamicCpOptions other = base;
  other.total_gpus = 16;
  EXPECT_NE(base, other);
  other = base;
  other.max_seq_len_per_rank = 1024;
  EXPECT_NE(base, other);
  other = base;
  other.min_cp_size = 1;
  EXPECT_NE(base, other);
  other = base;
  other.vpp_group = 2;
  EXPECT_NE(base, other);
  other.vpp_group.reset();
  EXPECT_NE(base, other);
  other = base;
  other.max_num_seqs = 3;
  EXPECT_NE(base, other);
}

TEST(DynamicCpProblemTest, EqualWhenSamplesAndOptionsAreEqual) {
  const DynamicCpProblem base{{{0, 10}, {1, 20}}, Options(2, 16)};
  EXPECT_EQ(base, base);

  DynamicCpProblem other = base;
  other.samples.pop_back();
  EXPECT_NE(base, other);
  other = base;
  other.samples[1].len = 21;
  EXPECT_NE(base, other);
  other = base;
  other.options.max_seq_len_per_rank = 32;
  EXPECT_NE(base, other);
}

TEST(PackedMicrobatchTest, EachMemberTakesPartInEquality) {
  PackedMicrobatch base;
  base.rank_lens = {{10}, {20}};
  base.microbatch.rank_ids = {{0}, {1}};
  base.rank_work = {100.0, 400.0};
  base.leftovers = {{2, 30}};
  EXPECT_EQ(base, base);

  PackedMicrobatch other = base;
  other.rank_lens[1] = {21};
  EXPECT_NE(base, other);
  other = base;
  other.microbatch.rank_ids[1] = {2};
  EXPECT_NE(base, other);
  other = base;
  other.rank_work[0] = 101.0;
  EXPECT_NE(base, other);
  other = base;
  other.leftovers.clear();
  EXPECT_NE(base, other);
}

}  // namespace
}  // namespace dcpsched::types_test

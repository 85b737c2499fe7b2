// Tests of properties/problem_enumerator.h: the sets' text, the lengths of
// one mslpr, the count, the order, and the parts.

#include "properties/problem_enumerator.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/problem_text.h"

namespace dcpsched::properties::problem_enumerator_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

EnumerationSets Sets(const std::string& text) {
  absl::StatusOr<EnumerationSets> sets = ParseEnumerationSets(text);
  EXPECT_TRUE(sets.ok()) << sets.status();
  return sets.ok() ? *sets : EnumerationSets{};
}

std::vector<std::string> Lines(const EnumerationSets& sets, std::int64_t part = 1,
                               std::int64_t parts = 1) {
  std::vector<std::string> lines;
  ForEachProblem(sets, part, parts, [&](std::int64_t, const DynamicCpProblem& problem) {
    lines.push_back(FormatProblem(problem));
  });
  return lines;
}

TEST(ParseEnumerationSetsTest, ReadsEveryField) {
  const EnumerationSets sets =
      Sets("G=1..3,6 n=0,2 lens=1,m-1,2m+1,4m mslpr=4 min_cp=1,2 vpp=none,2 max_num_seqs=none,1");
  EXPECT_THAT(sets.total_gpus, ElementsAre(1, 2, 3, 6));
  EXPECT_THAT(sets.sample_counts, ElementsAre(0, 2));
  EXPECT_THAT(sets.lengths, ElementsAre(LengthTerm{0, 1}, LengthTerm{1, -1}, LengthTerm{2, 1},
                                        LengthTerm{4, 0}));
  EXPECT_THAT(sets.max_seq_len_per_rank, ElementsAre(4));
  EXPECT_THAT(sets.min_cp_sizes, ElementsAre(1, 2));
  EXPECT_THAT(sets.vpp_groups, ElementsAre(std::nullopt, 2));
  EXPECT_THAT(sets.max_num_seqs, ElementsAre(std::nullopt, 1));
}

TEST(ParseEnumerationSetsTest, FormatReadsBack) {
  for (const absl::string_view text :
       {kTestCommandSets, kSanitizedTestCommandSets, kNightlySets}) {
    const EnumerationSets sets = Sets(std::string(text));
    EXPECT_EQ(Sets(FormatEnumerationSets(sets)), sets) << text;
  }
}

TEST(ParseEnumerationSetsTest, RefusesWhatItCannotRead) {
  const std::string rest = " lens=1 mslpr=4 min_cp=1 vpp=none max_num_seqs=none";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"n=1" + rest, "G: missing"},
      {"G=1 G=2 n=1" + rest, "G: given twice"},
      {"G=1 n=1 k=2" + rest, "unknown field 'k=2'"},
      {"G=0 n=1" + rest, "G: 0 is outside [1, 65536]"},
      {"G=1,1 n=1" + rest, "G: 1 is listed twice"},
      {"G=3..1 n=1" + rest, "the range 3..1 is empty"},
      {"G=1 n=13" + rest, "n: 13 is outside [0, 12]"},
      {"G=1 n=1 lens=1 mslpr=4 min_cp=3 vpp=none max_num_seqs=none", "not a power of two"},
      {"G=1 n=1 lens=1 mslpr=4 min_cp=1 vpp=0 max_num_seqs=none", "vpp: 0 is not 'none'"},
      {"G=none n=1" + rest, "G: 'none' is not allowed here"},
      {"G=1 n=1 lens=x mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "not c, km, km+c"},
      {"G=1 n=1 lens=m,1m mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "1m is listed twice"},
      {"G=1 n=1 lens= mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "lens: an empty list"},
      {"G=1..60000 n=12 lens=1,2,3,4,5,6,7,8,9 mslpr=4 min_cp=1 vpp=none max_num_seqs=none",
       "more than 1099511627776 problems"},
  };
  for (const auto& [text, why] : cases) {
    const absl::StatusOr<EnumerationSets> sets = ParseEnumerationSets(text);
    EXPECT_EQ(sets.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(sets.status().message(), HasSubstr(why)) << text;
  }
}

TEST(LengthsForTest, DropsRepeatsAndOutOfRangeInOrder) {
  const EnumerationSets sets =
      Sets("G=1 n=1 lens=1,m-1,m,m+1,2m-1,2m,4m,-5 mslpr=1,2 min_cp=1 vpp=none "
           "max_num_seqs=none");
  EXPECT_THAT(LengthsFor(sets, 2), ElementsAre(1, 2, 3, 4, 8));  // m-1 = 1, 2m-1 = 3 = m+1
  EXPECT_THAT(LengthsFor(sets, 1), ElementsAre(1, 2, 4));        // m-1 = 0 dropped
}

TEST(ForEachProblemTest, EverySequenceInOrderWithIdsByPosition) {
  const EnumerationSets sets =
      Sets("G=2 n=0..2 lens=1,m mslpr=3 min_cp=1 vpp=none max_num_seqs=none");
  EXPECT_THAT(Lines(sets),
              ElementsAre("G=2 mslpr=3 min_cp=1 vpp=none samples=",
                          "G=2 mslpr=3 min_cp=1 vpp=none samples=0:1",
                          "G=2 mslpr=3 min_cp=1 vpp=none samples=0:3",
                          "G=2 mslpr=3 min_cp=1 vpp=none samples=0:1,1:1",
                          "G=2 mslpr=3 min_cp=1 vpp=none samples=0:1,1:3",
                          "G=2 mslpr=3 min_cp=1 vpp=none samples=0:3,1:1",
                          "G=2 mslpr=3 min_cp=1 vpp=none samples=0:3,1:3"));
}

TEST(ForEachProblemTest, OptionsVaryOutsideTheSamplesInTheOrderWritten) {
  const EnumerationSets sets =
      Sets("G=4,1 n=1 lens=1 mslpr=5 min_cp=2,1 vpp=2,none max_num_seqs=none,1");
  const std::vector<std::string> lines = Lines(sets);
  ASSERT_EQ(lines.size(), 16u);
  EXPECT_EQ(lines[0], "G=4 mslpr=5 min_cp=2 vpp=2 samples=0:1");
  EXPECT_EQ(lines[1], "G=4 mslpr=5 min_cp=2 vpp=2 max_num_seqs=1 samples=0:1");
  EXPECT_EQ(lines[2], "G=4 mslpr=5 min_cp=2 vpp=none samples=0:1");
  EXPECT_EQ(lines[4], "G=4 mslpr=5 min_cp=1 vpp=2 samples=0:1");
  // min_cp 2 > G = 1 is enumerated too (its refusal is an outcome).
  EXPECT_EQ(lines[8], "G=1 mslpr=5 min_cp=2 vpp=2 samples=0:1");
}

TEST(CountProblemsTest, EqualsTheProblemsVisitedAndAllAreDistinct) {
  for (const std::string& text :
       {std::string("G=1..5 n=0..3 lens=1,m-1,m,m+1,2m mslpr=1,2,3 min_cp=1,2 vpp=none,3 "
                    "max_num_seqs=none,2"),
        std::string(kSanitizedTestCommandSets)}) {
    const EnumerationSets sets = Sets(text);
    const std::vector<std::string> lines = Lines(sets);
    EXPECT_EQ(CountProblems(sets), static_cast<std::int64_t>(lines.size())) << text;
    EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), lines.size()) << text;
  }
}

TEST(CountProblemsTest, NamedSets) {
  // 16 G x 2 min_cp x 2 vpp x 2 caps x (1 + 8 + 8^2 + 8^3 [+ 8^4]) sequences.
  EXPECT_EQ(CountProblems(Sets("test")), 16 * 2 * 2 * 2 * 4681);
  // The same with 5 lengths, n = 0..3: 1 + 5 + 5^2 + 5^3.
  EXPECT_EQ(CountProblems(Sets("test-sanitized")), 16 * 2 * 2 * 2 * 156);
  // 2 mslpr x 16 G x 3 min_cp x 3 vpp x 3 caps x (1 + ... + 8^5).
  EXPECT_EQ(CountProblems(Sets("nightly")), 2 * 16 * 3 * 3 * 3 * 37449);
  EXPECT_EQ(Sets("test"), Sets(std::string(kTestCommandSets)));
}

TEST(ForEachProblemTest, PartsAreDisjointAndCoverEveryProblem) {
  const EnumerationSets sets =
      Sets("G=1..3 n=0..2 lens=1,m,2m mslpr=2 min_cp=1 vpp=none max_num_seqs=none");
  const std::vector<std::string> all = Lines(sets);
  std::vector<std::string> joined;
  for (std::int64_t part = 1; part <= 3; ++part) {
    std::int64_t expected_index = part - 1;
    ForEachProblem(sets, part, 3, [&](std::int64_t index, const DynamicCpProblem& problem) {
      EXPECT_EQ(index, expected_index);
      expected_index += 3;
      EXPECT_EQ(FormatProblem(problem), all[static_cast<std::size_t>(index)]);
      joined.push_back(FormatProblem(problem));
    });
  }
  EXPECT_EQ(joined.size(), all.size());
  EXPECT_EQ(std::set<std::string>(joined.begin(), joined.end()),
            std::set<std::string>(all.begin(), all.end()));
}

}  // namespace
}  // namespace dcpsched::properties::problem_enumerator_test

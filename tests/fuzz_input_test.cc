// Tests of the fuzz targets' shared input decoder (fuzz/fuzz_input.h): the
// writer's bytes decode back to the input written, the decoder takes any
// bytes and keeps its size limits, and IsValidBySpec agrees with the core's
// validation.

#include "fuzz/fuzz_input.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/validate.h"
#include "gtest/gtest.h"
#include "io/problem_text.h"

namespace dcpsched::fuzz::fuzz_input_test {
namespace {

constexpr std::int64_t kMinInt = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

DynamicCpProblem Problem(const std::string& text) {
  absl::StatusOr<DynamicCpProblem> problem = ParseProblem(text);
  EXPECT_TRUE(problem.ok()) << problem.status();
  return problem.ok() ? *problem : DynamicCpProblem{};
}

std::vector<std::uint8_t> RandomBytes(std::mt19937_64& random) {
  std::vector<std::uint8_t> bytes(std::uniform_int_distribution<std::size_t>(0, 600)(random));
  for (std::uint8_t& byte : bytes) byte = static_cast<std::uint8_t>(random());
  return bytes;
}

TEST(FuzzInputWriterTest, DynamicCpProblemsRoundTrip) {
  const char* const kProblems[] = {
      "G=14 mslpr=100 samples=0:50,1:50",
      "G=5 mslpr=1 samples=0:1,1:1",
      "G=3 mslpr=1 vpp=2 samples=0:1,1:1",
      "G=1 mslpr=1 samples=",
      "G=32 mslpr=37 min_cp=4 vpp=3 samples=0:128,1:128,2:128,3:1,4:128,5:128",
      "G=8 mslpr=2048 samples=0:2047,1:2048,2:2049,3:4095,4:4096,5:4097,6:16385",
      "G=4096 mslpr=2147483647 vpp=64 samples=9:67108864,-3:8193",
      "G=65536 mslpr=65537 min_cp=65536 samples=0:100000",
      "G=4096 mslpr=1 samples=0:4096,1:1",
      "G=0 mslpr=0 min_cp=0 vpp=0 samples=0:0,0:-1",
      ("G=-9223372036854775808 mslpr=9223372036854775807 min_cp=-9223372036854775808 "
       "vpp=-9223372036854775808 samples=-9223372036854775808:9223372036854775807"),
      "G=65537 mslpr=2147483648 min_cp=3 vpp=5 samples=1:67108865,2:67108865,3:8192,4:128",
      "G=14 mslpr=100 max_num_seqs=1 samples=0:50,1:50",
      "G=8 mslpr=2048 vpp=4 max_num_seqs=2 samples=0:8000,1:300,2:1200,3:5000",
      "G=4 mslpr=10 max_num_seqs=4 samples=",
      "G=4 mslpr=10 max_num_seqs=16 samples=0:1",
      "G=4 mslpr=10 max_num_seqs=17 samples=0:1",
      "G=4 mslpr=10 max_num_seqs=200 samples=0:1",
      "G=4 mslpr=10 max_num_seqs=201 samples=0:1",
      "G=4 mslpr=10 max_num_seqs=0 samples=0:1",
      "G=4 mslpr=10 max_num_seqs=-1 samples=0:1,1:2",
      "G=4 mslpr=10 max_num_seqs=-9223372036854775808 samples=-7:1",
      "G=4 mslpr=10 max_num_seqs=9223372036854775807 samples=0:1",
  };
  for (const char* text : kProblems) {
    const DynamicCpProblem problem = Problem(text);
    FuzzInputWriter writer;
    ASSERT_TRUE(writer.WriteDynamicCpProblem(problem).ok()) << text;
    const std::vector<std::uint8_t> bytes = writer.Bytes();
    FuzzedDataProvider data(bytes.data(), bytes.size());
    EXPECT_EQ(FormatProblem(DecodeDynamicCpProblem(data)), FormatProblem(problem)) << text;
    EXPECT_EQ(data.remaining_bytes(), 0u) << text;
  }
}

// Inputs from before max_num_seqs existed: the writer's bytes of a problem
// without a cap, behind unread bytes (a fuzzer's input often leaves some
// before the ones it uses). They decode to the same problem, with no cap,
// whatever those bytes are: fewer than four cannot make the cap's key, and
// four or more make it only by a 2^-32 chance.
TEST(DecodeTest, UnreadBytesBeforeAnUncappedProblemReadNoCap) {
  std::mt19937_64 random(4);
  const DynamicCpProblem problem =
      Problem("G=8 mslpr=2048 vpp=4 samples=0:8000,1:300,2:1200,3:5000,4:128");
  FuzzInputWriter writer;
  ASSERT_TRUE(writer.WriteDynamicCpProblem(problem).ok());
  const std::vector<std::uint8_t> written = writer.Bytes();
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(i % 40));
    for (std::uint8_t& byte : bytes) byte = static_cast<std::uint8_t>(random());
    bytes.insert(bytes.end(), written.begin(), written.end());
    FuzzedDataProvider data(bytes.data(), bytes.size());
    EXPECT_EQ(FormatProblem(DecodeDynamicCpProblem(data)), FormatProblem(problem));
  }
}

// The dynamic-CP targets' dictionaries (corpus/fuzz_packing_aware.dict and
// its twins) cap a problem: their entries, inserted just before the bytes a
// problem uses, are the cap's key, selector and value.
TEST(DecodeTest, TheDictionaryEntriesCapAProblem) {
  const DynamicCpProblem problem = Problem("G=14 mslpr=100 samples=0:50,1:50");
  FuzzInputWriter writer;
  ASSERT_TRUE(writer.WriteDynamicCpProblem(problem).ok());
  const std::vector<std::uint8_t> written = writer.Bytes();
  const std::vector<std::pair<std::string, std::int64_t>> entries = {
      {"spac", 1}, {std::string("\x00\x00spac", 6), 1}, {std::string("\x03\x00spac", 6), 4}};
  for (const auto& [entry, cap] : entries) {
    std::vector<std::uint8_t> bytes(entry.begin(), entry.end());
    bytes.insert(bytes.end(), written.begin(), written.end());
    FuzzedDataProvider data(bytes.data(), bytes.size());
    DynamicCpProblem capped = problem;
    capped.options.max_num_seqs = cap;
    EXPECT_EQ(FormatProblem(DecodeDynamicCpProblem(data)), FormatProblem(capped));
  }
}

// The writer adds nothing for a problem without a cap, so every seed that
// fuzz_write_seeds wrote before the cap existed is rewritten byte for byte:
// each committed seed that decodes to an uncapped problem is exactly what
// the writer writes for it.
TEST(FuzzInputWriterTest, UncappedSeedsAreWrittenAsBefore) {
  const std::filesystem::path seeds =
      std::filesystem::path(DCPSCHED_GOLDEN_DIR) / ".." / ".." / "corpus" / "fuzz_packing_aware" /
      "seeds";
  int compared = 0;
  for (const std::filesystem::directory_entry& entry :
       std::filesystem::directory_iterator(seeds)) {
    std::ifstream file(entry.path(), std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                          std::istreambuf_iterator<char>());
    FuzzedDataProvider data(bytes.data(), bytes.size());
    const DynamicCpProblem problem = DecodeDynamicCpProblem(data);
    if (problem.options.max_num_seqs.has_value()) continue;
    FuzzInputWriter writer;
    ASSERT_TRUE(writer.WriteDynamicCpProblem(problem).ok()) << entry.path();
    EXPECT_EQ(writer.Bytes(), bytes) << entry.path();
    ++compared;
  }
  EXPECT_GE(compared, 30);
}

TEST(FuzzInputWriterTest, TheReviewProblemIsAFewBytes) {
  FuzzInputWriter writer;
  ASSERT_TRUE(writer.WriteDynamicCpProblem(Problem("G=14 mslpr=100 samples=0:50,1:50")).ok());
  EXPECT_LE(writer.Bytes().size(), 16u);
}

TEST(FuzzInputWriterTest, TooManySamplesForGAreRefused) {
  FuzzInputWriter writer;
  EXPECT_EQ(writer.WriteDynamicCpProblem(Problem("G=4096 mslpr=1 samples=0:1,1:1,2:1")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(writer.WriteDynamicCpProblem(Problem("G=4097 mslpr=1 samples=0:1,1:1")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(writer.Bytes().empty());
}

TEST(MaxSamplesForTest, KeepsRanksTimesSamplesSmall) {
  EXPECT_EQ(MaxSamplesFor(1), kMaxSamples);
  EXPECT_EQ(MaxSamplesFor(14), kMaxSamples);
  EXPECT_EQ(MaxSamplesFor(64), 64);
  EXPECT_EQ(MaxSamplesFor(4096), 2);
  EXPECT_EQ(MaxSamplesFor(4097), 1);
  EXPECT_EQ(MaxSamplesFor(65536), 1);
  EXPECT_EQ(MaxSamplesFor(0), kMaxSamples);
  EXPECT_EQ(MaxSamplesFor(65537), kMaxSamples);
}

TEST(FuzzInputWriterTest, DpBalancedProblemsRoundTrip) {
  const properties::DpBalancedProblem kProblems[] = {
      {{8000, 300, 1200, 5000, 128}, {2, 4, 2048, {}, {}}},
      {{299, 300, 301, 1, 17}, {3, 1, 100, 2, 3}},
      {{}, {0, -1, 0, 0, 0}},
      {{kMinInt, kMaxInt, 0, 67108865}, {kMaxInt, kMinInt, kMaxInt, kMinInt, kMaxInt}},
      {{5, 5}, {1024, 4, 1, 7, 9}},
  };
  for (const properties::DpBalancedProblem& problem : kProblems) {
    FuzzInputWriter writer;
    ASSERT_TRUE(writer.WriteDpBalancedProblem(problem).ok()) << FormatDpBalancedProblem(problem);
    const std::vector<std::uint8_t> bytes = writer.Bytes();
    FuzzedDataProvider data(bytes.data(), bytes.size());
    EXPECT_EQ(FormatDpBalancedProblem(DecodeDpBalancedProblem(data)),
              FormatDpBalancedProblem(problem));
    EXPECT_EQ(data.remaining_bytes(), 0u);
  }
}

TEST(FuzzInputWriterTest, VppAlignInputsRoundTrip) {
  const VppAlignInput kInputs[] = {
      {2, Schedule{{Microbatch{{{0}, {0}, {1}}}}}},
      {4, Schedule{{Microbatch{{{0, 1}, {0, 1}, {2}, {3}}}, Microbatch{{{4}, {4}, {4}, {4}}}}}},
      {kMinInt, Schedule{{Microbatch{{{}, {kMaxInt, kMinInt}}}, Microbatch{}}}},
      {3, Schedule{}},
      {kMaxInt, Schedule{{Microbatch{{{1, 2, 3, 4, 5, 6, 7, 8}}}}}},
  };
  for (const VppAlignInput& input : kInputs) {
    FuzzInputWriter writer;
    ASSERT_TRUE(writer.WriteVppAlignInput(input).ok()) << FormatVppAlignInput(input);
    const std::vector<std::uint8_t> bytes = writer.Bytes();
    FuzzedDataProvider data(bytes.data(), bytes.size());
    EXPECT_EQ(FormatVppAlignInput(DecodeVppAlignInput(data)), FormatVppAlignInput(input));
    EXPECT_EQ(data.remaining_bytes(), 0u);
  }
}

TEST(FuzzInputWriterTest, SchedulesBeyondTheDecodersLimitsAreRefused) {
  FuzzInputWriter writer;
  const Schedule too_many_ids{{Microbatch{{std::vector<SampleId>(kMaxIdsPerRank + 1, 0)}}}};
  EXPECT_EQ(writer.WriteSchedule(too_many_ids).code(), absl::StatusCode::kInvalidArgument);
  const Schedule too_wide{
      {Microbatch{std::vector<std::vector<SampleId>>(kMaxScheduleWidth + 1, {0})}}};
  EXPECT_EQ(writer.WriteSchedule(too_wide).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(writer.Bytes().empty());
}

TEST(FuzzInputWriterTest, WriteInRangeMatchesConsumeIntegralInRange) {
  std::mt19937_64 random(5154);
  const std::int64_t kBounds[] = {kMinInt, -300, -1, 0, 1, 15, 255, 256, 65535, 1 << 20, kMaxInt};
  for (const std::int64_t min : kBounds) {
    for (const std::int64_t max : kBounds) {
      if (min > max) continue;
      const std::uint64_t range = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
      const std::uint64_t offset =
          range == std::numeric_limits<std::uint64_t>::max() ? random() : random() % (range + 1);
      const auto value = static_cast<std::int64_t>(static_cast<std::uint64_t>(min) + offset);
      FuzzInputWriter writer;
      writer.WriteInRange(value, min, max);
      writer.WriteInRange(min, min, max);
      writer.WriteInRange(max, min, max);
      const std::vector<std::uint8_t> bytes = writer.Bytes();
      FuzzedDataProvider data(bytes.data(), bytes.size());
      EXPECT_EQ(data.ConsumeIntegralInRange<std::int64_t>(min, max), value) << min << ".." << max;
      EXPECT_EQ(data.ConsumeIntegralInRange<std::int64_t>(min, max), min) << min << ".." << max;
      EXPECT_EQ(data.ConsumeIntegralInRange<std::int64_t>(min, max), max) << min << ".." << max;
      EXPECT_EQ(data.remaining_bytes(), 0u);
    }
  }
}

TEST(DecodeTest, AnyBytesDecodeWithinTheLimits) {
  std::mt19937_64 random(1);
  for (int i = 0; i < 3000; ++i) {
    const std::vector<std::uint8_t> bytes = RandomBytes(random);
    FuzzedDataProvider problem_data(bytes.data(), bytes.size());
    const DynamicCpProblem problem = DecodeDynamicCpProblem(problem_data);
    EXPECT_LE(static_cast<std::int64_t>(problem.samples.size()),
              MaxSamplesFor(problem.options.total_gpus));

    FuzzedDataProvider dp_data(bytes.data(), bytes.size());
    const properties::DpBalancedProblem dp_problem = DecodeDpBalancedProblem(dp_data);
    EXPECT_LE(static_cast<std::int64_t>(dp_problem.lens.size()), kMaxSamples);

    FuzzedDataProvider schedule_data(bytes.data(), bytes.size());
    const VppAlignInput input = DecodeVppAlignInput(schedule_data);
    EXPECT_LE(static_cast<std::int64_t>(input.schedule.microbatches.size()),
              kMaxScheduleMicrobatches);
    for (const Microbatch& microbatch : input.schedule.microbatches) {
      EXPECT_LE(static_cast<std::int64_t>(microbatch.rank_ids.size()), kMaxScheduleWidth + 1);
    }
  }
}

TEST(DecodeTest, NoBytesDecodeToTheSmallestProblem) {
  FuzzedDataProvider data(nullptr, 0);
  EXPECT_EQ(FormatProblem(DecodeDynamicCpProblem(data)), "G=1 mslpr=1 min_cp=1 vpp=none samples=");
}

TEST(DecodeTest, ReachesValidAndInvalidProblemsAndOddTopologies) {
  std::mt19937_64 random(2);
  int valid = 0;
  std::set<std::int64_t> topologies;
  constexpr int kProblems = 2000;
  for (int i = 0; i < kProblems; ++i) {
    const std::vector<std::uint8_t> bytes = RandomBytes(random);
    FuzzedDataProvider data(bytes.data(), bytes.size());
    const DynamicCpProblem problem = DecodeDynamicCpProblem(data);
    valid += IsValidBySpec(problem) ? 1 : 0;
    topologies.insert(problem.options.total_gpus);
  }
  EXPECT_GT(valid, kProblems / 4);
  EXPECT_LT(valid, kProblems * 19 / 20);
  for (const std::int64_t total_gpus : {1, 3, 5, 6, 7, 12, 14, 24, 64, 0, 65537}) {
    EXPECT_TRUE(topologies.contains(total_gpus)) << "G=" << total_gpus << " never decoded";
  }
}

TEST(IsValidBySpecTest, AgreesWithTheCoresValidation) {
  std::mt19937_64 random(3);
  for (int i = 0; i < 500; ++i) {
    const std::vector<std::uint8_t> bytes = RandomBytes(random);
    FuzzedDataProvider data(bytes.data(), bytes.size());
    const DynamicCpProblem problem = DecodeDynamicCpProblem(data);
    EXPECT_EQ(IsValidBySpec(problem),
              ValidateDynamicCpProblem(problem.samples, problem.options).ok())
        << FormatProblem(problem);
  }
  // Random bytes almost never hold the cap's key: give the problems caps.
  constexpr std::int64_t kCaps[] = {1, 2, 200, kMaxInt, 0, -1, kMinInt};
  for (int i = 0; i < 500; ++i) {
    const std::vector<std::uint8_t> bytes = RandomBytes(random);
    FuzzedDataProvider data(bytes.data(), bytes.size());
    DynamicCpProblem problem = DecodeDynamicCpProblem(data);
    problem.options.max_num_seqs = kCaps[i % std::size(kCaps)];
    EXPECT_EQ(IsValidBySpec(problem),
              ValidateDynamicCpProblem(problem.samples, problem.options).ok())
        << FormatProblem(problem);
  }
}

TEST(IsValidBySpecTest, JudgesSpecsLimits) {
  EXPECT_TRUE(IsValidBySpec(Problem("G=14 mslpr=100 samples=0:50,1:50")));
  EXPECT_TRUE(
      IsValidBySpec(Problem("G=65536 mslpr=2147483647 min_cp=65536 vpp=1 samples=0:67108864")));
  EXPECT_TRUE(IsValidBySpec(Problem("G=6 mslpr=10 samples=0:40")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=6 mslpr=10 samples=0:41")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=0 mslpr=1 samples=")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=65537 mslpr=1 samples=")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=0 samples=")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=2147483648 samples=")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=1 min_cp=3 samples=")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=6 mslpr=1 min_cp=8 samples=")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=1 vpp=0 samples=")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=1 samples=0:1,0:1")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=1 samples=0:0")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=2147483647 samples=0:67108865")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=10 min_cp=4 samples=0:41")));
  EXPECT_TRUE(IsValidBySpec(Problem("G=4 mslpr=10 max_num_seqs=1 samples=0:5,1:5")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=10 max_num_seqs=0 samples=0:5")));
  EXPECT_FALSE(IsValidBySpec(Problem("G=4 mslpr=10 max_num_seqs=-1 samples=")));
}

}  // namespace
}  // namespace dcpsched::fuzz::fuzz_input_test

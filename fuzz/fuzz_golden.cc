// Fuzz target: golden-vector lines parse and check without crashing.
//
// The input bytes are one line of a golden .jsonl file (io/golden.h).
// ParseGoldenCase must not crash (nor let an exception escape); when it
// succeeds, CheckGoldenCase must not crash either. Its verdict is not
// judged: a fuzzed expectation is rarely upstream's answer. Cases too big to
// check in milliseconds are skipped (more than kMaxRanks ranks, more than
// kMaxSamples samples, or ranks * samples above kMaxRankSamples).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/golden.h"

namespace dcpsched::fuzz {
namespace {

constexpr std::int64_t kMaxRanks = 4096;
constexpr std::int64_t kMaxSamples = 500;
constexpr std::int64_t kMaxRankSamples = std::int64_t{1} << 16;

// The ranks the case's scheduler runs on: total_gpus, or dp_size * cp_size
// for dp_balanced; kMaxRanks + 1 if that is out of 1..kMaxRanks.
std::int64_t RanksOf(const GoldenCase& golden_case) {
  std::int64_t ranks = golden_case.total_gpus;
  if (golden_case.scheduler == "dp_balanced" &&
      __builtin_mul_overflow(golden_case.dp_size, golden_case.cp_size, &ranks)) {
    return kMaxRanks + 1;
  }
  return ranks < 1 || ranks > kMaxRanks ? kMaxRanks + 1 : ranks;
}

bool SmallEnough(const GoldenCase& golden_case) {
  const std::int64_t ranks = RanksOf(golden_case);
  const auto samples = static_cast<std::int64_t>(golden_case.samples.size());
  return ranks <= kMaxRanks && samples <= kMaxSamples && ranks * samples <= kMaxRankSamples;
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  const absl::StatusOr<GoldenCase> golden_case =
      ParseGoldenCase(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!golden_case.ok() || !SmallEnough(*golden_case)) return;
  const absl::Status verdict = CheckGoldenCase(*golden_case);
  static_cast<void>(verdict);
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}

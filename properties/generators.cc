#include "properties/generators.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "core/validate.h"
#include "io/problem_text.h"

namespace dcpsched {

void showValue(const DynamicCpProblem& problem, std::ostream& os) {
  os << FormatProblem(problem);
}

void showValue(const properties::DpBalancedProblem& problem, std::ostream& os) {
  const DpBalancedOptions& options = problem.options;
  os << "dp=" << options.dp_size << " cp=" << options.cp_size
     << " mslpr=" << options.max_seq_len_per_rank << " max_num_seqs="
     << (options.max_num_seqs ? std::to_string(*options.max_num_seqs) : "none")
     << " vpp=" << (options.vpp_group ? std::to_string(*options.vpp_group) : "none")
     << " lens=" << absl::StrJoin(problem.lens, ",");
}

void showValue(const Schedule& schedule, std::ostream& os) {
  os << "[";
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    os << (m ? ", [" : "[");
    const auto& ranks = schedule.microbatches[m].rank_ids;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      os << (r ? ", [" : "[") << absl::StrJoin(ranks[r], ",") << "]";
    }
    os << "]";
  }
  os << "]";
}

namespace properties {
namespace {

// How one sample length is made once G and mslpr are known. Kinds shrink
// toward kTiny and values toward 0, i.e. toward length 1.
struct LengthRecipe {
  int kind = 0;
  int value = 0;     // 0..9999
  int multiple = 1;  // 1..8
};
constexpr int kTiny = 0;       // 1 + value % 16
constexpr int kLognormal = 1;  // quantile value/10^4 of lognormal(1024, 1.5)
constexpr int kBoundary = 2;   // multiple * mslpr + {-1, 0, +1}
constexpr int kRepeat = 3;     // the previous sample's length again

// Inverse of the standard normal CDF (Acklam's rational approximation,
// relative error below 1.2e-9): enough to shape realistic lengths.
double InverseNormalCdf(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549671010115381e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  const auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  };
  if (p < kLow) return tail(std::sqrt(-2.0 * std::log(p)));
  if (p > 1.0 - kLow) return -tail(std::sqrt(-2.0 * std::log(1.0 - p)));
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

// Upstream's DCP benchmark workload: lognormal with mean 1024 and sigma 1.5,
// clipped to [128, 8192].
std::int64_t LognormalLength(int value) {
  constexpr double kSigma = 1.5;
  const double mu = std::log(1024.0) - kSigma * kSigma / 2.0;
  const double p = (value + 0.5) / 10000.0;
  const double len = std::exp(mu + kSigma * InverseNormalCdf(p));
  return std::clamp<std::int64_t>(std::llround(std::min(len, 1e9)), 128, 8192);
}

std::int64_t RecipeLength(const LengthRecipe& recipe, std::int64_t mslpr,
                          std::int64_t previous) {
  switch (recipe.kind) {
    case kLognormal:
      return LognormalLength(recipe.value);
    case kBoundary:
      return recipe.multiple * mslpr + recipe.value % 3 - 1;
    case kRepeat:
      return previous;
    default:
      return 1 + recipe.value % 16;
  }
}

rc::Gen<LengthRecipe> GenRecipe() {
  return rc::gen::build<LengthRecipe>(
      rc::gen::set(&LengthRecipe::kind,
                   rc::gen::weightedElement<int>(
                       {{2, kTiny}, {5, kLognormal}, {2, kBoundary}, {2, kRepeat}})),
      rc::gen::set(&LengthRecipe::value, rc::gen::inRange(0, 10000)),
      rc::gen::set(&LengthRecipe::multiple, rc::gen::inRange(1, 9)));
}

// Mostly common topologies, odd ones among them; sometimes any G up to 64.
// Odd G (5, 7, 13, ...) leave a single rank or an odd run free, where the
// fill's bounds and exact ties between CP sizes show (mutation testing,
// docs/mutation.md: expand_bound_off_by_one, candidate_tie_replaces).
rc::Gen<std::int64_t> GenTopology() {
  return rc::gen::weightedOneOf<std::int64_t>(
      {{5, rc::gen::weightedElement<std::int64_t>(
               {{2, 1}, {3, 2}, {3, 3}, {4, 4}, {2, 5}, {3, 6}, {2, 7}, {5, 8},
                {3, 12}, {3, 14}, {4, 16}, {2, 24}, {3, 32}, {2, 64}})},
       {1, rc::gen::inRange<std::int64_t>(1, 65)}});
}

rc::Gen<std::int64_t> GenLargeTopology() {
  return rc::gen::element<std::int64_t>(128, 512, 1024, 4096);
}

rc::Gen<std::int64_t> GenMaxSeqLenPerRank() {
  return rc::gen::weightedElement<std::int64_t>(
      {{1, 1}, {1, 2}, {1, 3}, {1, 8}, {1, 37}, {2, 100}, {2, 1024}, {6, 2048},
       {2, 4096}});
}

rc::Gen<std::optional<std::int64_t>> GenVppGroup() {
  return rc::gen::weightedElement<std::optional<std::int64_t>>(
      {{6, std::nullopt}, {1, 1}, {2, 2}, {2, 3}, {2, 4}});
}

// How a problem's max_num_seqs is made once its sample count is known. A
// cap shrinks to none first, then to 1.
struct CapRecipe {
  int kind = 0;
  int value = 0;  // 0..3
};
constexpr int kNoCap = 0;
constexpr int kSmallCap = 1;         // 1 + value: 1..4
constexpr int kLargeCap = 2;         // 5 + 4 * value: 5..17
constexpr int kCapOfEverySample = 3; // the sample count + value (at least 1)

std::optional<std::int64_t> RecipeCap(const CapRecipe& recipe, std::size_t sample_count) {
  switch (recipe.kind) {
    case kSmallCap:
      return 1 + recipe.value;
    case kLargeCap:
      return 5 + 4 * recipe.value;
    case kCapOfEverySample:
      return std::max<std::int64_t>(1, static_cast<std::int64_t>(sample_count) + recipe.value);
    default:
      return std::nullopt;
  }
}

// Half the problems are capped, mostly at 1..4 where the cap binds.
rc::Gen<CapRecipe> GenCapRecipe() {
  const rc::Gen<CapRecipe> drawn = rc::gen::build<CapRecipe>(
      rc::gen::set(&CapRecipe::kind,
                   rc::gen::weightedElement<int>({{5, kNoCap},
                                                  {3, kSmallCap},
                                                  {1, kLargeCap},
                                                  {1, kCapOfEverySample}})),
      rc::gen::set(&CapRecipe::value, rc::gen::element(0, 1, 2, 3)));
  return rc::gen::shrink(drawn, [](const CapRecipe& recipe) {
    if (recipe.kind == kNoCap) return rc::Seq<CapRecipe>();
    if (recipe.kind == kSmallCap && recipe.value == 0) return rc::seq::just(CapRecipe{});
    return rc::seq::just(CapRecipe{}, CapRecipe{kSmallCap, 0});
  });
}

std::int64_t LargestPowerOfTwoAtMost(std::int64_t value) {
  return std::int64_t{1} << (std::bit_width(static_cast<std::uint64_t>(value)) - 1);
}

// Distinct ids: positions, or a bijective scramble of them over all int64.
SampleId IdOf(std::size_t index, bool scramble, std::uint64_t salt) {
  if (!scramble) return static_cast<SampleId>(index);
  return static_cast<SampleId>(static_cast<std::uint64_t>(index) *
                                   0x9E3779B97F4A7C15ULL +
                               salt);
}

DynamicCpProblem Assemble(std::int64_t total_gpus, std::int64_t mslpr,
                          int min_cp_exponent, std::optional<std::int64_t> vpp,
                          const CapRecipe& cap, const std::vector<LengthRecipe>& recipes,
                          bool scramble, std::uint64_t salt) {
  DynamicCpProblem problem;
  problem.options.total_gpus = total_gpus;
  problem.options.max_seq_len_per_rank = mslpr;
  const std::int64_t widest = LargestPowerOfTwoAtMost(total_gpus);
  problem.options.min_cp_size = std::min(std::int64_t{1} << min_cp_exponent, widest);
  problem.options.vpp_group = vpp;
  const std::int64_t longest = std::min(kMaxSampleLen, widest * mslpr);
  std::int64_t previous = 1;
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    const std::int64_t len =
        std::clamp<std::int64_t>(RecipeLength(recipes[i], mslpr, previous), 1, longest);
    problem.samples.push_back(Sample{IdOf(i, scramble, salt), len});
    previous = len;
  }
  problem.options.max_num_seqs = RecipeCap(cap, problem.samples.size());
  return problem;
}

// Tiny problems, tried densely: few samples whose lengths sit at and around
// one or two budgets or repeat the previous one, so works tie exactly; any
// G up to 16, odd ones included. Ties between candidates of different CP
// sizes (an add at 2c against a new group at c) need such inputs: larger
// random problems almost never hit them (mutation testing,
// docs/mutation.md: candidate_tie_replaces).
// Values from element(), not inRange(): RapidCheck scales inRange by the
// size parameter, so small sizes would give the smallest values only.
rc::Gen<LengthRecipe> GenTinyRecipe() {
  return rc::gen::build<LengthRecipe>(
      rc::gen::set(&LengthRecipe::kind,
                   rc::gen::weightedElement<int>({{1, kTiny}, {3, kBoundary}, {3, kRepeat}})),
      rc::gen::set(&LengthRecipe::value, rc::gen::element(0, 1, 2)),
      rc::gen::set(&LengthRecipe::multiple, rc::gen::element(1, 2)));
}

// At most `count` elements of `gen`'s vectors. Unlike rc::gen::resize, this
// leaves the size parameter, and so the elements' values, alone.
template <typename T>
rc::Gen<std::vector<T>> AtMost(std::size_t count, rc::Gen<std::vector<T>> gen) {
  return rc::gen::map(std::move(gen), [count](std::vector<T> values) {
    if (values.size() > count) values.resize(count);
    return values;
  });
}

// Any G up to 16, odd G >= 5 twice as often: they leave one rank (or an odd
// run) free next to groups of two.
rc::Gen<std::int64_t> GenTinyTopology() {
  return rc::gen::weightedElement<std::int64_t>(
      {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 5}, {1, 6}, {2, 7}, {1, 8}, {2, 9}, {1, 10},
       {2, 11}, {1, 12}, {2, 13}, {1, 14}, {2, 15}, {1, 16}});
}

rc::Gen<std::int64_t> GenTinyMaxSeqLenPerRank() {
  return rc::gen::element<std::int64_t>(2, 3, 8, 10, 100);
}

rc::Gen<DynamicCpProblem> GenProblemOn(
    rc::Gen<std::int64_t> topology, rc::Gen<std::vector<LengthRecipe>> recipes,
    rc::Gen<std::int64_t> mslpr = GenMaxSeqLenPerRank()) {
  return rc::gen::apply(
      [](std::int64_t total_gpus, std::int64_t mslpr, int min_cp_exponent,
         std::optional<std::int64_t> vpp, const CapRecipe& cap,
         const std::vector<LengthRecipe>& lens, bool scramble, std::uint64_t salt) {
        return Assemble(total_gpus, mslpr, min_cp_exponent, vpp, cap, lens, scramble, salt);
      },
      std::move(topology), std::move(mslpr),
      rc::gen::weightedElement<int>({{6, 0}, {2, 1}, {1, 2}, {1, 3}}), GenVppGroup(),
      GenCapRecipe(), std::move(recipes), rc::gen::arbitrary<bool>(), rc::gen::arbitrary<std::uint64_t>());
}

SampleId UnusedId(const std::vector<Sample>& samples) {
  absl::flat_hash_set<SampleId> used;
  for (const Sample& sample : samples) used.insert(sample.id);
  SampleId id = 0;
  while (used.contains(id)) ++id;
  return id;
}

constexpr int kBreakages = 19;

DynamicCpProblem Break(DynamicCpProblem problem, int breakage) {
  DynamicCpOptions& options = problem.options;
  const auto append = [&](std::int64_t len) {
    problem.samples.push_back(Sample{UnusedId(problem.samples), len});
  };
  switch (breakage) {
    case 0: options.total_gpus = 0; break;
    case 1: options.total_gpus = -3; break;
    case 2: options.total_gpus = kMaxTotalGpus + 1; break;
    case 3: options.max_seq_len_per_rank = 0; break;
    case 4: options.max_seq_len_per_rank = kMaxSeqLenPerRank + 1; break;
    case 5: options.min_cp_size = 3; break;
    case 6:
      options.min_cp_size =
          std::int64_t{1} << std::bit_width(static_cast<std::uint64_t>(options.total_gpus));
      break;
    case 7: options.min_cp_size = -2; break;
    case 8: options.vpp_group = 0; break;
    case 9: append(0); break;
    case 10: append(-1); break;
    case 11: append(kMaxSampleLen + 1); break;
    case 12:
      if (problem.samples.empty()) append(1);
      problem.samples.push_back(Sample{problem.samples.front().id, 1});
      break;
    case 13:
      // One token more than the widest power-of-two group holds.
      append(LargestPowerOfTwoAtMost(options.total_gpus) * options.max_seq_len_per_rank + 1);
      break;
    case 14: options.vpp_group = std::numeric_limits<std::int64_t>::min(); break;
    case 15: options.max_num_seqs = 0; break;
    case 16: options.max_num_seqs = -1; break;
    case 17: options.min_cp_size = 0; break;
    default: options.max_num_seqs = std::numeric_limits<std::int64_t>::min(); break;
  }
  return problem;
}

// Every G from 2 to 16, then a few wider ones. A G that is not a power of
// two leaves fewer free ranks than a larger CP size needs once the first
// groups are placed (G=10: 8 + 2), which is where the legacy step skips a
// bucket whose head cannot go anywhere and bucket boundaries show.
rc::Gen<std::int64_t> GenMixedCpSizeTopology() {
  return rc::gen::weightedOneOf<std::int64_t>(
      {{4, rc::gen::element<std::int64_t>(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)},
       {1, rc::gen::element<std::int64_t>(20, 24, 28, 32, 48, 64)}});
}

}  // namespace

rc::Gen<int> GenCase(int count) {
  // At the nominal size inRange spans the whole range, evenly.
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, count));
}

rc::Gen<DynamicCpProblem> GenValidProblem() {
  return rc::gen::weightedOneOf<DynamicCpProblem>(
      {{8, GenProblemOn(GenTopology(),
                        rc::gen::container<std::vector<LengthRecipe>>(GenRecipe()))},
       {2, GenProblemOn(GenTinyTopology(),
                        AtMost(8, rc::gen::container<std::vector<LengthRecipe>>(GenTinyRecipe())),
                        GenTinyMaxSeqLenPerRank())},
       {1, GenProblemOn(GenLargeTopology(),
                        AtMost(12, rc::gen::container<std::vector<LengthRecipe>>(GenRecipe())))}});
}

rc::Gen<DynamicCpProblem> GenValidUncappedProblem() {
  return rc::gen::map(GenValidProblem(), [](DynamicCpProblem problem) {
    problem.options.max_num_seqs.reset();
    return problem;
  });
}

rc::Gen<DynamicCpProblem> GenTieProneProblem() {
  // Each run: `count` samples of length multiple * mslpr + delta.
  using Run = std::tuple<std::int64_t, std::int64_t, int>;
  return rc::gen::apply(
      [](std::int64_t total_gpus, std::int64_t mslpr, const CapRecipe& cap,
         const std::vector<Run>& runs) {
        DynamicCpProblem problem;
        problem.options.total_gpus = total_gpus;
        problem.options.max_seq_len_per_rank = mslpr;
        const std::int64_t longest =
            std::min(kMaxSampleLen, LargestPowerOfTwoAtMost(total_gpus) * mslpr);
        for (const auto& [multiple, delta, count] : runs) {
          const std::int64_t len = std::clamp<std::int64_t>(multiple * mslpr + delta, 1, longest);
          for (int i = 0; i < count; ++i) {
            problem.samples.push_back(Sample{static_cast<SampleId>(problem.samples.size()), len});
          }
        }
        problem.options.max_num_seqs = RecipeCap(cap, problem.samples.size());
        return problem;
      },
      GenTinyTopology(), rc::gen::element<std::int64_t>(3, 8, 10, 100), GenCapRecipe(),
      AtMost(3, rc::gen::nonEmpty(rc::gen::container<std::vector<Run>>(rc::gen::tuple(
                    rc::gen::weightedElement<std::int64_t>({{3, 1}, {1, 2}}),
                    rc::gen::element<std::int64_t>(-1, 0, 1), rc::gen::element(1, 2, 3, 4))))));
}

rc::Gen<DynamicCpProblem> GenExhaustiveProblem() {
  return rc::gen::apply(
      [](std::int64_t total_gpus, std::int64_t mslpr, bool min_cp_two,
         std::optional<std::int64_t> cap, const std::vector<int>& steps) {
        DynamicCpProblem problem;
        problem.options.total_gpus = total_gpus;
        problem.options.max_seq_len_per_rank = mslpr;
        const std::int64_t widest = LargestPowerOfTwoAtMost(total_gpus);
        problem.options.min_cp_size = min_cp_two && widest >= 2 ? 2 : 1;
        problem.options.max_num_seqs = cap;
        for (const int step : steps) {
          // Lengths from 1 to widest * mslpr in eight even steps, so every
          // CP size from 1 to the widest is needed by some.
          const std::int64_t len = std::max<std::int64_t>(1, widest * mslpr * step / 8);
          problem.samples.push_back(Sample{static_cast<SampleId>(problem.samples.size()), len});
        }
        return problem;
      },
      rc::gen::weightedElement<std::int64_t>({{1, 1}, {2, 2}, {4, 3}, {2, 4}}),
      rc::gen::element<std::int64_t>(2, 3, 8, 10, 100),
      rc::gen::weightedElement<bool>({{4, false}, {1, true}}),
      rc::gen::weightedElement<std::optional<std::int64_t>>(
          {{4, std::nullopt}, {1, 1}, {1, 2}, {1, 3}}),
      AtMost(5, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(
                    rc::gen::element(0, 1, 2, 3, 4, 5, 6, 7, 8)))));
}

rc::Gen<DynamicCpProblem> GenBalanceProneProblem() {
  // Per-mille steps: where the long sample lies in (mslpr, 1.41 * mslpr], and
  // the second's work as a share of the long sample's work per rank.
  return rc::gen::apply(
      [](std::int64_t mslpr, int long_step, int share, const std::vector<int>& tail_steps) {
        DynamicCpProblem problem;
        problem.options.total_gpus = 3;
        problem.options.max_seq_len_per_rank = mslpr;
        // Two ranks (CP 2) for the long sample; the rank left gets the second.
        const std::int64_t longest = mslpr * 141 / 100;
        const std::int64_t long_len = mslpr + 1 + (longest - mslpr - 1) * long_step / 1000;
        const double work_per_rank = static_cast<double>(long_len) * long_len / 2.0;
        const std::int64_t second = std::clamp<std::int64_t>(
            static_cast<std::int64_t>(std::sqrt(work_per_rank * share / 1000.0)), 1, mslpr - 1);
        problem.samples = {Sample{0, long_len}, Sample{1, second}};
        // Short samples that would still fit beside the second on its rank.
        const std::int64_t room = std::max<std::int64_t>(1, (mslpr - second) / 2);
        for (const int step : tail_steps) {
          problem.samples.push_back(Sample{static_cast<SampleId>(problem.samples.size()),
                                           1 + (room - 1) * step / 1000});
        }
        return problem;
      },
      rc::gen::element<std::int64_t>(16, 100, 363, 1000, 2048, 4096),
      rc::gen::resize(100, rc::gen::inRange(0, 1001)),
      // Shares around the tolerance (1 - 0.05 = 950 per mille), either side.
      rc::gen::weightedOneOf<int>({{2, rc::gen::element(949, 950, 951)},
                                   {3, rc::gen::resize(100, rc::gen::inRange(930, 1001))}}),
      rc::gen::resize(100, rc::gen::container<std::vector<int>>(
                               rc::gen::resize(100, rc::gen::inRange(0, 1001)))));
}

rc::Gen<DynamicCpProblem> GenMixedCpSizeProblem() {
  // Each sample: which of the chosen CP sizes, where in its length range
  // (kRangeSteps: the top, c * mslpr), and whether it repeats the previous.
  using Pick = std::tuple<int, int, bool>;
  constexpr int kRangeSteps = 1000;
  // element() and a fixed size for inRange: RapidCheck scales inRange by
  // the size parameter, which would pick the first CP size and the bottom
  // of its range in every small problem.
  const rc::Gen<std::vector<Pick>> picks =
      rc::gen::container<std::vector<Pick>>(rc::gen::tuple(
          rc::gen::element(0, 1, 2, 3),
          rc::gen::weightedOneOf<int>(
              {{1, rc::gen::just(0)},
               {1, rc::gen::just(kRangeSteps)},
               {3, rc::gen::resize(100, rc::gen::inRange(0, kRangeSteps + 1))}}),
          rc::gen::weightedElement<bool>({{4, false}, {1, true}})));
  // Half the time G is fitted to the sizes instead: the largest chosen size
  // (up to 16) plus fewer spare ranks than that, so once the first groups
  // are placed, often too few ranks are free for the next size.
  constexpr int kFittedExponents = 5;
  return rc::gen::apply(
      [](std::int64_t topology, std::optional<int> spare, std::int64_t mslpr,
         int min_cp_exponent, std::optional<std::int64_t> vpp,
         const std::vector<int>& exponents, const std::vector<Pick>& picks) {
        // Exponents wrap into 0..log2(widest), so a small G still gets
        // distinct sizes.
        const int widest_exponent =
            spare.has_value()
                ? kFittedExponents - 1
                : std::countr_zero(static_cast<std::uint64_t>(LargestPowerOfTwoAtMost(topology)));
        std::vector<std::int64_t> sizes;
        for (const int exponent : exponents) {
          const std::int64_t size = std::int64_t{1} << (exponent % (widest_exponent + 1));
          if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) sizes.push_back(size);
        }
        const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
        const std::int64_t total_gpus = spare.has_value() ? largest + *spare % largest : topology;
        DynamicCpProblem problem;
        problem.options.total_gpus = total_gpus;
        problem.options.max_seq_len_per_rank = mslpr;
        problem.options.min_cp_size = std::min(std::int64_t{1} << min_cp_exponent,
                                               LargestPowerOfTwoAtMost(total_gpus));
        problem.options.vpp_group = vpp;
        std::int64_t previous = 1;
        for (const auto& [which, step, repeat] : picks) {
          const std::int64_t size = sizes[static_cast<std::size_t>(which) % sizes.size()];
          const std::int64_t lowest = size == 1 ? 1 : size / 2 * mslpr + 1;
          const std::int64_t highest = size * mslpr;
          const std::int64_t len =
              repeat && !problem.samples.empty()
                  ? previous
                  : lowest + (highest - lowest) * step / kRangeSteps;
          problem.samples.push_back(Sample{static_cast<SampleId>(problem.samples.size()), len});
          previous = len;
        }
        return problem;
      },
      GenMixedCpSizeTopology(),
      rc::gen::weightedOneOf<std::optional<int>>(
          {{1, rc::gen::just(std::optional<int>())},
           {1, rc::gen::map(rc::gen::element(0, 1, 2, 3, 5, 6, 7, 9, 11, 13, 15),
                            [](int spare) { return std::optional<int>(spare); })}}),
      rc::gen::element<std::int64_t>(1, 3, 8, 10, 100, 2048),
      rc::gen::weightedElement<int>({{3, 0}, {1, 1}, {1, 2}}), GenVppGroup(),
      rc::gen::container<std::vector<int>>(4, rc::gen::element(0, 1, 2, 3, 4, 5, 6)),
      // Half the problems have at most six samples: with about one sample per
      // CP size, the count rule (n - i <= k - 2 * closed) closes buckets the
      // slack rule would not.
      rc::gen::weightedOneOf<std::vector<Pick>>({{1, picks}, {1, AtMost(6, picks)}}));
}

rc::Gen<DynamicCpProblem> GenProblemWithDistinctLengths() {
  return rc::gen::map(GenValidProblem(), [](DynamicCpProblem problem) {
    absl::flat_hash_set<std::int64_t> seen;
    std::erase_if(problem.samples,
                  [&](const Sample& sample) { return !seen.insert(sample.len).second; });
    return problem;
  });
}

rc::Gen<DynamicCpProblem> GenInvalidProblem() {
  return rc::gen::apply(Break, GenValidProblem(), GenCase(kBreakages));
}

rc::Gen<DpBalancedProblem> GenDpBalancedProblem() {
  return rc::gen::apply(
      [](std::int64_t dp, std::int64_t cp, std::int64_t mslpr,
         std::optional<std::int64_t> max_num_seqs, std::optional<std::int64_t> vpp,
         const std::vector<LengthRecipe>& recipes) {
        DpBalancedProblem problem;
        problem.options = DpBalancedOptions{dp, cp, mslpr, max_num_seqs, vpp};
        const std::int64_t longest = std::min(kMaxSampleLen, mslpr * cp);
        std::int64_t previous = 1;
        for (const LengthRecipe& recipe : recipes) {
          previous = std::clamp<std::int64_t>(RecipeLength(recipe, mslpr, previous), 1, longest);
          problem.lens.push_back(previous);
        }
        return problem;
      },
      rc::gen::weightedElement<std::int64_t>({{3, 1}, {3, 2}, {2, 3}, {2, 4}, {1, 7}, {1, 8}}),
      rc::gen::weightedElement<std::int64_t>({{3, 1}, {3, 2}, {1, 3}, {2, 4}, {1, 8}}),
      GenMaxSeqLenPerRank(),
      rc::gen::weightedElement<std::optional<std::int64_t>>(
          {{4, std::nullopt}, {1, 1}, {1, 2}, {1, 3}, {1, 5}}),
      GenVppGroup(), rc::gen::container<std::vector<LengthRecipe>>(GenRecipe()));
}

constexpr int kDpBalancedBreakages = 14;

DpBalancedProblem BreakDpBalanced(DpBalancedProblem problem, int breakage) {
  DpBalancedOptions& options = problem.options;
  switch (breakage) {
    case 0: options.dp_size = 0; break;
    case 1: options.dp_size = -1; break;
    case 2: options.dp_size = kMaxTotalGpus + 1; break;
    case 3: options.cp_size = 0; break;
    case 4: options.cp_size = kMaxTotalGpus + 1; break;
    case 5:
      // Each in range, their product one replica too many.
      options.dp_size = kMaxTotalGpus / options.cp_size + 1;
      break;
    case 6: options.max_seq_len_per_rank = 0; break;
    case 7: options.max_seq_len_per_rank = kMaxSeqLenPerRank + 1; break;
    case 8: options.max_num_seqs = 0; break;
    case 9: options.max_num_seqs = -1; break;
    case 10: options.vpp_group = 0; break;
    case 11: problem.lens.push_back(0); break;
    case 12: problem.lens.push_back(kMaxSampleLen + 1); break;
    default:
      // One token more than a packed sequence of cp_size ranks holds.
      problem.lens.push_back(std::min(kMaxSampleLen,
                                      options.max_seq_len_per_rank * options.cp_size) + 1);
      break;
  }
  return problem;
}

rc::Gen<DpBalancedProblem> GenInvalidDpBalancedProblem() {
  return rc::gen::apply(BreakDpBalanced, GenDpBalancedProblem(), GenCase(kDpBalancedBreakages));
}

namespace {

// One microbatch per plan of `run_plans`: its run sizes, sorted largest first, each run
// holding 2 fresh ids; then an optional defect: 1 grows the runs of the
// last microbatch (smallest first), the one alignment splits first, so an
// input whose CP group sizes increase reaches the run-size check; 2
// empties its last rank; 3 gives it one rank too many. With
// `split` 1 every run of 2 ranks or more, with 2 every second one, is two
// groups that share the run's first id and differ in the second, so a run
// spans groups. With `split` 3 every run of 3 ranks or more is three groups
// whose outer two hold the same list, and the width is twice the first
// microbatch's largest run: that run is then a half of its own when the
// microbatch is split, widening repeats it, which puts two equal lists side
// by side, and they must become one group.
Schedule HandMadeSchedule(int width, const std::vector<std::vector<int>>& run_plans,
                          int defect, int split) {
  const std::vector<int>& first_plan = run_plans.front();
  if (split == 3 && !first_plan.empty()) {
    const int largest = *std::max_element(first_plan.begin(), first_plan.end());
    if (largest >= 3) width = 2 * largest;
  }
  Schedule schedule;
  SampleId next_id = 0;
  int runs_seen = 0;
  for (std::size_t m = 0; m < run_plans.size(); ++m) {
    std::vector<int> sizes = run_plans[m];
    std::sort(sizes.rbegin(), sizes.rend());
    if (defect == 1 && m + 1 == run_plans.size()) std::reverse(sizes.begin(), sizes.end());
    Microbatch microbatch;
    for (const int planned : sizes) {
      const int room = width - static_cast<int>(microbatch.rank_ids.size());
      if (room <= 0) break;
      const int size = std::min(planned, room);
      const bool split_here =
          size >= 2 && (split == 1 || (split == 2 && ++runs_seen % 2 == 0));
      const bool bracket_here = split == 3 && size >= 3;
      const std::vector<SampleId> ids = {next_id, next_id + 1};
      const std::vector<SampleId> other_ids = {next_id, next_id + 2};
      next_id += split_here || bracket_here ? 3 : 2;
      for (int r = 0; r < size; ++r) {
        const bool other = (split_here && r >= size / 2) ||
                           (bracket_here && r >= size / 3 && r < size - size / 3);
        microbatch.rank_ids.push_back(other ? other_ids : ids);
      }
    }
    while (static_cast<int>(microbatch.rank_ids.size()) < width) {
      microbatch.rank_ids.push_back({next_id++});
    }
    schedule.microbatches.push_back(std::move(microbatch));
  }
  if (defect == 2) schedule.microbatches.back().rank_ids.back().clear();
  if (defect == 3) schedule.microbatches.back().rank_ids.push_back({next_id});
  return schedule;
}

}  // namespace

rc::Gen<Schedule> GenHandMadeSchedule() {
  return rc::gen::apply(
      HandMadeSchedule,
      rc::gen::inRange(1, 17),
      rc::gen::nonEmpty(rc::gen::container<std::vector<std::vector<int>>>(
          rc::gen::container<std::vector<int>>(rc::gen::inRange(1, 9)))),
      rc::gen::weightedElement<int>({{12, 0}, {1, 1}, {1, 2}, {1, 3}}),
      rc::gen::weightedElement<int>({{2, 0}, {1, 1}, {1, 2}, {2, 3}}));
}

rc::Gen<Schedule> GenMicrobatchOfFewRuns() {
  return rc::gen::apply(
      [](int width, const std::vector<int>& sizes) {
        return HandMadeSchedule(width, {sizes}, /*defect=*/0, /*split=*/0);
      },
      rc::gen::map(GenCase(15), [](int k) { return 2 + k; }),
      rc::gen::mapcat(GenCase(5), [](int runs) {
        return rc::gen::container<std::vector<int>>(
            static_cast<std::size_t>(runs), rc::gen::map(GenCase(8), [](int k) { return 1 + k; }));
      }));
}

}  // namespace properties
}  // namespace dcpsched

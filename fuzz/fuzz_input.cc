#include "fuzz/fuzz_input.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "io/problem_text.h"

namespace dcpsched::fuzz {
namespace {

// Every field of an input starts with a selector in [0, kSelectorMax] that
// picks how its value is made (a table, a range, an edge value); selector
// kLiteral reads the value itself as any int64. The Decode*/Write* pairs
// below mirror each other: a Write* function only ever writes a selector and
// values that make its Decode* partner return the wanted value.
using Int = std::int64_t;
constexpr Int kMinInt = std::numeric_limits<Int>::min();
constexpr Int kMaxInt = std::numeric_limits<Int>::max();
constexpr Int kSelectorMax = 15;
constexpr Int kLiteral = 15;

// The specification's "Valid input" limits, restated here rather than taken from
// core/validate.h so that IsValidBySpec stays independent of the core.
constexpr Int kSpecMaxTotalGpus = 65536;
constexpr Int kSpecMaxMslpr = (Int{1} << 31) - 1;
constexpr Int kSpecMaxLen = Int{1} << 26;

Int Read(FuzzedDataProvider& data, Int min, Int max) {
  return data.ConsumeIntegralInRange<Int>(min, max);
}

Int ReadSelector(FuzzedDataProvider& data) { return Read(data, 0, kSelectorMax); }

Int ReadLiteral(FuzzedDataProvider& data) { return Read(data, kMinInt, kMaxInt); }

template <std::size_t N>
Int ReadElement(FuzzedDataProvider& data, const Int (&table)[N]) {
  return table[Read(data, 0, static_cast<Int>(N) - 1)];
}

void WriteSelector(FuzzInputWriter& writer, Int selector) {
  writer.WriteInRange(selector, 0, kSelectorMax);
}

void WriteLiteral(FuzzInputWriter& writer, Int value) {
  WriteSelector(writer, kLiteral);
  writer.WriteInRange(value, kMinInt, kMaxInt);
}

bool InRange(Int value, Int min, Int max) { return min <= value && value <= max; }

Int SaturatingMul(Int a, Int b) {
  Int product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) == (b < 0) ? kMaxInt : kMinInt;
}

Int SaturatingAdd(Int a, Int b) {
  Int sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? kMaxInt : kMinInt;
}

// The largest power of two <= value (value >= 1).
Int WidestPowerOfTwo(Int value) {
  return Int{1} << (std::bit_width(static_cast<std::uint64_t>(value)) - 1);
}

// --- G ----------------------------------------------------------------------

constexpr Int kCommonGpus[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 14, 16, 24, 32, 64};
constexpr Int kLargeGpus[] = {128, 512, 1000, 1024, 2048, 4096};
constexpr Int kBadGpus[] = {0, -1, -3, 65537, kMinInt, kMaxInt};

Int DecodeTotalGpus(FuzzedDataProvider& data) {
  const Int selector = ReadSelector(data);
  if (selector <= 7) return ReadElement(data, kCommonGpus);
  if (selector <= 11) return Read(data, 1, 64);
  if (selector == 12) return Read(data, 65, 4096);
  if (selector == 13) return ReadElement(data, kLargeGpus);
  if (selector == 14) return ReadElement(data, kBadGpus);
  return ReadLiteral(data);
}

void WriteTotalGpus(FuzzInputWriter& writer, Int total_gpus) {
  if (InRange(total_gpus, 1, 64)) {
    WriteSelector(writer, 8);
    writer.WriteInRange(total_gpus, 1, 64);
  } else if (InRange(total_gpus, 65, 4096)) {
    WriteSelector(writer, 12);
    writer.WriteInRange(total_gpus, 65, 4096);
  } else {
    WriteLiteral(writer, total_gpus);
  }
}

// --- max_seq_len_per_rank -----------------------------------------------------

constexpr Int kCommonMslpr[] = {37, 100, 128, 512, 1000, 1024, 2048, 4096, 8192};
constexpr Int kEdgeMslpr[] = {kSpecMaxMslpr, Int{1} << 26, Int{1} << 20, 0,      -1,
                              Int{1} << 31,  Int{1} << 32, kMaxInt,      kMinInt};

Int DecodeMslpr(FuzzedDataProvider& data) {
  const Int selector = ReadSelector(data);
  if (selector <= 2) return Read(data, 1, 8);
  if (selector <= 8) return ReadElement(data, kCommonMslpr);
  if (selector <= 11) return Read(data, 1, 65536);
  if (selector == 12) return Read(data, 65537, kSpecMaxMslpr);
  if (selector == 13) return ReadElement(data, kEdgeMslpr);
  if (selector == 14) return Read(data, 1, 100);
  return ReadLiteral(data);
}

void WriteMslpr(FuzzInputWriter& writer, Int mslpr) {
  if (InRange(mslpr, 1, 65536)) {
    WriteSelector(writer, 9);
    writer.WriteInRange(mslpr, 1, 65536);
  } else if (InRange(mslpr, 65537, kSpecMaxMslpr)) {
    WriteSelector(writer, 12);
    writer.WriteInRange(mslpr, 65537, kSpecMaxMslpr);
  } else {
    WriteLiteral(writer, mslpr);
  }
}

// --- min_cp_size --------------------------------------------------------------

constexpr Int kBadMinCp[] = {0, -2, 3, 5, 6, 12, kMinInt};

// Largest exponent e with 2^e <= G, or 0 when G < 1.
Int MaxExponent(Int total_gpus) {
  if (total_gpus < 1) return 0;
  return std::bit_width(static_cast<std::uint64_t>(total_gpus)) - 1;
}

Int DecodeMinCp(FuzzedDataProvider& data, Int total_gpus) {
  const Int selector = ReadSelector(data);
  if (selector <= 10) return 1;
  if (selector <= 13) return Int{1} << Read(data, 0, MaxExponent(total_gpus));
  if (selector == 14) {
    if (Read(data, 0, 1) == 0) return ReadElement(data, kBadMinCp);
    // The power of two just above G (a min_cp_size larger than G).
    return Int{1} << std::min<Int>(MaxExponent(total_gpus) + 1, 62);
  }
  return ReadLiteral(data);
}

void WriteMinCp(FuzzInputWriter& writer, Int min_cp_size) {
  if (min_cp_size == 1) {
    WriteSelector(writer, 0);
  } else {
    WriteLiteral(writer, min_cp_size);
  }
}

// --- vpp_group ----------------------------------------------------------------

constexpr Int kOddVpp[] = {0, -1, 5, 8, 16, kMinInt};

std::optional<Int> DecodeVppGroup(FuzzedDataProvider& data) {
  const Int selector = ReadSelector(data);
  if (selector <= 8) return std::nullopt;
  if (selector <= 12) return Read(data, 1, 4);
  if (selector == 13) return ReadElement(data, kOddVpp);
  if (selector == 14) return Read(data, 1, 64);
  return ReadLiteral(data);
}

void WriteVppGroup(FuzzInputWriter& writer, std::optional<Int> vpp_group) {
  if (!vpp_group.has_value()) {
    WriteSelector(writer, 0);
  } else if (InRange(*vpp_group, 1, 4)) {
    WriteSelector(writer, 9);
    writer.WriteInRange(*vpp_group, 1, 4);
  } else {
    WriteLiteral(writer, *vpp_group);
  }
}

// --- max_num_seqs (dynamic CP) -----------------------------------------------

// The cap is the last field of a dynamic-CP problem, read only after a
// four-byte key, so that inputs written before the cap existed decode as
// they did. Such an input either ends where its samples do (an exhausted
// provider reads 0, not the key) or leaves unread bytes before the ones it
// uses (a fifth of the corpus did): fewer than four of them read below 2^24,
// under the key; four or more make it by a 2^-32 chance, and
// tests/schedule_digest checks that no committed entry does. Behind the key
// a cap is mostly 1..4, where it binds, else 5..16, 1..kMaxSamples (up to
// every sample), below 1, or any int64.
constexpr Int kCapKey = 0x63617073;  // "caps"
constexpr Int kCapKeyMax = 0xFFFFFFFF;
constexpr Int kBadCaps[] = {0, -1, -2, kMinInt};

std::optional<Int> DecodeDynamicCpCap(FuzzedDataProvider& data) {
  if (Read(data, 0, kCapKeyMax) != kCapKey) return std::nullopt;
  const Int selector = ReadSelector(data);
  if (selector <= 9) return Read(data, 1, 4);
  if (selector <= 11) return Read(data, 5, 16);
  if (selector == 12) return Read(data, 1, kMaxSamples);
  if (selector <= 14) return ReadElement(data, kBadCaps);
  return ReadLiteral(data);
}

// Writes nothing when there is no cap: the decoder then finds no key.
void WriteDynamicCpCap(FuzzInputWriter& writer, std::optional<Int> max_num_seqs) {
  if (!max_num_seqs.has_value()) return;
  writer.WriteInRange(kCapKey, 0, kCapKeyMax);
  if (InRange(*max_num_seqs, 1, 4)) {
    WriteSelector(writer, 0);
    writer.WriteInRange(*max_num_seqs, 1, 4);
  } else if (InRange(*max_num_seqs, 5, 16)) {
    WriteSelector(writer, 10);
    writer.WriteInRange(*max_num_seqs, 5, 16);
  } else if (InRange(*max_num_seqs, 1, kMaxSamples)) {
    WriteSelector(writer, 12);
    writer.WriteInRange(*max_num_seqs, 1, kMaxSamples);
  } else {
    WriteLiteral(writer, *max_num_seqs);
  }
}

// --- lengths ------------------------------------------------------------------

// A length relative to `unit` (the token budget of one rank, or of one packed
// sequence for dp_balanced) and to the previous sample's length.
constexpr Int kEdgeLengths[] = {0, -1, kSpecMaxLen, kSpecMaxLen + 1, kMinInt, kMaxInt, 1};
constexpr Int kMaxMultiple = 8;

Int Boundary(Int multiple, Int delta, Int unit) {
  return SaturatingAdd(SaturatingMul(multiple, unit), delta);
}

Int DecodeLength(FuzzedDataProvider& data, Int unit, Int previous) {
  const Int selector = ReadSelector(data);
  if (selector <= 2) return Read(data, 1, 16);
  if (selector <= 6) return Read(data, 128, 8192);
  if (selector <= 9) {
    const Int multiple = Read(data, 1, kMaxMultiple);
    return Boundary(multiple, Read(data, -1, 1), unit);
  }
  if (selector <= 11) return previous;
  if (selector == 12) return Read(data, 8193, kSpecMaxLen);
  if (selector == 13) return ReadElement(data, kEdgeLengths);
  if (selector == 14) return Read(data, 1, std::max<Int>(1, SaturatingMul(unit, 4)));
  return ReadLiteral(data);
}

void WriteLength(FuzzInputWriter& writer, Int len, Int unit, Int previous) {
  if (len == previous) {
    WriteSelector(writer, 10);
    return;
  }
  if (InRange(len, 1, 16)) {
    WriteSelector(writer, 0);
    writer.WriteInRange(len, 1, 16);
    return;
  }
  if (InRange(len, 128, 8192)) {
    WriteSelector(writer, 3);
    writer.WriteInRange(len, 128, 8192);
    return;
  }
  for (Int multiple = 1; multiple <= kMaxMultiple; ++multiple) {
    for (Int delta = -1; delta <= 1; ++delta) {
      if (Boundary(multiple, delta, unit) != len) continue;
      WriteSelector(writer, 7);
      writer.WriteInRange(multiple, 1, kMaxMultiple);
      writer.WriteInRange(delta, -1, 1);
      return;
    }
  }
  const Int up_to_four_units = std::max<Int>(1, SaturatingMul(unit, 4));
  if (InRange(len, 1, up_to_four_units)) {
    WriteSelector(writer, 14);
    writer.WriteInRange(len, 1, up_to_four_units);
    return;
  }
  if (InRange(len, 8193, kSpecMaxLen)) {
    WriteSelector(writer, 12);
    writer.WriteInRange(len, 8193, kSpecMaxLen);
    return;
  }
  WriteLiteral(writer, len);
}

// Whether lengths are clamped into [1, longest], what the ranks can hold (3 in
// 4 inputs), so that most problems stay valid; the rest keep lengths out of
// range and too long for G. Nothing is clamped when `longest` < 1 (G or the
// budget is out of range).
constexpr Int kFitSelectorMax = 3;
constexpr Int kDoNotFit = 3;

bool DecodeFit(FuzzedDataProvider& data) { return Read(data, 0, kFitSelectorMax) != kDoNotFit; }

Int Fit(Int len, Int longest) {
  if (longest < 1) return len;
  return std::clamp<Int>(len, 1, longest);
}

// The longest length that G ranks of `mslpr` tokens hold, or 0 when G or
// mslpr is out of range.
Int LongestFitting(Int total_gpus, Int mslpr) {
  if (!InRange(total_gpus, 1, kSpecMaxTotalGpus) || !InRange(mslpr, 1, kSpecMaxMslpr)) return 0;
  return std::min(kSpecMaxLen, WidestPowerOfTwo(total_gpus) * mslpr);
}

// --- sample ids ---------------------------------------------------------------

// How a problem's ids are made.
constexpr Int kIdsPositionsMax = 9;      // 0..9: id = position
constexpr Int kIdsScrambledMax = 12;     // 10..12: a bijective scramble
constexpr Int kIdsOneDuplicateMax = 13;  // 13: positions, then one copied
constexpr Int kIdsSmall = 14;            // each id in [-4, 4]
constexpr Int kIdsLiteral = 15;          // each id any int64

SampleId ScrambledId(std::size_t index, std::uint64_t salt) {
  return static_cast<SampleId>(static_cast<std::uint64_t>(index) * 0x9E3779B97F4A7C15ULL + salt);
}

bool IdsArePositions(const std::vector<Sample>& samples) {
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].id != static_cast<SampleId>(i)) return false;
  }
  return true;
}

// --- hand-made schedules --------------------------------------------------------

constexpr Int kOddWidths[] = {3, 5, 6, 7, 12, 14, 24, 32, 64};
constexpr Int kEdgeWidths[] = {0, 1, kMaxScheduleWidth - 1, kMaxScheduleWidth};

Int DecodeWidth(FuzzedDataProvider& data) {
  const Int selector = ReadSelector(data);
  if (selector <= 9) return Read(data, 1, 16);
  if (selector <= 12) return ReadElement(data, kOddWidths);
  if (selector == 13) return ReadElement(data, kEdgeWidths);
  return Read(data, 0, kMaxScheduleWidth);
}

constexpr Int kMaxRuns = 8;
constexpr Int kMaxIdsPerRun = 3;

// Runs of equal id lists with fresh ids, then fresh single-id ranks up to
// `width`, then maybe one defect.
Microbatch DecodeStructuredMicrobatch(FuzzedDataProvider& data, Int width, SampleId& next_id) {
  std::vector<Int> sizes(static_cast<std::size_t>(Read(data, 1, kMaxRuns)));
  for (Int& size : sizes) {
    size =
        Read(data, 0, 3) < 3 ? Int{1} << Read(data, 0, 4) : Read(data, 1, std::max<Int>(width, 1));
  }
  const bool growing = Read(data, 0, 7) == 0;
  if (growing) {
    std::sort(sizes.begin(), sizes.end());
  } else {
    std::sort(sizes.rbegin(), sizes.rend());
  }
  Microbatch microbatch;
  auto& ranks = microbatch.rank_ids;
  for (const Int planned : sizes) {
    const Int room = width - static_cast<Int>(ranks.size());
    if (room <= 0) break;
    std::vector<SampleId> ids(static_cast<std::size_t>(Read(data, 1, kMaxIdsPerRun)));
    for (SampleId& id : ids) id = next_id++;
    ranks.insert(ranks.end(), static_cast<std::size_t>(std::min(planned, room)), ids);
  }
  while (static_cast<Int>(ranks.size()) < width) ranks.push_back({next_id++});
  const Int defect = ReadSelector(data);
  if (defect == 12 && !ranks.empty()) ranks.back().clear();          // an empty rank
  if (defect == 13) ranks.push_back({next_id++});                    // one rank too many
  if (defect == 14 && !ranks.empty()) ranks.pop_back();              // one rank too few
  if (defect == 15 && !ranks.empty()) ranks.back() = ranks.front();  // a run split apart
  return microbatch;
}

// A literal microbatch: any number of ranks (up to kMaxScheduleWidth), each
// with up to kMaxIdsPerRank ids, either small ids in [0, kMaxSmallId] (so
// that ids repeat across ranks in every pattern) or any int64.
constexpr Int kSmallIdsMicrobatch = 14;
constexpr Int kMaxSmallId = 63;

Microbatch DecodeLiteralMicrobatch(FuzzedDataProvider& data, bool small_ids) {
  const Int min_id = small_ids ? 0 : kMinInt;
  const Int max_id = small_ids ? kMaxSmallId : kMaxInt;
  Microbatch microbatch;
  microbatch.rank_ids.resize(static_cast<std::size_t>(Read(data, 0, kMaxScheduleWidth)));
  for (std::vector<SampleId>& ids : microbatch.rank_ids) {
    ids.resize(static_cast<std::size_t>(Read(data, 0, kMaxIdsPerRank)));
    for (SampleId& id : ids) id = Read(data, min_id, max_id);
  }
  return microbatch;
}

void WriteLiteralMicrobatch(FuzzInputWriter& writer, const Microbatch& microbatch) {
  bool small_ids = true;
  for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
    for (const SampleId id : ids) small_ids = small_ids && InRange(id, 0, kMaxSmallId);
  }
  const Int min_id = small_ids ? 0 : kMinInt;
  const Int max_id = small_ids ? kMaxSmallId : kMaxInt;
  WriteSelector(writer, small_ids ? kSmallIdsMicrobatch : kLiteral);
  writer.WriteInRange(static_cast<Int>(microbatch.rank_ids.size()), 0, kMaxScheduleWidth);
  for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
    writer.WriteInRange(static_cast<Int>(ids.size()), 0, kMaxIdsPerRank);
    for (const SampleId id : ids) writer.WriteInRange(id, min_id, max_id);
  }
}

constexpr Int kOddAlignmentVpp[] = {0, -1, kMinInt, 16, 64, kMaxInt};

Int DecodeAlignmentVppGroup(FuzzedDataProvider& data) {
  const Int selector = ReadSelector(data);
  if (selector <= 11) return Read(data, 1, 8);
  if (selector == 12) return ReadElement(data, kOddAlignmentVpp);
  if (selector <= 14) return Read(data, 1, 64);
  return ReadLiteral(data);
}

void WriteAlignmentVppGroup(FuzzInputWriter& writer, Int vpp_group) {
  if (InRange(vpp_group, 1, 8)) {
    WriteSelector(writer, 0);
    writer.WriteInRange(vpp_group, 1, 8);
  } else {
    WriteLiteral(writer, vpp_group);
  }
}

// --- dp_balanced --------------------------------------------------------------

constexpr Int kCommonDp[] = {1, 2, 3, 4, 7, 8};
constexpr Int kOddDp[] = {0, -1, 65537, 256, 4096};
constexpr Int kCommonCp[] = {1, 2, 3, 4, 8};
constexpr Int kOddCp[] = {0, -1, 65537, 1024, 65536};
constexpr Int kOddMaxNumSeqs[] = {0, -1, kMinInt};

template <std::size_t N, std::size_t M>
Int DecodeParallelSize(FuzzedDataProvider& data, const Int (&common)[N], const Int (&odd)[M]) {
  const Int selector = ReadSelector(data);
  if (selector <= 9) return ReadElement(data, common);
  if (selector <= 12) return Read(data, 1, 16);
  if (selector == 13) return ReadElement(data, odd);
  if (selector == 14) return Read(data, 1, 256);
  return ReadLiteral(data);
}

void WriteParallelSize(FuzzInputWriter& writer, Int size) {
  if (InRange(size, 1, 16)) {
    WriteSelector(writer, 10);
    writer.WriteInRange(size, 1, 16);
  } else {
    WriteLiteral(writer, size);
  }
}

std::optional<Int> DecodeMaxNumSeqs(FuzzedDataProvider& data) {
  const Int selector = ReadSelector(data);
  if (selector <= 9) return std::nullopt;
  if (selector <= 12) return Read(data, 1, 5);
  if (selector == 13) return ReadElement(data, kOddMaxNumSeqs);
  if (selector == 14) return Read(data, 1, 64);
  return ReadLiteral(data);
}

void WriteMaxNumSeqs(FuzzInputWriter& writer, std::optional<Int> max_num_seqs) {
  if (!max_num_seqs.has_value()) {
    WriteSelector(writer, 0);
  } else if (InRange(*max_num_seqs, 1, 5)) {
    WriteSelector(writer, 10);
    writer.WriteInRange(*max_num_seqs, 1, 5);
  } else {
    WriteLiteral(writer, *max_num_seqs);
  }
}

std::string OptionalText(const std::optional<Int>& value) {
  return value.has_value() ? absl::StrCat(*value) : "none";
}

std::string IdListText(const std::vector<SampleId>& ids) {
  return absl::StrCat("[", absl::StrJoin(ids, ","), "]");
}

}  // namespace

std::int64_t MaxSamplesFor(std::int64_t ranks) {
  if (!InRange(ranks, 1, kSpecMaxTotalGpus)) return kMaxSamples;
  if (ranks > kRankSampleBudget) return 1;
  return std::min(kMaxSamples, std::max<Int>(2, kRankSampleBudget / ranks));
}

DynamicCpProblem DecodeDynamicCpProblem(FuzzedDataProvider& data) {
  DynamicCpProblem problem;
  DynamicCpOptions& options = problem.options;
  options.total_gpus = DecodeTotalGpus(data);
  options.max_seq_len_per_rank = DecodeMslpr(data);
  options.min_cp_size = DecodeMinCp(data, options.total_gpus);
  options.vpp_group = DecodeVppGroup(data);
  const Int longest =
      DecodeFit(data) ? LongestFitting(options.total_gpus, options.max_seq_len_per_rank) : 0;
  const Int id_mode = ReadSelector(data);
  const auto salt = static_cast<std::uint64_t>(
      id_mode > kIdsPositionsMax && id_mode <= kIdsScrambledMax ? ReadLiteral(data) : 0);
  const Int count = std::min(Read(data, 0, kMaxSamples), MaxSamplesFor(options.total_gpus));
  Int previous = 1;
  for (Int i = 0; i < count; ++i) {
    const auto index = static_cast<std::size_t>(i);
    SampleId id = i;
    if (id_mode == kIdsSmall) id = Read(data, -4, 4);
    if (id_mode == kIdsLiteral) id = ReadLiteral(data);
    if (id_mode > kIdsPositionsMax && id_mode <= kIdsScrambledMax) id = ScrambledId(index, salt);
    previous = Fit(DecodeLength(data, options.max_seq_len_per_rank, previous), longest);
    problem.samples.push_back(Sample{id, previous});
  }
  if (id_mode > kIdsScrambledMax && id_mode <= kIdsOneDuplicateMax && count >= 2) {
    const auto from = static_cast<std::size_t>(Read(data, 0, count - 1));
    problem.samples[static_cast<std::size_t>(Read(data, 0, count - 1))].id =
        problem.samples[from].id;
  }
  options.max_num_seqs = DecodeDynamicCpCap(data);
  return problem;
}

properties::DpBalancedProblem DecodeDpBalancedProblem(FuzzedDataProvider& data) {
  properties::DpBalancedProblem problem;
  DpBalancedOptions& options = problem.options;
  options.dp_size = DecodeParallelSize(data, kCommonDp, kOddDp);
  options.cp_size = DecodeParallelSize(data, kCommonCp, kOddCp);
  options.max_seq_len_per_rank = DecodeMslpr(data);
  options.max_num_seqs = DecodeMaxNumSeqs(data);
  options.vpp_group = DecodeVppGroup(data);
  const Int budget = SaturatingMul(options.max_seq_len_per_rank, options.cp_size);
  const bool fit = DecodeFit(data) && InRange(options.cp_size, 1, kSpecMaxTotalGpus) &&
                   InRange(options.max_seq_len_per_rank, 1, kSpecMaxMslpr);
  const Int longest = fit ? std::min(kSpecMaxLen, budget) : 0;
  const Int count = std::min(Read(data, 0, kMaxSamples),
                             MaxSamplesFor(SaturatingMul(options.dp_size, options.cp_size)));
  Int previous = 1;
  for (Int i = 0; i < count; ++i) {
    previous = Fit(DecodeLength(data, budget, previous), longest);
    problem.lens.push_back(previous);
  }
  return problem;
}

Schedule DecodeSchedule(FuzzedDataProvider& data) {
  const Int width = DecodeWidth(data);
  const Int count = Read(data, 0, kMaxScheduleMicrobatches);
  Schedule schedule;
  SampleId next_id = 0;
  for (Int m = 0; m < count; ++m) {
    const Int selector = ReadSelector(data);
    if (selector >= kSmallIdsMicrobatch) {
      schedule.microbatches.push_back(
          DecodeLiteralMicrobatch(data, selector == kSmallIdsMicrobatch));
    } else {
      schedule.microbatches.push_back(DecodeStructuredMicrobatch(data, width, next_id));
    }
  }
  return schedule;
}

VppAlignInput DecodeVppAlignInput(FuzzedDataProvider& data) {
  VppAlignInput input;
  input.vpp_group = DecodeAlignmentVppGroup(data);
  input.schedule = DecodeSchedule(data);
  return input;
}

bool IsValidBySpec(const DynamicCpProblem& problem) {
  const DynamicCpOptions& options = problem.options;
  const Int total_gpus = options.total_gpus;
  const Int mslpr = options.max_seq_len_per_rank;
  const Int min_cp = options.min_cp_size;
  if (!InRange(total_gpus, 1, kSpecMaxTotalGpus) || !InRange(mslpr, 1, kSpecMaxMslpr)) return false;
  if (!InRange(min_cp, 1, total_gpus) || !std::has_single_bit(static_cast<std::uint64_t>(min_cp))) {
    return false;
  }
  if (options.vpp_group.has_value() && *options.vpp_group < 1) return false;
  if (options.max_num_seqs.has_value() && *options.max_num_seqs < 1) return false;
  absl::flat_hash_set<SampleId> ids;
  for (const Sample& sample : problem.samples) {
    if (!InRange(sample.len, 1, kSpecMaxLen) || !ids.insert(sample.id).second) return false;
    // cp_min(len): the smallest power of two c with c * mslpr >= len, at
    // least min_cp. Exact: c <= 2^26 and mslpr < 2^31.
    Int cp = 1;
    while (cp * mslpr < sample.len) cp *= 2;
    if (std::max(cp, min_cp) > total_gpus) return false;
  }
  return true;
}

std::string FormatDpBalancedProblem(const properties::DpBalancedProblem& problem) {
  const DpBalancedOptions& options = problem.options;
  return absl::StrCat(
      "dp=", options.dp_size, " cp=", options.cp_size, " mslpr=", options.max_seq_len_per_rank,
      " max_num_seqs=", OptionalText(options.max_num_seqs),
      " vpp=", OptionalText(options.vpp_group), " lens=", absl::StrJoin(problem.lens, ","));
}

std::string FormatSchedule(const Schedule& schedule) {
  std::vector<std::string> microbatches;
  for (const Microbatch& microbatch : schedule.microbatches) {
    std::vector<std::string> ranks;
    for (const std::vector<SampleId>& ids : microbatch.rank_ids) ranks.push_back(IdListText(ids));
    microbatches.push_back(absl::StrCat("[", absl::StrJoin(ranks, ","), "]"));
  }
  return absl::StrCat("[", absl::StrJoin(microbatches, ", "), "]");
}

std::string FormatVppAlignInput(const VppAlignInput& input) {
  return absl::StrCat("vpp=", input.vpp_group, " schedule=", FormatSchedule(input.schedule));
}

std::optional<TargetInput> DecodeTargetInput(absl::string_view target,
                                             absl::Span<const std::uint8_t> bytes) {
  FuzzedDataProvider data(bytes.data(), bytes.size());
  if (target == "fuzz_packing_aware" || target == "fuzz_packing_aware_differential" ||
      target == "fuzz_legacy" || target == "fuzz_cost_aware") {
    return DecodeDynamicCpProblem(data);
  }
  if (target == "fuzz_dp_balanced") return DecodeDpBalancedProblem(data);
  if (target == "fuzz_vpp_align") return DecodeVppAlignInput(data);
  return std::nullopt;
}

std::string FormatTargetInput(const TargetInput& input) {
  struct Formatter {
    std::string operator()(const DynamicCpProblem& problem) const { return FormatProblem(problem); }
    std::string operator()(const properties::DpBalancedProblem& problem) const {
      return FormatDpBalancedProblem(problem);
    }
    std::string operator()(const VppAlignInput& alignment) const {
      return FormatVppAlignInput(alignment);
    }
  };
  return std::visit(Formatter{}, input);
}

void ReportAndAbort(absl::string_view target, absl::string_view what, const absl::Status& status,
                    absl::string_view input) {
  const std::string line = absl::StrCat("dcpsched ", target, ": ", what, ": ", status.ToString(),
                                        "; input: ", input, "\n");
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  std::abort();
}

absl::Status FuzzInputWriter::WriteDynamicCpProblem(const DynamicCpProblem& problem) {
  const DynamicCpOptions& options = problem.options;
  const auto count = static_cast<Int>(problem.samples.size());
  if (count > MaxSamplesFor(options.total_gpus)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the decoder makes at most ", MaxSamplesFor(options.total_gpus),
                     " samples for G=", options.total_gpus, ", not ", count));
  }
  WriteTotalGpus(*this, options.total_gpus);
  WriteMslpr(*this, options.max_seq_len_per_rank);
  WriteMinCp(*this, options.min_cp_size);
  WriteVppGroup(*this, options.vpp_group);
  WriteInRange(kDoNotFit, 0, kFitSelectorMax);
  const bool positions = IdsArePositions(problem.samples);
  WriteSelector(*this, positions ? 0 : kIdsLiteral);
  WriteInRange(count, 0, kMaxSamples);
  Int previous = 1;
  for (const Sample& sample : problem.samples) {
    if (!positions) WriteInRange(sample.id, kMinInt, kMaxInt);
    WriteLength(*this, sample.len, options.max_seq_len_per_rank, previous);
    previous = sample.len;
  }
  WriteDynamicCpCap(*this, options.max_num_seqs);
  return absl::OkStatus();
}

absl::Status FuzzInputWriter::WriteDpBalancedProblem(const properties::DpBalancedProblem& problem) {
  const DpBalancedOptions& options = problem.options;
  const auto count = static_cast<Int>(problem.lens.size());
  const Int ranks = SaturatingMul(options.dp_size, options.cp_size);
  if (count > MaxSamplesFor(ranks)) {
    return absl::InvalidArgumentError(absl::StrCat("the decoder makes at most ",
                                                   MaxSamplesFor(ranks),
                                                   " samples for dp*cp=", ranks, ", not ", count));
  }
  WriteParallelSize(*this, options.dp_size);
  WriteParallelSize(*this, options.cp_size);
  WriteMslpr(*this, options.max_seq_len_per_rank);
  WriteMaxNumSeqs(*this, options.max_num_seqs);
  WriteVppGroup(*this, options.vpp_group);
  WriteInRange(kDoNotFit, 0, kFitSelectorMax);
  WriteInRange(count, 0, kMaxSamples);
  const Int budget = SaturatingMul(options.max_seq_len_per_rank, options.cp_size);
  Int previous = 1;
  for (const Int len : problem.lens) {
    WriteLength(*this, len, budget, previous);
    previous = len;
  }
  return absl::OkStatus();
}

absl::Status FuzzInputWriter::WriteSchedule(const Schedule& schedule) {
  const auto count = static_cast<Int>(schedule.microbatches.size());
  if (count > kMaxScheduleMicrobatches) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the decoder makes at most ", kMaxScheduleMicrobatches, " microbatches, not ", count));
  }
  for (const Microbatch& microbatch : schedule.microbatches) {
    if (static_cast<Int>(microbatch.rank_ids.size()) > kMaxScheduleWidth) {
      return absl::InvalidArgumentError(
          absl::StrCat("the decoder makes at most ", kMaxScheduleWidth,
                       " ranks per microbatch, not ", microbatch.rank_ids.size()));
    }
    for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
      if (static_cast<Int>(ids.size()) > kMaxIdsPerRank) {
        return absl::InvalidArgumentError(absl::StrCat("the decoder makes at most ", kMaxIdsPerRank,
                                                       " ids per rank, not ", ids.size()));
      }
    }
  }
  // Literal microbatches ignore the width.
  WriteSelector(*this, 0);
  WriteInRange(1, 1, 16);
  WriteInRange(count, 0, kMaxScheduleMicrobatches);
  for (const Microbatch& microbatch : schedule.microbatches)
    WriteLiteralMicrobatch(*this, microbatch);
  return absl::OkStatus();
}

absl::Status FuzzInputWriter::WriteVppAlignInput(const VppAlignInput& input) {
  FuzzInputWriter schedule_writer;
  if (absl::Status status = schedule_writer.WriteSchedule(input.schedule); !status.ok())
    return status;
  WriteAlignmentVppGroup(*this, input.vpp_group);
  consumed_.insert(consumed_.end(), schedule_writer.consumed_.begin(),
                   schedule_writer.consumed_.end());
  return absl::OkStatus();
}

void FuzzInputWriter::WriteInRange(std::int64_t value, std::int64_t min, std::int64_t max) {
  // ConsumeIntegralInRange reads one byte per 8 bits of max - min (up to 8
  // bytes), most significant first, and returns min + (bytes % (range + 1)).
  const std::uint64_t range = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
  const std::uint64_t offset = static_cast<std::uint64_t>(value) - static_cast<std::uint64_t>(min);
  int bytes = 0;
  while (bytes < 8 && (range >> (8 * bytes)) > 0) ++bytes;
  for (int i = bytes - 1; i >= 0; --i)
    consumed_.push_back(static_cast<std::uint8_t>(offset >> (8 * i)));
}

std::vector<std::uint8_t> FuzzInputWriter::Bytes() const {
  return std::vector<std::uint8_t>(consumed_.rbegin(), consumed_.rend());
}

}  // namespace dcpsched::fuzz

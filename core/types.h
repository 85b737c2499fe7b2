// Value types shared by every scheduler in dcpsched.
//
// A schedule assigns each sample of a global batch to a contiguous run of
// DPxCP ranks (its CP group) in one microbatch. These types describe the
// problem and the answer without reference to the algorithm that produced it,
// so that callers, the schedule checker and the reference oracle can all read
// them.

#ifndef DCPSCHED_CORE_TYPES_H_
#define DCPSCHED_CORE_TYPES_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace dcpsched {

// Opaque sample identifier, unique within one scheduling call.
using SampleId = std::int64_t;

// One training sequence: its identifier and its length in tokens.
struct Sample {
  SampleId id = 0;
  std::int64_t len = 0;

  friend bool operator==(const Sample&, const Sample&) = default;
};

// One microbatch: for every DPxCP rank r in [0, G), the ids of the samples
// that rank processes, in placement order. A sample held by c ranks is split
// c ways by context parallelism.
struct Microbatch {
  std::vector<std::vector<SampleId>> rank_ids;

  friend bool operator==(const Microbatch&, const Microbatch&) = default;
};

// The microbatches of one global batch, in execution order.
struct Schedule {
  std::vector<Microbatch> microbatches;

  friend bool operator==(const Schedule&, const Schedule&) = default;
};

// Parameters of the dynamic-CP schedulers (packing-aware and legacy).
struct DynamicCpOptions {
  // G: number of DPxCP ranks (dp_size * cp_size), 1..65536.
  std::int64_t total_gpus = 0;
  // Token budget of one rank in one microbatch, 1..2^31-1.
  std::int64_t max_seq_len_per_rank = 0;
  // Smallest CP group a sample may use: a power of two, 1..G.
  std::int64_t min_cp_size = 1;
  // microbatch_group_size_per_vp_stage: when set and > 1, the number of
  // microbatches is made a multiple of it (see vpp_align.h).
  std::optional<std::int64_t> vpp_group;
  // Packing-aware only: when set (>= 1), no rank holds more than this many
  // samples in one microbatch (upstream's max_num_seqs, Megatron-LM PR #6479,
  // which wrap_data_iterator derives from thd_max_packed_sequences for CUDA
  // graphs' static THD capacity). Unset: no cap, as on Megatron-LM dev.
  std::optional<std::int64_t> max_num_seqs;

  friend bool operator==(const DynamicCpOptions&,
                         const DynamicCpOptions&) = default;
};

// What the number of microbatches must be a multiple of: vpp_group where
// it is set and > 1, else 1.
inline std::int64_t MicrobatchCountMultiple(const DynamicCpOptions& options) {
  return options.vpp_group.has_value() && *options.vpp_group > 1 ? *options.vpp_group : 1;
}

// A dynamic-CP scheduling problem: one global batch and its options.
struct DynamicCpProblem {
  std::vector<Sample> samples;
  DynamicCpOptions options;

  friend bool operator==(const DynamicCpProblem&,
                         const DynamicCpProblem&) = default;
};

// Parameters of the fixed-CP dp_balanced scheduler.
struct DpBalancedOptions {
  std::int64_t dp_size = 0;
  std::int64_t cp_size = 0;
  std::int64_t max_seq_len_per_rank = 0;
  // At most this many samples in one packed sequence, when set (>= 1).
  std::optional<std::int64_t> max_num_seqs;
  // When set, the number of packed sequences becomes a multiple of
  // dp_size * vpp_group.
  std::optional<std::int64_t> vpp_group;
};

// One microbatch as the packing-aware step builds it (upstream's 4-tuple):
// per rank the lengths and ids it holds, in placement order, per rank its
// attention work, and the samples that did not fit.
struct PackedMicrobatch {
  std::vector<std::vector<std::int64_t>> rank_lens;
  Microbatch microbatch;
  std::vector<double> rank_work;
  std::vector<Sample> leftovers;

  friend bool operator==(const PackedMicrobatch&,
                         const PackedMicrobatch&) = default;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_TYPES_H_

// Value types shared by every scheduler in dcpsched.
//
// A schedule assigns each sample of a global batch to a contiguous run of
// DPxCP ranks (its CP group) in one microbatch. These types describe the
// problem and the answer without reference to the algorithm that produced it,
// so that callers, the schedule checker and the reference oracle can all read
// them.
//
// Equality of a type with more than one member is spelled out member by
// member rather than defaulted: clang's coverage never counts the false
// outcomes of a defaulted comparison (llvm/llvm-project#75924), and
// scripts/coverage.sh measures every branch of core/. tests/types_test.cc
// checks that each member takes part.

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

  friend bool operator==(const Sample& a, const Sample& b) {
    return a.id == b.id && a.len == b.len;
  }
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

  friend bool operator==(const DynamicCpOptions& a,
                         const DynamicCpOptions& b) {
    return a.total_gpus == b.total_gpus &&
           a.max_seq_len_per_rank == b.max_seq_len_per_rank &&
           a.min_cp_size == b.min_cp_size && a.vpp_group == b.vpp_group;
  }
};

// A dynamic-CP scheduling problem: one global batch and its options.
struct DynamicCpProblem {
  std::vector<Sample> samples;
  DynamicCpOptions options;

  friend bool operator==(const DynamicCpProblem& a,
                         const DynamicCpProblem& b) {
    return a.samples == b.samples && a.options == b.options;
  }
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

  friend bool operator==(const PackedMicrobatch& a,
                         const PackedMicrobatch& b) {
    return a.rank_lens == b.rank_lens && a.microbatch == b.microbatch &&
           a.rank_work == b.rank_work && a.leftovers == b.leftovers;
  }
};

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_TYPES_H_

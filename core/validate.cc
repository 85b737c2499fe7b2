#include "core/validate.h"

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/cost_model.h"

namespace dcpsched {
namespace {

absl::Status CheckInRange(absl::string_view name, std::int64_t value,
                          std::int64_t low, std::int64_t high) {
  if (value >= low && value <= high) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, " is ", value, "; it must be in [", low, ", ", high, "]"));
}

absl::Status CheckOptionalAtLeastOne(absl::string_view name,
                                     const std::optional<std::int64_t>& value) {
  if (!value.has_value() || *value >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, " is ", *value, "; it must be absent or at least 1"));
}

bool IsValidSampleLength(std::int64_t len) {
  return len >= 1 && len <= kMaxSampleLen;
}

absl::Status SampleLengthError(std::size_t index, absl::string_view what,
                               std::int64_t len) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " (index ", index, ") has length ", len,
                   "; lengths must be in [1, ", kMaxSampleLen, "]"));
}

}  // namespace

bool IsPowerOfTwo(std::int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

absl::Status ValidateDynamicCpOptions(const DynamicCpOptions& options) {
  if (absl::Status status =
          CheckInRange("total_gpus", options.total_gpus, 1, kMaxTotalGpus);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          CheckInRange("max_seq_len_per_rank", options.max_seq_len_per_rank, 1,
                       kMaxSeqLenPerRank);
      !status.ok()) {
    return status;
  }
  if (!IsPowerOfTwo(options.min_cp_size) ||
      options.min_cp_size > options.total_gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min_cp_size is ", options.min_cp_size,
        "; it must be a power of two between 1 and total_gpus (",
        options.total_gpus, ")"));
  }
  if (absl::Status status =
          CheckOptionalAtLeastOne("vpp_group", options.vpp_group);
      !status.ok()) {
    return status;
  }
  return CheckOptionalAtLeastOne("max_num_seqs", options.max_num_seqs);
}

absl::Status ValidateDynamicCpProblem(absl::Span<const Sample> samples,
                                      const DynamicCpOptions& options) {
  if (absl::Status status = ValidateDynamicCpOptions(options); !status.ok()) {
    return status;
  }
  absl::flat_hash_map<SampleId, std::size_t> index_of_id;
  index_of_id.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& sample = samples[i];
    if (!IsValidSampleLength(sample.len)) {
      return SampleLengthError(i, absl::StrCat("sample ", sample.id), sample.len);
    }
    const auto [it, inserted] = index_of_id.try_emplace(sample.id, i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample id ", sample.id, " appears twice (indices ", it->second,
          " and ", i, "); ids must be unique within one call"));
    }
    const std::int64_t cp_size =
        MinCpSize(sample.len, options.max_seq_len_per_rank, options.min_cp_size);
    if (cp_size > options.total_gpus) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Sequence length ", sample.len, " (sample ", sample.id,
          ") requires CP size ", cp_size, ", but only ", options.total_gpus,
          " DPxCP ranks are available; raise max_seq_len_per_rank (",
          options.max_seq_len_per_rank, ") or the number of ranks"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateDpBalancedProblem(absl::Span<const std::int64_t> lens,
                                       const DpBalancedOptions& options) {
  if (absl::Status status =
          CheckInRange("dp_size", options.dp_size, 1, kMaxTotalGpus);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          CheckInRange("cp_size", options.cp_size, 1, kMaxTotalGpus);
      !status.ok()) {
    return status;
  }
  if (options.dp_size * options.cp_size > kMaxTotalGpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dp_size * cp_size is ", options.dp_size * options.cp_size,
        "; it must be at most ", kMaxTotalGpus));
  }
  if (absl::Status status =
          CheckInRange("max_seq_len_per_rank", options.max_seq_len_per_rank, 1,
                       kMaxSeqLenPerRank);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          CheckOptionalAtLeastOne("max_num_seqs", options.max_num_seqs);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          CheckOptionalAtLeastOne("vpp_group", options.vpp_group);
      !status.ok()) {
    return status;
  }
  const std::int64_t packed_capacity =
      options.max_seq_len_per_rank * options.cp_size;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    if (!IsValidSampleLength(lens[i])) {
      return SampleLengthError(i, absl::StrCat("sample at position ", i), lens[i]);
    }
    if (lens[i] > packed_capacity) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample at position ", i, " has length ", lens[i],
          ", more than one packed sequence holds (max_seq_len_per_rank * "
          "cp_size = ",
          packed_capacity, "); raise max_seq_len_per_rank or cp_size"));
    }
  }
  return absl::OkStatus();
}

}  // namespace dcpsched

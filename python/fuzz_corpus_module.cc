// The extension module `dcpsched._fuzz_corpus`: the fuzz targets' input
// decoder (fuzz/fuzz_input.h), so Python reads the committed fuzz corpora as
// the fuzzers do, with no second decoder. The conformance check
// (dcpsched.conformance) runs every corpus problem through upstream's Python
// and dcpsched side by side.
//
// Built only where the decoder is (a CMake build with the tests or the
// fuzzers, which need LLVM's FuzzedDataProvider.h and RapidCheck): not in
// the pip wheel, whose users pass generated problems or their own corpora
// to a source build instead.

// pybind11 includes Python.h, which must come before the standard headers.
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "fuzzer/FuzzedDataProvider.h"

#ifndef DCPSCHED_SOURCE_DIR
#error "DCPSCHED_SOURCE_DIR (the source tree, holding corpus/) must be defined"
#endif

namespace dcpsched {
namespace {

namespace py = ::pybind11;

py::object OptionalToPython(const std::optional<std::int64_t>& value) {
  if (!value) return py::none();
  return py::int_(*value);
}

py::list SamplesToPython(const std::vector<Sample>& samples) {
  py::list pairs(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    pairs[i] = py::make_tuple(samples[i].id, samples[i].len);
  }
  return pairs;
}

py::dict DecodeDynamicCp(FuzzedDataProvider& data) {
  const DynamicCpProblem problem = fuzz::DecodeDynamicCpProblem(data);
  py::dict result;
  result["kind"] = "dynamic_cp";
  result["samples"] = SamplesToPython(problem.samples);
  result["total_gpus"] = problem.options.total_gpus;
  result["max_seq_len_per_rank"] = problem.options.max_seq_len_per_rank;
  result["min_cp_size"] = problem.options.min_cp_size;
  result["vpp_group"] = OptionalToPython(problem.options.vpp_group);
  // The packing-aware cap (Megatron-LM PR #6479), carried whatever the
  // decoder draws: None when unset.
  result["max_num_seqs"] = OptionalToPython(problem.options.max_num_seqs);
  return result;
}

py::dict DecodeDpBalanced(FuzzedDataProvider& data) {
  const properties::DpBalancedProblem problem =
      fuzz::DecodeDpBalancedProblem(data);
  py::dict result;
  result["kind"] = "dp_balanced";
  result["lens"] = py::cast(problem.lens);
  result["dp_size"] = problem.options.dp_size;
  result["cp_size"] = problem.options.cp_size;
  result["max_seq_len_per_rank"] = problem.options.max_seq_len_per_rank;
  result["max_num_seqs"] = OptionalToPython(problem.options.max_num_seqs);
  result["vpp_group"] = OptionalToPython(problem.options.vpp_group);
  return result;
}

py::dict DecodeVppAlign(FuzzedDataProvider& data) {
  const fuzz::VppAlignInput input = fuzz::DecodeVppAlignInput(data);
  py::list microbatches(input.schedule.microbatches.size());
  for (std::size_t i = 0; i < input.schedule.microbatches.size(); ++i) {
    microbatches[i] = py::cast(input.schedule.microbatches[i].rank_ids);
  }
  py::dict result;
  result["kind"] = "vpp_align";
  result["vpp_group"] = input.vpp_group;
  result["schedule"] = std::move(microbatches);
  return result;
}

// The problem the fuzz target `target` decodes from `data`.
py::dict Decode(const std::string& target, const py::bytes& data) {
  const std::string bytes = data;
  FuzzedDataProvider provider(
      reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  if (target == "fuzz_packing_aware" ||
      target == "fuzz_packing_aware_differential" || target == "fuzz_legacy") {
    return DecodeDynamicCp(provider);
  }
  if (target == "fuzz_dp_balanced") return DecodeDpBalanced(provider);
  if (target == "fuzz_vpp_align") return DecodeVppAlign(provider);
  throw py::value_error(
      "no scheduling problem decoder for fuzz target '" + target +
      "': expected one of " + "fuzz_packing_aware, "
      "fuzz_packing_aware_differential, fuzz_legacy, fuzz_dp_balanced, "
      "fuzz_vpp_align");
}

constexpr char kDecodeDoc[] = R"doc(decode(target, data)
--

Decodes one fuzz input as the fuzz target `target` does (fuzz/fuzz_input.h).

Args:
  target: the fuzz target, i.e. the corpus directory's name: fuzz_packing_aware,
    fuzz_packing_aware_differential or fuzz_legacy (a dynamic-CP problem),
    fuzz_dp_balanced (a dp_balanced problem), fuzz_vpp_align (a schedule to
    align).
  data: the input's bytes; any bytes decode to some problem.

Returns:
  dict with "kind" ("dynamic_cp", "dp_balanced" or "vpp_align") and the
  problem's fields: samples [(id, len)], total_gpus, max_seq_len_per_rank,
  min_cp_size, vpp_group, max_num_seqs (None: no cap); or lens, dp_size, cp_size, max_seq_len_per_rank,
  max_num_seqs, vpp_group; or vpp_group, schedule. The problem may be outside
  the scheduler's limits (the fuzzers try those too).

Raises:
  ValueError: `target` has no problem decoder.
)doc";

}  // namespace
}  // namespace dcpsched

PYBIND11_MODULE(_fuzz_corpus, module) {
  namespace py = ::pybind11;
  py::options options;
  options.disable_function_signatures();
  module.doc() =
      "The fuzz targets' input decoder (fuzz/fuzz_input.h), for reading the "
      "fuzz corpora from Python (dcpsched.conformance).";
  // The committed corpora: <source>/corpus/fuzz_<target>/.
  module.attr("SOURCE_DIR") = DCPSCHED_SOURCE_DIR;
  module.def("decode", &dcpsched::Decode, py::arg("target"), py::arg("data"),
             dcpsched::kDecodeDoc);
}

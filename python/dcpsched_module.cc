// The extension module `dcpsched._core`: the schedulers, VPP alignment,
// the schedule checker, the cost model and the runtime step model (with a
// pipeline rank's op order) of this library, callable from Python. The
// package `dcpsched` (python/dcpsched/__init__.py) re-exports everything
// here; python/README.md shows how to use it.
//
// Every function first converts its Python arguments to C++ values with the
// GIL held, then runs the core with the GIL released (other Python threads
// keep running while a global batch is scheduled), then builds its result.
// Results have upstream Megatron-LM's shapes: plain lists, tuples, ints and
// floats, so the module can stand in for upstream's Python functions.
//
// Errors, never a crash:
// - TypeError: an argument of the wrong type or shape, named in the message
//   ("sample_id_seqlens[3][1] (len) must be an int, not float"). Ints may be
//   any object with __index__ (numpy integers, for instance).
// - ValueError: an int outside int64, or an input the core rejects: with
//   InvalidArgument (outside the specification's limits) as its subclass InvalidInputError,
//   with FailedPrecondition (upstream's algorithm cannot schedule it) as its
//   subclass UnschedulableError. The message is the core's.
// - RuntimeError: any other core error (an internal one).

// pybind11 includes Python.h, which must come before the standard headers.
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_profile.h"
#include "core/dp_balanced.h"
#include "core/gpu_time.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/pipeline_order.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "core/validate.h"
#include "core/vpp_align.h"
#include "core/upstream_revisions.h"
#include "io/cost_profile_file.h"
#include "io/workload.h"

#ifndef DCPSCHED_VERSION
#define DCPSCHED_VERSION "unknown"
#endif

namespace dcpsched {
namespace {

namespace py = ::pybind11;

// ---------------------------------------------------------------------------
// Python -> C++. `name` arguments are callables giving the argument's name
// for an error message ("sample_id_seqlens[3]"); they are only called on the
// error path, so a million samples cost no string building.

const char* TypeName(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }

// `value` (an int, or any object with __index__) as an int64.
template <typename Name>
std::int64_t ToInt64(py::handle value, const Name& name) {
  // Fast path, for the common case of a plain int in range: no
  // __index__ call and no new reference. Anything else (an int subclass,
  // an object with __index__, an int outside int64) takes the general path,
  // which also words the errors.
  if (PyLong_CheckExact(value.ptr())) {
    int overflow = 0;
    const long long result =  // NOLINT(runtime/int): the C API's type
        PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow == 0 && !(result == -1 && PyErr_Occurred() != nullptr)) {
      return static_cast<std::int64_t>(result);
    }
    PyErr_Clear();
  }
  if (PyIndex_Check(value.ptr()) == 0) {
    throw py::type_error(
        absl::StrCat(name(), " must be an int, not ", TypeName(value)));
  }
  const auto index =
      py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long result =  // NOLINT(runtime/int): the C API's type
      PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw py::value_error(absl::StrCat(name(), " is ",
                                       static_cast<std::string>(py::str(index)),
                                       "; it must fit in a signed 64-bit "
                                       "integer"));
  }
  if (result == -1 && PyErr_Occurred() != nullptr) {
    throw py::error_already_set();
  }
  return static_cast<std::int64_t>(result);
}

std::optional<std::int64_t> ToOptionalInt64(py::handle value,
                                            const char* name) {
  if (value.is_none()) return std::nullopt;
  return ToInt64(value, [name] { return std::string(name); });
}

std::int64_t ToInt64Argument(py::handle value, const char* name) {
  return ToInt64(value, [name] { return std::string(name); });
}

// `value` as a list or tuple (any other iterable but str, bytes and
// bytearray is copied into one), to read with PySequence_Fast_*.
// `expected` says what it should be ("a list of (id, len) pairs").
template <typename Name>
py::object ToSequence(py::handle value, const Name& name,
                      const char* expected) {
  PyObject* const object = value.ptr();
  if (PyList_Check(object) || PyTuple_Check(object)) {
    return py::reinterpret_borrow<py::object>(value);
  }
  const std::string error =
      absl::StrCat(name(), " must be ", expected, ", not ", TypeName(value));
  if (PyUnicode_Check(object) || PyBytes_Check(object) ||
      PyByteArray_Check(object)) {
    throw py::type_error(error);
  }
  // Raises TypeError with `error` if `value` is not iterable, or whatever
  // its iteration raises.
  PyObject* const sequence = PySequence_Fast(object, error.c_str());
  if (sequence == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(sequence);
}

// Calls visit(index, item) for every item of `value` (see ToSequence). The
// length is read again at every step and each item is held while visited, so
// a list changed meanwhile (by an item's __index__) cannot crash the loop.
template <typename Name, typename Visit>
void ForEachItem(py::handle value, const Name& name, const char* expected,
                 const Visit& visit) {
  const py::object sequence = ToSequence(value, name, expected);
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(sequence.ptr()); ++i) {
    const auto item = py::reinterpret_borrow<py::object>(
        PySequence_Fast_GET_ITEM(sequence.ptr(), i));
    visit(static_cast<std::size_t>(i), item);
  }
}

// [(id, len), ...] as upstream passes it: a list of pairs (tuples or lists).
std::vector<Sample> ToSamples(py::handle value, const char* argument) {
  std::vector<Sample> samples;
  ForEachItem(
      value, [argument] { return std::string(argument); },
      "a list of (id, len) pairs", [&](std::size_t i, py::handle item) {
        const auto pair_name = [argument, i] {
          return absl::StrCat(argument, "[", i, "]");
        };
        const py::object pair = ToSequence(item, pair_name, "an (id, len) pair");
        const Py_ssize_t size = PySequence_Fast_GET_SIZE(pair.ptr());
        if (size != 2) {
          throw py::type_error(absl::StrCat(pair_name(),
                                            " must be an (id, len) pair, not ",
                                            size, " items"));
        }
        // Both fields are held before either is converted.
        const auto id = py::reinterpret_borrow<py::object>(
            PySequence_Fast_GET_ITEM(pair.ptr(), 0));
        const auto len = py::reinterpret_borrow<py::object>(
            PySequence_Fast_GET_ITEM(pair.ptr(), 1));
        samples.push_back(Sample{
            ToInt64(id, [&] { return absl::StrCat(pair_name(), "[0] (id)"); }),
            ToInt64(len,
                    [&] { return absl::StrCat(pair_name(), "[1] (len)"); })});
      });
  return samples;
}

// [[[id, ...] per rank] per microbatch], the form the schedulers return.
Schedule ToSchedule(py::handle value, const char* argument) {
  Schedule schedule;
  ForEachItem(
      value, [argument] { return std::string(argument); },
      "a list of microbatches", [&](std::size_t m, py::handle microbatch) {
        Microbatch& ranks = schedule.microbatches.emplace_back();
        const auto microbatch_name = [argument, m] {
          return absl::StrCat(argument, "[", m, "]");
        };
        ForEachItem(
            microbatch, microbatch_name, "a list of per-rank id lists",
            [&](std::size_t r, py::handle rank) {
              std::vector<SampleId>& ids = ranks.rank_ids.emplace_back();
              const auto rank_name = [&] {
                return absl::StrCat(microbatch_name(), "[", r, "]");
              };
              ForEachItem(rank, rank_name, "a list of sample ids",
                          [&](std::size_t k, py::handle id) {
                            ids.push_back(ToInt64(id, [&] {
                              return absl::StrCat(rank_name(), "[", k, "]");
                            }));
                          });
            });
      });
  return schedule;
}

// The dynamic-CP schedulers' max_num_seqs (Megatron-LM PR #6479's cap on the
// samples one rank holds in a microbatch): None, or an int. Anything else is
// InvalidArgument saying what to pass (not TypeError: upstream compares the
// cap with a count, so a float "works" there and must be refused as a value);
// an int below 1 is refused by the core, naming the limit.
absl::StatusOr<std::optional<std::int64_t>> ToMaxNumSeqs(py::handle value) {
  if (value.is_none()) return std::nullopt;
  if (PyIndex_Check(value.ptr()) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_num_seqs must be None (no cap) or an int >= 1 (the most samples "
        "one rank holds in a microbatch), not ",
        TypeName(value)));
  }
  return ToInt64Argument(value, "max_num_seqs");
}

// The dynamic-CP options; InvalidArgument for a max_num_seqs that is no int
// (other arguments of the wrong type raise TypeError).
absl::StatusOr<DynamicCpOptions> ToDynamicCpOptions(
    py::handle total_gpus, py::handle max_seq_len_per_rank,
    py::handle min_cp_size, py::handle vpp_group, py::handle max_num_seqs) {
  DynamicCpOptions options;
  options.total_gpus = ToInt64Argument(total_gpus, "total_gpus");
  options.max_seq_len_per_rank =
      ToInt64Argument(max_seq_len_per_rank, "max_seq_len_per_rank");
  options.min_cp_size = ToInt64Argument(min_cp_size, "min_cp_size");
  options.vpp_group = ToOptionalInt64(vpp_group, "vpp_group");
  absl::StatusOr<std::optional<std::int64_t>> cap = ToMaxNumSeqs(max_num_seqs);
  if (!cap.ok()) return cap.status();
  options.max_num_seqs = *cap;
  return options;
}

// The keyword argument `rank`: None (every rank) or a rank of a schedule of
// `total_gpus` ranks. Checked before scheduling when total_gpus is itself
// valid (otherwise the core says what is wrong with it): outside
// [0, total_gpus) is InvalidArgument naming the range.
absl::StatusOr<std::optional<std::int64_t>> ToRank(py::handle rank,
                                                   std::int64_t total_gpus) {
  const std::optional<std::int64_t> value = ToOptionalInt64(rank, "rank");
  if (value.has_value() && total_gpus >= 1 && total_gpus <= kMaxTotalGpus &&
      (*value < 0 || *value >= total_gpus)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank is ", *value, "; it must be in [0, ", total_gpus,
        "), a rank of the total_gpus=", total_gpus, " ranks"));
  }
  return value;
}

// ---------------------------------------------------------------------------
// Running the core.

// The module's exception classes, made once in PYBIND11_MODULE below and
// looked up by name on the error path only.
constexpr char kInvalidInputError[] = "InvalidInputError";
constexpr char kUnschedulableError[] = "UnschedulableError";

// Raises the Python exception for a core error (see the file comment).
[[noreturn]] void ThrowStatus(const absl::Status& status) {
  std::string message(status.message());
  const char* error_class = nullptr;
  if (status.code() == absl::StatusCode::kInvalidArgument) {
    error_class = kInvalidInputError;
  } else if (status.code() == absl::StatusCode::kFailedPrecondition) {
    error_class = kUnschedulableError;
  } else {
    throw std::runtime_error(message);  // pybind11 raises RuntimeError
  }
  const py::object type =
      py::module_::import("dcpsched._core").attr(error_class);
  PyErr_SetString(type.ptr(), message.c_str());
  throw py::error_already_set();
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> result) {
  if (!result.ok()) ThrowStatus(result.status());
  return *std::move(result);
}

// Runs `call` with the GIL released. `call` must not touch Python objects.
template <typename Call>
auto WithoutGil(const Call& call) -> decltype(call()) {
  py::gil_scoped_release release;
  return call();
}

// ---------------------------------------------------------------------------
// C++ -> Python.

// A new list of `ids`.
py::list ToPython(const std::vector<SampleId>& ids) {
  py::list list(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    PyObject* const id = PyLong_FromLongLong(ids[i]);
    if (id == nullptr) throw py::error_already_set();
    PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i), id);
  }
  return list;
}

// Per microbatch, one rank's ids (RankIds).
py::list ToPython(const std::vector<std::vector<SampleId>>& rank_lists) {
  py::list microbatches(rank_lists.size());
  for (std::size_t m = 0; m < rank_lists.size(); ++m) {
    microbatches[m] = ToPython(rank_lists[m]);
  }
  return microbatches;
}

// The per-rank form, straight from the compact one: per microbatch, per rank,
// a list of its ids. The ranks of a group get equal but distinct lists (as
// upstream's do): the first is built from the ids, the others are copies of
// it, which share its int objects. No C++ per-rank schedule is built.
py::list ToPython(const CompactSchedule& schedule) {
  py::list microbatches(schedule.microbatches.size());
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const std::vector<CpGroupIds>& groups = schedule.microbatches[m].groups;
    const std::int64_t width =
        groups.empty() ? 0 : groups.back().first_rank + groups.back().size;
    py::list ranks(static_cast<std::size_t>(width));
    for (const CpGroupIds& group : groups) {
      py::list first = ToPython(group.ids);
      const auto count = static_cast<Py_ssize_t>(group.ids.size());
      for (std::int64_t member = 1; member < group.size; ++member) {
        PyObject* const copy = PyList_GetSlice(first.ptr(), 0, count);
        if (copy == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(ranks.ptr(),
                        static_cast<Py_ssize_t>(group.first_rank + member), copy);
      }
      PyList_SET_ITEM(ranks.ptr(), static_cast<Py_ssize_t>(group.first_rank),
                      first.release().ptr());
    }
    microbatches[m] = std::move(ranks);
  }
  return microbatches;
}

// The schedule, or with `rank` only that rank's ids per microbatch.
py::list ToPython(const CompactSchedule& schedule,
                  const std::optional<std::int64_t>& rank) {
  if (!rank.has_value()) return ToPython(schedule);
  return ToPython(ValueOrThrow(RankIds(schedule, *rank)));
}

py::list ToPython(const std::vector<Sample>& leftovers) {
  py::list list(leftovers.size());
  for (std::size_t i = 0; i < leftovers.size(); ++i) {
    list[i] = py::make_tuple(leftovers[i].id, leftovers[i].len);
  }
  return list;
}

// Upstream's 4-tuple: (micro_batches, leftovers, exec_times, sample_ids);
// with `rank`, rank r's part of each per-rank element (its lens, its time,
// its ids) and the leftovers, which are the same for every rank.
py::tuple ToPython(const PackedMicrobatch& step,
                   const std::optional<std::int64_t>& rank) {
  if (rank.has_value()) {
    const auto r = static_cast<std::size_t>(*rank);
    return py::make_tuple(py::cast(step.rank_lens[r]), ToPython(step.leftovers),
                          step.rank_work[r],
                          ToPython(step.microbatch.rank_ids[r]));
  }
  return py::make_tuple(py::cast(step.rank_lens), ToPython(step.leftovers),
                        py::cast(step.rank_work),
                        py::cast(step.microbatch.rank_ids));
}

// "invariant 4 (token budget): microbatch 0 rank 3 ...", as CheckSchedule
// words its first violation.
std::string Describe(const Violation& violation) {
  return absl::StrCat("invariant ", static_cast<int>(violation.invariant), " (",
                      InvariantName(violation.invariant),
                      "): ", violation.message);
}

// ---------------------------------------------------------------------------
// The module's functions.

// benchmark_workload: the batch `dcpsched schedule` generates (io/workload.h).
py::list PyBenchmarkWorkload(const py::object& num_samples, const py::object& seed,
                             const std::string& preset) {
  LognormalWorkload workload;
  if (preset == "skewed") {
    workload = SkewedDcpBenchmarkWorkload();
  } else if (preset != "benchmark") {
    ThrowStatus(absl::InvalidArgumentError(absl::StrCat(
        "preset is \"", preset, "\"; it must be \"benchmark\" or \"skewed\"")));
  }
  workload.num_samples = ToInt64Argument(num_samples, "num_samples");
  const std::int64_t seed_value = ToInt64Argument(seed, "seed");
  if (seed_value < 0) {
    ThrowStatus(absl::InvalidArgumentError(
        absl::StrCat("seed is ", seed_value, "; it must be at least 0")));
  }
  workload.seed = static_cast<std::uint64_t>(seed_value);
  const std::vector<Sample> samples = ValueOrThrow(GenerateLognormalWorkload(workload));
  py::list pairs;
  for (const Sample& sample : samples) pairs.append(py::make_tuple(sample.id, sample.len));
  return pairs;
}

py::list PyScheduleDynamicCp(const py::object& sample_id_seqlens,
                             const py::object& total_gpus,
                             const py::object& max_seq_len_per_rank,
                             const py::object& min_cp_size,
                             const py::object& vpp_group,
                             const py::object& max_num_seqs,
                             const py::object& rank, bool runnable) {
  const std::vector<Sample> samples =
      ToSamples(sample_id_seqlens, "sample_id_seqlens");
  const DynamicCpOptions options = ValueOrThrow(ToDynamicCpOptions(
      total_gpus, max_seq_len_per_rank, min_cp_size, vpp_group, max_num_seqs));
  const std::optional<std::int64_t> view =
      ValueOrThrow(ToRank(rank, options.total_gpus));
  return ToPython(ValueOrThrow(WithoutGil([&] {
                    return runnable ? ScheduleDynamicCpCompact(samples, options)
                                    : ScheduleDynamicCpAsUpstream(samples, options);
                  })),
                  view);
}

py::list PyScheduleLegacy(const py::object& sample_id_seqlens,
                          const py::object& total_gpus,
                          const py::object& max_seq_len_per_rank,
                          const py::object& min_cp_size,
                          const py::object& vpp_group,
                          const py::object& rank, bool runnable) {
  const std::vector<Sample> samples =
      ToSamples(sample_id_seqlens, "sample_id_seqlens");
  const DynamicCpOptions options = ValueOrThrow(ToDynamicCpOptions(
      total_gpus, max_seq_len_per_rank, min_cp_size, vpp_group, py::none()));
  const std::optional<std::int64_t> view =
      ValueOrThrow(ToRank(rank, options.total_gpus));
  return ToPython(ValueOrThrow(WithoutGil([&] {
                    return runnable ? ScheduleLegacyCompact(samples, options)
                                    : ScheduleLegacyAsUpstream(samples, options);
                  })),
                  view);
}

py::tuple PyNextGroupPackingAware(const py::object& sample_seqlens,
                                  const py::object& total_gpus,
                                  const py::object& max_seq_len_per_rank,
                                  const py::object& min_cp_size,
                                  const py::object& max_num_seqs,
                                  const py::object& rank) {
  const std::vector<Sample> samples =
      ToSamples(sample_seqlens, "sample_seqlens");
  const DynamicCpOptions options = ValueOrThrow(ToDynamicCpOptions(
      total_gpus, max_seq_len_per_rank, min_cp_size, py::none(), max_num_seqs));
  const std::optional<std::int64_t> view =
      ValueOrThrow(ToRank(rank, options.total_gpus));
  return ToPython(ValueOrThrow(WithoutGil(
                      [&] { return PackingAwareStep(samples, options); })),
                  view);
}

py::list PyScheduleDpBalanced(const py::object& sample_id_seqlens,
                              const py::object& dp_size,
                              const py::object& cp_size,
                              const py::object& max_seq_len_per_rank,
                              const py::object& max_num_seqs,
                              const py::object& vpp_group,
                              const py::object& rank) {
  const std::vector<Sample> samples =
      ToSamples(sample_id_seqlens, "sample_id_seqlens");
  DpBalancedOptions options;
  options.dp_size = ToInt64Argument(dp_size, "dp_size");
  options.cp_size = ToInt64Argument(cp_size, "cp_size");
  options.max_seq_len_per_rank =
      ToInt64Argument(max_seq_len_per_rank, "max_seq_len_per_rank");
  options.max_num_seqs = ToOptionalInt64(max_num_seqs, "max_num_seqs");
  options.vpp_group = ToOptionalInt64(vpp_group, "vpp_group");
  // G only when dp_size and cp_size are in range (else the core says so).
  const bool sizes_in_range = options.dp_size >= 1 && options.cp_size >= 1 &&
                              options.dp_size <= kMaxTotalGpus &&
                              options.cp_size <= kMaxTotalGpus;
  const std::optional<std::int64_t> view = ValueOrThrow(ToRank(
      rank, sizes_in_range ? options.dp_size * options.cp_size : 0));
  std::vector<std::int64_t> lens;
  lens.reserve(samples.size());
  for (const Sample& sample : samples) lens.push_back(sample.len);
  return ToPython(ValueOrThrow(WithoutGil([&] {
                    return ScheduleDpBalancedCompact(lens, options);
                  })),
                  view);
}

py::list PyAlignToVppGroup(const py::object& schedule,
                           const py::object& vpp_group) {
  const Schedule input = ToSchedule(schedule, "schedule");
  const std::int64_t group = ToInt64Argument(vpp_group, "vpp_group");
  return ToPython(ValueOrThrow(WithoutGil(
      [&] { return AlignToVppGroup(CompactFromRanks(input), group); })));
}

py::list PyVerify(const py::object& schedule,
                  const py::object& sample_id_seqlens,
                  const py::object& total_gpus,
                  const py::object& max_seq_len_per_rank,
                  const py::object& min_cp_size, const py::object& vpp_group,
                  const py::object& max_num_seqs, const py::object& scheduler) {
  // cost_aware promises every invariant but the work cap (5).
  bool work_cap = true;
  if (!scheduler.is_none()) {
    if (!py::isinstance<py::str>(scheduler)) {
      throw py::type_error(absl::StrCat("scheduler must be None or a str, not ",
                                        TypeName(scheduler)));
    }
    work_cap = scheduler.cast<std::string>() != "cost_aware";
  }
  const Schedule checked = ToSchedule(schedule, "schedule");
  const std::vector<Sample> samples =
      ToSamples(sample_id_seqlens, "sample_id_seqlens");
  const DynamicCpOptions options = ValueOrThrow(ToDynamicCpOptions(
      total_gpus, max_seq_len_per_rank, min_cp_size, vpp_group, max_num_seqs));
  const std::vector<std::string> messages = ValueOrThrow(WithoutGil(
      [&]() -> absl::StatusOr<std::vector<std::string>> {
        if (absl::Status status = ValidateDynamicCpProblem(samples, options);
            !status.ok()) {
          return status;
        }
        std::vector<std::string> descriptions;
        for (const Violation& violation :
             FindViolations(samples, checked, options)) {
          if (!work_cap && violation.invariant == Invariant::kWorkCap) continue;
          descriptions.push_back(Describe(violation));
        }
        return descriptions;
      }));
  return py::cast(messages);
}

// A profile by name or path (LoadCostProfile). FileNotFoundError for a name
// that is neither shipped nor a file; InvalidInputError for a malformed one.
CostProfile PyLoadCostProfile(const std::string& name_or_path) {
  absl::StatusOr<CostProfile> profile = LoadCostProfile(name_or_path);
  if (profile.status().code() == absl::StatusCode::kNotFound) {
    PyErr_SetString(PyExc_FileNotFoundError, std::string(profile.status().message()).c_str());
    throw py::error_already_set();
  }
  return ValueOrThrow(std::move(profile));
}

CostProfile PyParseCostProfile(const std::string& text) {
  return ValueOrThrow(ParseCostProfile(text));
}

// microbatch_group_size (N): None, Megatron-LM's default of the pipeline
// size (the core's 0), or an int >= 1. An explicit 0 or less is refused
// here: the core would read 0 as "unset".
std::int64_t ToGroupSize(py::handle value) {
  const std::optional<std::int64_t> group =
      ToOptionalInt64(value, "microbatch_group_size");
  if (group.has_value() && *group < 1) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrCat(
        "microbatch_group_size is ", *group,
        "; give 1 or more, or None for the pipeline size (Megatron-LM's default)")));
  }
  return group.value_or(0);
}

// The keyword arguments describing the runtime (schedule_time's) as a
// RuntimeConfig. Types are checked here (TypeError); values by the core
// (CheckRuntimeConfig), except what only Python can get wrong: a group size
// of 0 (ToGroupSize) and a path other than "dev" or "legacy".
RuntimeConfig ToRuntimeConfig(py::handle pipeline_stages, py::handle virtual_stages,
                              py::handle microbatch_group_size,
                              py::handle layers_per_stage, py::handle forward_share,
                              py::handle expert_parallel_size, py::handle runtime) {
  RuntimeConfig config;
  config.pipeline.stages = ToInt64Argument(pipeline_stages, "pipeline_stages");
  config.pipeline.virtual_stages = ToInt64Argument(virtual_stages, "virtual_stages");
  config.pipeline.microbatch_group_size = ToGroupSize(microbatch_group_size);
  config.layers_per_stage = ToInt64Argument(layers_per_stage, "layers_per_stage");
  // A real number: an int or float (or anything with __float__), not a str.
  if (PyNumber_Check(forward_share.ptr()) == 0 || PyComplex_Check(forward_share.ptr())) {
    throw py::type_error(absl::StrCat("forward_share must be a float, not ",
                                      TypeName(forward_share)));
  }
  config.forward_share = PyFloat_AsDouble(forward_share.ptr());
  if (config.forward_share == -1.0 && PyErr_Occurred() != nullptr) {
    throw py::error_already_set();
  }
  config.expert_parallel_size =
      ToOptionalInt64(expert_parallel_size, "expert_parallel_size");
  if (!py::isinstance<py::str>(runtime)) {
    throw py::type_error(absl::StrCat("runtime must be \"dev\" or \"legacy\", not ",
                                      TypeName(runtime)));
  }
  const std::string path = runtime.cast<std::string>();
  if (path == "legacy") {
    config.path = RuntimePath::kLegacy;
  } else if (path != "dev") {
    ThrowStatus(absl::InvalidArgumentError(absl::StrCat(
        "runtime is \"", path,
        "\"; give \"dev\" (Megatron-LM dev: no barrier between microbatches) or "
        "\"legacy\" (main's barrier after every microbatch, without pipelining)")));
  }
  return config;
}

// The runtime step as the JSON run documents' quality.runtime object
// (io/schedule_json.cc RuntimeStepToJson): the same keys and values.
py::dict ToPython(const RuntimeConfig& config, const RuntimeStep& step) {
  const PipelineShape& shape = config.pipeline;
  py::dict runtime;
  runtime["path"] = std::string(RuntimePathName(config.path));
  runtime["pipeline_stages"] = shape.stages;
  runtime["virtual_stages"] = shape.virtual_stages;
  runtime["microbatch_group_size"] =
      shape.microbatch_group_size == 0 ? shape.stages : shape.microbatch_group_size;
  runtime["layers_per_stage"] = config.layers_per_stage;
  runtime["forward_share"] = config.forward_share;
  runtime["expert_parallel_size"] =
      config.expert_parallel_size.has_value()
          ? py::object(py::int_(*config.expert_parallel_size))
          : py::object(py::none());
  runtime["step_seconds"] = step.step_seconds;
  runtime["busiest_rank_seconds"] = step.busiest_rank_seconds;
  runtime["bubble_seconds"] = step.bubble_seconds;
  runtime["bound_seconds"] = step.bound_seconds;
  return runtime;
}

py::dict PyScheduleTime(const py::object& schedule,
                        const py::object& sample_id_seqlens,
                        const CostProfile& profile,
                        const py::object& max_seq_len_per_rank,
                        const py::object& cp_size,
                        const py::object& pipeline_stages,
                        const py::object& virtual_stages,
                        const py::object& microbatch_group_size,
                        const py::object& layers_per_stage,
                        const py::object& forward_share,
                        const py::object& expert_parallel_size,
                        const py::object& runtime) {
  const Schedule checked = ToSchedule(schedule, "schedule");
  const std::vector<Sample> samples =
      ToSamples(sample_id_seqlens, "sample_id_seqlens");
  const GpuTimeOptions options{
      .max_seq_len_per_rank =
          ToInt64Argument(max_seq_len_per_rank, "max_seq_len_per_rank"),
      .fixed_cp_size = ToOptionalInt64(cp_size, "cp_size")};
  const RuntimeConfig config =
      ToRuntimeConfig(pipeline_stages, virtual_stages, microbatch_group_size,
                      layers_per_stage, forward_share, expert_parallel_size, runtime);
  // The schedule's times (MeasureScheduleTime of the per-rank form measures
  // its compact form, this one), then its step on the runtime.
  const auto [time, step] = ValueOrThrow(WithoutGil(
      [&]() -> absl::StatusOr<std::pair<ScheduleTime, RuntimeStep>> {
        const CompactSchedule compact = CompactFromRanks(checked);
        absl::StatusOr<ScheduleTime> measured =
            MeasureScheduleTime(samples, compact, profile, options);
        if (!measured.ok()) return measured.status();
        absl::StatusOr<RuntimeStep> stepped =
            MeasureRuntimeStep(compact, *measured, config);
        if (!stepped.ok()) return stepped.status();
        return std::pair(*std::move(measured), *std::move(stepped));
      }));
  std::vector<double> microbatch_seconds;
  microbatch_seconds.reserve(time.microbatches.size());
  for (const MicrobatchTime& microbatch : time.microbatches) {
    microbatch_seconds.push_back(microbatch.max_seconds);
  }
  py::dict figures;
  figures["step_seconds"] = time.step_seconds;
  figures["bound_seconds"] = time.bound_seconds;
  figures["gpu_efficiency"] = time.gpu_efficiency;
  figures["microbatch_seconds"] = py::cast(microbatch_seconds);
  figures["communication_modelled"] = time.communication_modelled;
  figures["runtime"] = ToPython(config, step);
  return figures;
}

// schedule_cost_aware: the schedule per rank (or one rank's lists), or with
// details=True a dict with it, whose schedule it is and why, and the times.
py::object PyScheduleCostAware(const py::object& sample_id_seqlens,
                               const py::object& total_gpus,
                               const py::object& max_seq_len_per_rank,
                               const py::object& profile, const py::object& min_cp_size,
                               const py::object& vpp_group,
                               const py::object& max_num_seqs, const py::object& rank,
                               bool details, const py::object& pipeline_stages,
                               const py::object& virtual_stages,
                               const py::object& microbatch_group_size,
                               const py::object& layers_per_stage,
                               const py::object& forward_share,
                               const py::object& expert_parallel_size,
                               const py::object& runtime) {
  const std::vector<Sample> samples =
      ToSamples(sample_id_seqlens, "sample_id_seqlens");
  const DynamicCpOptions options = ValueOrThrow(ToDynamicCpOptions(
      total_gpus, max_seq_len_per_rank, min_cp_size, vpp_group, max_num_seqs));
  if (!py::isinstance<CostProfile>(profile)) {
    throw py::type_error(absl::StrCat(
        "profile must be a dcpsched.CostProfile (e.g. "
        "dcpsched.CostProfile(\"h200-llama3-8b\")), not ",
        TypeName(profile)));
  }
  const CostProfile& cost_profile = profile.cast<const CostProfile&>();
  const std::optional<std::int64_t> view =
      ValueOrThrow(ToRank(rank, options.total_gpus));
  const RuntimeConfig config =
      ToRuntimeConfig(pipeline_stages, virtual_stages, microbatch_group_size,
                      layers_per_stage, forward_share, expert_parallel_size, runtime);
  CostAwareResult result = ValueOrThrow(WithoutGil([&] {
    return ScheduleCostAware(samples, options, cost_profile,
                             CostAwareOptions{.runtime = config});
  }));
  py::object schedule = ToPython(result.schedule, view);
  if (!details) return schedule;
  py::dict figures;
  figures["schedule"] = schedule;
  figures["source"] = std::string(CostAwareSourceName(result.source));
  figures["reason"] = result.reason;
  figures["step_seconds"] = result.step_seconds;
  figures["token_budget"] = result.token_budget;
  figures["runtime"] = ToPython(config, result.runtime_step);
  figures["packing_aware_step_seconds"] =
      result.packing_aware_step_seconds.has_value()
          ? py::object(py::float_(*result.packing_aware_step_seconds))
          : py::object(py::none());
  return figures;
}

// pipeline_stage_order: one pipeline rank's ops as (microbatch, chunk,
// forward) tuples, for a shape Megatron-LM runs (CheckRuntimeConfig's shape
// checks, and its bound on the ops modelled).
py::list PyPipelineStageOrder(const py::object& stages, const py::object& virtual_stages,
                              const py::object& num_microbatches,
                              const py::object& pipeline_rank,
                              const py::object& microbatch_group_size) {
  RuntimeConfig config;
  config.pipeline.stages = ToInt64Argument(stages, "stages");
  config.pipeline.virtual_stages = ToInt64Argument(virtual_stages, "virtual_stages");
  config.pipeline.microbatch_group_size = ToGroupSize(microbatch_group_size);
  const std::int64_t count = ToInt64Argument(num_microbatches, "num_microbatches");
  const std::int64_t rank = ToInt64Argument(pipeline_rank, "pipeline_rank");
  // Megatron-LM's refusals (CheckPipelineShape) and the bound on P x V x
  // M; a G of 1 leaves everything else unchecked.
  if (absl::Status valid = CheckRuntimeConfig(config, 1, count); !valid.ok()) {
    ThrowStatus(valid);
  }
  if (rank < 0 || rank >= config.pipeline.stages) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrCat(
        "pipeline_rank is ", rank, "; it must be in [0, ", config.pipeline.stages,
        "), a rank of the ", config.pipeline.stages, " pipeline stages")));
  }
  const std::vector<StageOp> order = WithoutGil(
      [&] { return PipelineStageOrder(config.pipeline, count, rank); });
  py::list ops(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    ops[i] = py::make_tuple(order[i].microbatch, order[i].chunk, py::bool_(order[i].forward));
  }
  return ops;
}

// ---------------------------------------------------------------------------
// Docstrings. Each starts with its signature followed by "--", the form
// CPython reads as __text_signature__, so inspect.signature() and help()
// show the parameters (pybind11's own signatures are turned off: every
// parameter is converted by hand, see above).

constexpr char kModuleDoc[] = R"doc(dcpsched: Megatron-LM's dynamic context-parallel packing scheduler in C++.

Schedules variable-length sequences onto DPxCP ranks exactly as upstream's
DefaultDynamicCPScheduler (#5154) does, bit for bit, but returns an error
where upstream crashes, hangs or breaks its own invariants. The GIL is
released while scheduling.

Functions: schedule_dynamic_cp, next_group_packing_aware,
align_to_vpp_group, schedule_dp_balanced, schedule_legacy, verify,
schedule_time (a schedule in GPU seconds by a CostProfile, and its step on
Megatron-LM's runtime), pipeline_stage_order (a pipeline rank's op order).
Errors: TypeError for arguments of the wrong type or shape; ValueError for
input outside the limits (InvalidInputError) or that upstream's algorithm
cannot schedule (UnschedulableError), the message saying what to change;
RuntimeError for an internal error.
)doc";

constexpr char kInvalidInputErrorDoc[] =
    "The input is outside the scheduler's limits (docs/specification.md: \"Valid input\"): "
    "G, max_seq_len_per_rank, min_cp_size, vpp_group or a length out of "
    "range, a duplicate id, a sample that needs more than G ranks, or a "
    "malformed schedule. A ValueError.";

constexpr char kUnschedulableErrorDoc[] =
    "A valid input that upstream's algorithm cannot schedule: upstream "
    "would raise IndexError or AssertionError, hang, or return a schedule "
    "that breaks its own invariants. A ValueError.";

constexpr char kAlignToVppGroupDoc[] =
    R"doc(align_to_vpp_group(schedule, vpp_group)
--

Splits microbatches until their number is a multiple of vpp_group: upstream's
align_sample_id_groups, on any schedule.

Args:
  schedule: list[list[list[int]]], per microbatch, per rank, the ids; every
    microbatch has the same number of ranks and no empty rank.
  vpp_group: microbatch_group_size_per_vp_stage, >= 1.

Returns:
  list[list[list[int]]]: the aligned schedule (a new list; the argument is
  not changed, unlike upstream's, which changes its argument in place).

Raises:
  TypeError: an argument has the wrong type or shape.
  InvalidInputError: a malformed schedule or vpp_group < 1.
  UnschedulableError: no microbatch can be split any more, or widening a
    half needs more ranks than it has (upstream raises AssertionError,
    hangs, or returns a microbatch wider than G).
)doc";

constexpr char kBenchmarkWorkloadDoc[] =
    R"doc(benchmark_workload(num_samples=256, *, seed=5154, preset="benchmark")
--

The global batch `dcpsched schedule` generates: upstream's DCP benchmark
workload, lognormal lengths clipped to [128, 8192] (preset "benchmark":
mean 1024, sigma 1.5; "skewed": mean 768, sigma 1.8), drawn by the same
generator as the command line's --samples and --seed (io/workload.h), so
the same seed gives the same lengths on every machine.

Returns:
  list[tuple[int, int]]: (id, len) pairs, ids 0..num_samples-1.

Raises:
  TypeError: an argument has the wrong type.
  InvalidInputError (a ValueError): num_samples outside [0, 2**24], a
    negative seed, or an unknown preset.
)doc";

constexpr char kScheduleDynamicCpDoc[] =
    R"doc(schedule_dynamic_cp(sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, vpp_group=None, max_num_seqs=None, rank=None, runnable=True)
--

Schedules one global batch with the packing-aware dynamic-CP scheduler.

Same result as upstream's DefaultDynamicCPScheduler.get_groups_and_subsamples
with dp_size * cp_size == total_gpus, max_seqlen_per_dp_cp_rank ==
max_seq_len_per_rank, min_cp_size, microbatch_group_size_per_vp_stage ==
vpp_group (None or 1: no VPP alignment) and max_num_seqs (Megatron-LM PR
#6479's cap; Megatron-LM dev accepts max_num_seqs but ignores it here, as
max_num_seqs=None does).

Args:
  sample_id_seqlens: list of (id, len) pairs; ids are unique ints (int64),
    lens are token counts in [1, 2**26].
  total_gpus: number of DPxCP ranks G, 1..65536.
  max_seq_len_per_rank: token budget of one rank in one microbatch.
  min_cp_size: smallest CP group, a power of two <= G.
  vpp_group: None, or >= 1: the microbatch count becomes a multiple of it.
  max_num_seqs: None (no cap), or an int >= 1: no rank holds more than this
    many samples in one microbatch (a CP group holding that many takes no
    more; the full-G fallback group stops at it).
  rank: None, or one rank r in [0, total_gpus): return only
    r's lists. Megatron-LM computes the schedule on every rank and each rank
    uses only its own lists; with rank the other ranks' lists are never
    built.
  runnable: True refuses a schedule Megatron-LM's runtime
    cannot run (invariant 11: a CP group of a size it never creates, or not
    its aligned block) with UnschedulableError; False returns upstream's
    schedule as upstream does, runnable or not (to compare with upstream).

Returns:
  list[list[list[int]]]: per microbatch, per rank (G lists), the ids that
  rank processes, in placement order. With rank=r: list[list[int]], per
  microbatch rank r's ids, equal to [mb[r] for mb in the full result].

Raises:
  TypeError: an argument has the wrong type or shape.
  InvalidInputError (a ValueError): the input is outside the limits,
    max_num_seqs is not None or an int >= 1, or rank is outside
    [0, total_gpus).
  UnschedulableError (a ValueError): upstream's algorithm cannot schedule
    it (upstream would raise, hang or break an invariant), or (runnable=True)
    upstream returns a schedule its runtime cannot run; the message starts
    "upstream returns a schedule its runtime cannot run: invariant 11".
)doc";

constexpr char kScheduleLegacyDoc[] =
    R"doc(schedule_legacy(sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, vpp_group=None, rank=None, runnable=True)
--

Schedules one global batch with the legacy bucket scheduler that #5154
replaced (for comparison). Arguments (rank= and runnable= included), result
and errors as schedule_dynamic_cp.
)doc";

constexpr char kNextGroupPackingAwareDoc[] =
    R"doc(next_group_packing_aware(sample_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, max_num_seqs=None, rank=None)
--

Builds one microbatch: upstream's next_hdp_group_packing_aware (its
required parameters in its order, the optional ones by keyword;
max_num_seqs as Megatron-LM PR #6479 adds it).

Args:
  sample_seqlens: list of (id, len) pairs, in any order.
  total_gpus, max_seq_len_per_rank, min_cp_size, max_num_seqs: as
    schedule_dynamic_cp.
  rank: None, or one rank r in [0, total_gpus).

Returns:
  (micro_batches, leftovers, exec_times, sample_ids), upstream's 4-tuple:
  micro_batches: per rank, the lens it holds (list[list[int]]);
  leftovers: the (id, len) tuples that did not fit, longest first, equal
    lengths in input order (list[tuple[int, int]]);
  exec_times: per rank, its attention work sum(len * len / cp) as a float,
    bit for bit upstream's (list[float]);
  sample_ids: per rank, the ids it holds (list[list[int]]).
  An empty sample list gives G empty ranks, times 0.0 and no leftovers.
  With rank=r, each per-rank element is rank r's alone and the leftovers
  are whole (every rank continues with the same ones):
  (micro_batches[r]: list[int], leftovers, exec_times[r]: float,
  sample_ids[r]: list[int]).

Raises:
  TypeError, ValueError: as schedule_dynamic_cp.
)doc";

constexpr char kScheduleDpBalancedDoc[] =
    R"doc(schedule_dp_balanced(sample_id_seqlens, dp_size, cp_size, max_seq_len_per_rank, *, max_num_seqs=None, vpp_group=None, rank=None)
--

Schedules one global batch with fixed CP: upstream's
DpBalancedScheduler.get_groups_and_subsamples.

Samples are packed in their given order into sequences of at most
max_seq_len_per_rank * cp_size tokens (and max_num_seqs samples); the number
of packed sequences is made a multiple of dp_size * (vpp_group or 1).

Args:
  sample_id_seqlens: list of (id, len) pairs; only the lens are used.
  dp_size, cp_size: the DP and CP sizes (dp_size * cp_size <= 65536).
  max_seq_len_per_rank: token budget of one rank.
  max_num_seqs: None, or at most this many samples per packed sequence.
  vpp_group: None, or microbatch_group_size_per_vp_stage.
  rank: None, or one rank r in [0, dp_size * cp_size):
    return only r's lists, never building the others.

Returns:
  list[list[list[int]]]: per microbatch, per rank (dp_size * cp_size lists),
  the POSITIONS in sample_id_seqlens (0-based) that rank processes, as
  upstream returns them; the cp_size ranks of one DP replica hold equal lists.
  With rank=r: list[list[int]], per microbatch rank r's positions, equal to
  [mb[r] for mb in the full result].

Raises:
  TypeError: an argument has the wrong type or shape.
  ValueError: rank is outside [0, dp_size * cp_size), the input is outside
    the limits, a sample is longer than
    max_seq_len_per_rank * cp_size, or there are too few samples to reach
    the multiple (upstream: "Not enough samples to move").
)doc";

constexpr char kScheduleCostAwareDoc[] =
    R"doc(schedule_cost_aware(sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, profile, min_cp_size=1, vpp_group=None, max_num_seqs=None, rank=None, details=False, pipeline_stages=1, virtual_stages=1, microbatch_group_size=None, layers_per_stage=1, forward_share=0.3333333333333333, expert_parallel_size=None, runtime="dev")
--

Schedules one global batch with the cost-aware scheduler (docs/cost_aware.md).

It minimises the step under `profile` as the runtime the keyword arguments
describe runs the schedule (docs/runtime_step.md; schedule_time measures
the same step): by default Megatron-LM dev without pipelining. It chooses
the microbatch count (through a per-rank token budget at or below
max_seq_len_per_rank, with pipelines), their order and each group's rank
block, and returns a schedule Megatron-LM's runtime can run: every
invariant of docs/specification.md but the work cap (5), invariant 11
included. It is never slower on that runtime than packing-aware's schedule
where that is runnable, and still schedules where packing-aware fails or
is refused (G not a power of two, VPP alignment).

Args:
  sample_id_seqlens: list of (id, len) pairs, as schedule_dynamic_cp takes.
  total_gpus: number of DPxCP ranks G, 1..65536.
  max_seq_len_per_rank: token budget of one rank in one microbatch.
  profile (keyword only): a dcpsched.CostProfile, e.g.
    CostProfile("h200-llama3-8b").
  min_cp_size, vpp_group, max_num_seqs (keyword only): as schedule_dynamic_cp.
  rank (keyword only): None, or one rank r: return only r's lists.
  details (keyword only): False returns the schedule; True a dict with
    "schedule", "source" ("planned" or "packing_aware": whose microbatches,
    rearranged), "reason" (one line: what it traded), "step_seconds" (the
    runtime's step), "token_budget" (the per-rank budget its microbatches
    were packed under), "runtime" (as schedule_time's) and
    "packing_aware_step_seconds" (packing-aware's step on the same runtime;
    None where packing-aware has no runnable schedule or the runtime cannot
    run it).
  pipeline_stages, virtual_stages, microbatch_group_size, layers_per_stage,
  forward_share, expert_parallel_size, runtime (keyword only): the runtime
    to minimise the step of, as schedule_time takes them.

Returns:
  list[list[list[int]]] as schedule_dynamic_cp (or the dict above).

Raises:
  TypeError: an argument has the wrong type or shape (profile not a
    CostProfile).
  InvalidInputError (a ValueError): the input is outside the limits, or
    the runtime can run no microbatch count.
  UnschedulableError (a ValueError): no runnable schedule was found (fewer
    samples than vpp_group, or too few ways to split them into a multiple
    of it); the message says what to change.
)doc";

constexpr char kVerifyDoc[] =
    R"doc(verify(schedule, sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, vpp_group=None, max_num_seqs=None, scheduler=None)
--

Checks a dynamic-CP schedule against the problem it claims to solve.

Works on any schedule in schedule_dynamic_cp's form (from this module,
from upstream, from a file) without running a scheduler; linear in the
schedule's size, so it is cheap enough as a runtime guard on every global
batch. Checked: no rank empty; every id exactly once, on one contiguous run
of ranks, no unknown id; CP sizes powers of two (or G) and at least what the
sample's length and min_cp_size need; per-rank tokens within
max_seq_len_per_rank; per-rank work within the microbatch's cap; with
vpp_group, a microbatch count that is a multiple of it; with max_num_seqs,
no rank holding more than that many samples in a microbatch (invariant 10).

Args:
  schedule: list[list[list[int]]], per microbatch, per rank, the ids.
  sample_id_seqlens, total_gpus, max_seq_len_per_rank, min_cp_size,
  vpp_group, max_num_seqs: the problem, as schedule_dynamic_cp takes it.
  scheduler (keyword only): None, or the scheduler that made the schedule;
    "cost_aware" promises every invariant but the work cap (5), which is
    then not judged.

Returns:
  list[str]: one message per violation, e.g.
  "invariant 4 (token budget): microbatch 0 rank 3 ..."; empty if the
  schedule keeps every invariant.

Raises:
  TypeError: an argument has the wrong type or shape.
  ValueError: the problem itself is invalid (the schedule is not judged).
)doc";

constexpr char kCostProfileDoc[] =
    R"doc(CostProfile(name_or_path)
--

A device cost profile: measured per-layer times on a GPU (causal and full
attention per sequence length, the rest of the layer per token count), by
which schedule_time measures a schedule in seconds (docs/cost_model.md).

Args:
  name_or_path: the name of a profile shipped with dcpsched
    (CostProfile.shipped_names()), or the path of a profile JSON file
    (schema "dcpsched.cost_profile.v1").

Raises:
  FileNotFoundError: neither a shipped name nor a readable file.
  InvalidInputError (a ValueError): the profile is malformed; the message
    names the field, e.g. "attention.causal.seconds[3] is -1".
)doc";

constexpr char kScheduleTimeDoc[] =
    R"doc(schedule_time(schedule, sample_id_seqlens, profile, max_seq_len_per_rank, cp_size=None, *, pipeline_stages=1, virtual_stages=1, microbatch_group_size=None, layers_per_stage=1, forward_share=0.3333333333333333, expert_parallel_size=None, runtime="dev")
--

Measures a schedule in GPU seconds by a cost profile (docs/cost_model.md),
and its training step on Megatron-LM's runtime (docs/runtime_step.md).

A rank's time in a microbatch is the non-attention part on the tokens it
holds plus each sample's attention (ring attention on zigzag halves for a
sample on several ranks; with the profile's communication model, the
slower of that and the modelled KV exchange). A microbatch takes its
slowest rank's time; step_seconds is the sum over microbatches (a barrier
after every microbatch). The runtime step model then runs the schedule as
the runtime does: each CP group (and expert-parallel group) waits only for
its own ranks, each pipeline rank runs its forwards and backwards in
Megatron-LM's order (pipeline_stage_order); "runtime" holds that step.

Args:
  schedule: list[list[list[int]]], per microbatch, per rank, the ids (any
    scheduler's result mapped to ids).
  sample_id_seqlens: the (id, len) pairs the schedule places.
  profile: a CostProfile.
  max_seq_len_per_rank: the token budget (the bound lets a sample use no
    fewer ranks than it needs).
  cp_size: None, or a fixed CP size the bound also allows (dp_balanced's).
  The runtime (keyword only; the CLI's flags in brackets):
  pipeline_stages: P, pipeline ranks behind every DPxCP rank (--pp).
  virtual_stages: V, model chunks per pipeline rank; V > 1 is interleaved
    1F1B and needs P > 1 (--virtual-stages).
  microbatch_group_size: N, microbatch_group_size_per_vp_stage (used when
    V > 1); None is P, Megatron-LM's default (--vpp).
  layers_per_stage: L, transformer layers on one pipeline rank, split over
    its V chunks; every time in "runtime" is for L layers
    (--layers-per-stage).
  forward_share: the forward pass's share of a layer's time, in (0, 1); the
    profiles time forward and backward together, so 1/3 is an assumption
    (--forward-share).
  expert_parallel_size: None (dense), or E: each block of E consecutive
    DPxCP ranks moves in lockstep (MoE all-to-all); E = G models
    global_aux_loss (--ep).
  runtime: "dev" (Megatron-LM dev: no barrier between microbatches) or
    "legacy" (main's hybrid_context_parallel_forward_backward: a barrier
    after every microbatch; P = 1 only) (--runtime).

Returns:
  dict: "step_seconds" (float: the barrier step), "bound_seconds" (float: no
  schedule of the samples on G ranks with CP sizes powers of two, G or
  cp_size is faster), "gpu_efficiency" (bound / step), "microbatch_seconds"
  (list[float], the slowest rank of each), "communication_modelled" (bool)
  and "runtime", the JSON run documents' quality.runtime object
  (docs/schedule_json.md): "path", "pipeline_stages", "virtual_stages",
  "microbatch_group_size" (N, P where None was given), "layers_per_stage",
  "forward_share", "expert_parallel_size" (None or int), "step_seconds"
  (the step on that runtime), "busiest_rank_seconds" (the most time any
  pipeline rank spends in its own ops), "bubble_seconds" (step minus
  busiest) and "bound_seconds" (a bound the modelled step never goes below).

Raises:
  TypeError: an argument has the wrong type or shape.
  InvalidInputError (a ValueError): the schedule names an unknown id, its
    microbatches differ in width, or the samples are invalid; or the
    runtime refuses it, with the core's message saying what to change
    (it names the CLI's flags): P, V, L or N out of range, V > 1 with
    P = 1, a microbatch count Megatron-LM refuses to interleave (N above
    it, N below P, or a last group of fewer than P), E not dividing G,
    "legacy" with P > 1, forward_share outside (0, 1).
)doc";

constexpr char kPipelineStageOrderDoc[] =
    R"doc(pipeline_stage_order(stages, virtual_stages, num_microbatches, pipeline_rank, *, microbatch_group_size=None)
--

The order in which one pipeline rank runs its forward and backward passes
in Megatron-LM (dev d48bd6be0a, megatron/core/pipeline_parallel/
schedules.py): the order the runtime step model (schedule_time's
"runtime") runs every pipeline rank in. docs/runtime_step.md has the rule;
`python3 -m dcpsched.conformance --megatron PATH --pipeline-order` checks
it against a Megatron-LM checkout.

- stages = 1 (forward_backward_no_pipelining): each microbatch's forward,
  then its backward.
- stages > 1, virtual_stages = 1 (1F1B): w = min(P - p - 1, M) warm-up
  forwards, then one forward and one backward at a time, then the last w
  backwards.
- virtual_stages > 1 (interleaved 1F1B): the ops of get_schedule_table and
  convert_schedule_table_to_order, with get_pp_rank_microbatches' warm-up.

Args:
  stages: P, pipeline ranks, >= 1.
  virtual_stages: V, model chunks per pipeline rank, >= 1 (V > 1 needs
    P > 1).
  num_microbatches: M, >= 0.
  pipeline_rank: p in [0, P).
  microbatch_group_size (keyword only): N,
    microbatch_group_size_per_vp_stage (V > 1 only); None is P,
    Megatron-LM's default.

Returns:
  list[tuple[int, int, bool]]: the ops in the order run, each
  (microbatch, chunk, forward): forward True for a forward pass, False for
  a backward one; 2 M V ops in all.

Raises:
  TypeError: an argument is not an int.
  InvalidInputError (a ValueError): a shape Megatron-LM refuses (its
    message says what to change: N above M or below P, or a last group of
    0 < M mod N < P microbatches), P or V below 1, V > 1 with P = 1, N
    below 1, M below 0, more ops than dcpsched models, or pipeline_rank
    outside [0, P).
)doc";

}  // namespace
}  // namespace dcpsched

PYBIND11_MODULE(_core, module) {
  namespace py = ::pybind11;
  py::options options;
  options.disable_function_signatures();

  module.doc() = dcpsched::kModuleDoc;
  module.attr("__version__") = DCPSCHED_VERSION;
  // Subclasses of ValueError, so `except ValueError` keeps catching both.
  const auto add_error = [&module](const char* name, const char* doc) {
    const std::string qualified = std::string("dcpsched.") + name;
    PyObject* const type = PyErr_NewExceptionWithDoc(
        qualified.c_str(), doc, PyExc_ValueError, nullptr);
    if (type == nullptr) throw py::error_already_set();
    module.attr(name) = py::reinterpret_steal<py::object>(type);
  };
  add_error(dcpsched::kInvalidInputError, dcpsched::kInvalidInputErrorDoc);
  add_error(dcpsched::kUnschedulableError, dcpsched::kUnschedulableErrorDoc);

  // The optional parameters are keyword-only: upstream orders them
  // differently from function to function (get_groups_and_subsamples's
  // scheduler takes vpp_group before max_num_seqs, DpBalancedScheduler
  // max_num_seqs first), and a positional call is where such a swap would
  // pass unnoticed.
  module.def("schedule_dynamic_cp", &dcpsched::PyScheduleDynamicCp,
             py::arg("sample_id_seqlens"), py::arg("total_gpus"),
             py::arg("max_seq_len_per_rank"), py::kw_only(),
             py::arg("min_cp_size") = 1, py::arg("vpp_group") = py::none(),
             py::arg("max_num_seqs") = py::none(), py::arg("rank") = py::none(),
             py::arg("runnable") = true, dcpsched::kScheduleDynamicCpDoc);
  module.def("next_group_packing_aware", &dcpsched::PyNextGroupPackingAware,
             py::arg("sample_seqlens"), py::arg("total_gpus"),
             py::arg("max_seq_len_per_rank"), py::kw_only(),
             py::arg("min_cp_size") = 1, py::arg("max_num_seqs") = py::none(),
             py::arg("rank") = py::none(),
             dcpsched::kNextGroupPackingAwareDoc);
  module.def("schedule_dp_balanced", &dcpsched::PyScheduleDpBalanced,
             py::arg("sample_id_seqlens"), py::arg("dp_size"),
             py::arg("cp_size"), py::arg("max_seq_len_per_rank"),
             py::kw_only(), py::arg("max_num_seqs") = py::none(),
             py::arg("vpp_group") = py::none(), py::arg("rank") = py::none(),
             dcpsched::kScheduleDpBalancedDoc);
  module.def("schedule_legacy", &dcpsched::PyScheduleLegacy,
             py::arg("sample_id_seqlens"), py::arg("total_gpus"),
             py::arg("max_seq_len_per_rank"), py::kw_only(),
             py::arg("min_cp_size") = 1, py::arg("vpp_group") = py::none(),
             py::arg("rank") = py::none(), py::arg("runnable") = true,
             dcpsched::kScheduleLegacyDoc);
  module.def("align_to_vpp_group", &dcpsched::PyAlignToVppGroup,
             py::arg("schedule"), py::arg("vpp_group"),
             dcpsched::kAlignToVppGroupDoc);
  py::class_<dcpsched::CostProfile>(module, "CostProfile", dcpsched::kCostProfileDoc)
      .def(py::init(&dcpsched::PyLoadCostProfile), py::arg("name_or_path"))
      .def_static("from_json", &dcpsched::PyParseCostProfile, py::arg("text"),
                  "from_json(text)\n--\n\nThe profile a JSON document holds "
                  "(InvalidInputError naming the field if it is malformed).")
      .def_static("shipped_names", &dcpsched::ShippedCostProfileNames,
                  "shipped_names()\n--\n\nThe names of the profiles shipped "
                  "with dcpsched, sorted.")
      .def_readonly("name", &dcpsched::CostProfile::name)
      .def_readonly("description", &dcpsched::CostProfile::description)
      .def_readonly("device", &dcpsched::CostProfile::device)
      .def_readonly("model", &dcpsched::CostProfile::model)
      .def_property_readonly("communication_modelled",
                             [](const dcpsched::CostProfile& profile) {
                               return profile.communication.has_value();
                             })
      .def("causal_attention_seconds",
           [](const dcpsched::CostProfile& profile, double len) {
             return dcpsched::CausalAttentionSeconds(profile, len);
           },
           py::arg("len"),
           "causal_attention_seconds(len)\n--\n\nCausal attention of one "
           "sequence of len tokens, in seconds.")
      .def("full_attention_seconds",
           [](const dcpsched::CostProfile& profile, double len) {
             return dcpsched::FullAttentionSeconds(profile, len);
           },
           py::arg("len"),
           "full_attention_seconds(len)\n--\n\nFull (unmasked) attention "
           "between blocks of len tokens, in seconds.")
      .def("non_attention_seconds",
           [](const dcpsched::CostProfile& profile, double tokens) {
             return dcpsched::NonAttentionSeconds(profile, tokens);
           },
           py::arg("tokens"),
           "non_attention_seconds(tokens)\n--\n\nThe rest of the layer on "
           "tokens tokens, in seconds (0 for none).")
      .def("__repr__", [](const dcpsched::CostProfile& profile) {
        return "<dcpsched.CostProfile " + profile.name + ">";
      });
  module.def("schedule_time", &dcpsched::PyScheduleTime, py::arg("schedule"),
             py::arg("sample_id_seqlens"), py::arg("profile"),
             py::arg("max_seq_len_per_rank"), py::arg("cp_size") = py::none(),
             py::kw_only(), py::arg("pipeline_stages") = 1, py::arg("virtual_stages") = 1,
             py::arg("microbatch_group_size") = py::none(), py::arg("layers_per_stage") = 1,
             py::arg("forward_share") = 1.0 / 3.0,
             py::arg("expert_parallel_size") = py::none(), py::arg("runtime") = "dev",
             dcpsched::kScheduleTimeDoc);
  module.def("pipeline_stage_order", &dcpsched::PyPipelineStageOrder, py::arg("stages"),
             py::arg("virtual_stages"), py::arg("num_microbatches"),
             py::arg("pipeline_rank"), py::kw_only(),
             py::arg("microbatch_group_size") = py::none(), dcpsched::kPipelineStageOrderDoc);
  module.def("verify", &dcpsched::PyVerify, py::arg("schedule"),
             py::arg("sample_id_seqlens"), py::arg("total_gpus"),
             py::arg("max_seq_len_per_rank"), py::kw_only(),
             py::arg("min_cp_size") = 1, py::arg("vpp_group") = py::none(),
             py::arg("max_num_seqs") = py::none(), py::arg("scheduler") = py::none(),
             dcpsched::kVerifyDoc);
  module.def("schedule_cost_aware", &dcpsched::PyScheduleCostAware,
             py::arg("sample_id_seqlens"), py::arg("total_gpus"),
             py::arg("max_seq_len_per_rank"), py::kw_only(), py::arg("profile"),
             py::arg("min_cp_size") = 1, py::arg("vpp_group") = py::none(),
             py::arg("max_num_seqs") = py::none(), py::arg("rank") = py::none(),
             py::arg("details") = false, py::arg("pipeline_stages") = 1,
             py::arg("virtual_stages") = 1, py::arg("microbatch_group_size") = py::none(),
             py::arg("layers_per_stage") = 1, py::arg("forward_share") = 1.0 / 3.0,
             py::arg("expert_parallel_size") = py::none(), py::arg("runtime") = "dev",
             dcpsched::kScheduleCostAwareDoc);
  module.def("benchmark_workload", &dcpsched::PyBenchmarkWorkload,
             py::arg("num_samples") = 256, py::kw_only(),
             py::arg("seed") = 5154, py::arg("preset") = "benchmark",
             dcpsched::kBenchmarkWorkloadDoc);
  // ((branch, commit, outcome), ...): core/upstream_revisions.h.
  py::list checked;
  for (const dcpsched::UpstreamRevision& revision : dcpsched::kUpstreamChecked) {
    checked.append(py::make_tuple(revision.branch, revision.commit, revision.outcome));
  }
  module.attr("UPSTREAM_CHECKED") = py::tuple(checked);
}

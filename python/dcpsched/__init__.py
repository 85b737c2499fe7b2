"""dcpsched: Megatron-LM's dynamic context-parallel packing scheduler in C++.

Schedules variable-length sequences onto DPxCP ranks exactly as upstream's
DefaultDynamicCPScheduler (#5154) does, bit for bit, but raises an error
where upstream crashes, hangs or breaks its own invariants. The GIL is
released while scheduling.

Functions (from the extension dcpsched._core):
  schedule_dynamic_cp       DefaultDynamicCPScheduler.get_groups_and_subsamples
  next_group_packing_aware  next_hdp_group_packing_aware (one microbatch)
  align_to_vpp_group        align_sample_id_groups (VPP alignment)
  schedule_dp_balanced      DpBalancedScheduler.get_groups_and_subsamples
  schedule_legacy           the bucket scheduler #5154 replaced
  schedule_cost_aware       the cost-aware scheduler: fastest runnable schedule
                            under a CostProfile (docs/cost_aware.md)
  verify                    the schedule checker, a runtime guard
  benchmark_workload        the batch `dcpsched schedule` generates (the
                            same generator: same seed, same lengths)
  CostProfile, schedule_time  a schedule in GPU seconds by a measured cost
                            profile (docs/cost_model.md), and its step on
                            Megatron-LM's runtime (docs/runtime_step.md)
  pipeline_stage_order      a pipeline rank's forward/backward order, as
                            Megatron-LM runs it (1F1B, interleaved)

Optional arguments are keyword-only (upstream orders them differently from
one scheduler to the next). UPSTREAM_CHECKED names the Megatron-LM commits
this build was checked against; `dcpsched --version` prints the same.

In a Megatron-LM training job: dcpsched.megatron.install_into_megatron()
(python/README.md, "The drop-in in a training job").

Errors: TypeError for an argument of the wrong type or shape;
InvalidInputError (a ValueError) for input outside the limits;
UnschedulableError (a ValueError) for input upstream's algorithm cannot
schedule; RuntimeError for an internal error.

`python3 -m dcpsched.conformance --megatron PATH` compares this package with
the scheduler of a Megatron-LM checkout (dcpsched/conformance/).

Without the extension: the pure-Python modules dcpsched.cost_model,
dcpsched.cost_profile, dcpsched.calibrate and dcpsched.replay (GPU cost
profiles, docs/cost_model_python.md) need torch or nothing, not the
extension: they must run from a source tree (PYTHONPATH=python) on a GPU
machine where nothing was compiled. So a
*missing* extension (ModuleNotFoundError for dcpsched._core, and only that)
does not fail `import dcpsched`: the extension's names are then resolved
lazily (PEP 562 __getattr__), and using any of them raises ImportError
saying the extension is not built. An extension that exists but fails to
load (a broken build, an ABI mismatch) still fails the import, as before.
"""

try:
    from dcpsched._core import (
        CostProfile,
        InvalidInputError,
        UPSTREAM_CHECKED,
        UnschedulableError,
        __version__,
        align_to_vpp_group,
        benchmark_workload,
        next_group_packing_aware,
        pipeline_stage_order,
        schedule_cost_aware,
        schedule_dp_balanced,
        schedule_dynamic_cp,
        schedule_legacy,
        schedule_time,
        verify,
    )
except ModuleNotFoundError as error:
    if error.name != "dcpsched._core":
        raise
    _CORE_MISSING = error
else:
    _CORE_MISSING = None

__all__ = [
    "CostProfile",
    "InvalidInputError",
    "UPSTREAM_CHECKED",
    "UnschedulableError",
    "__version__",
    "align_to_vpp_group",
    "benchmark_workload",
    "next_group_packing_aware",
    "pipeline_stage_order",
    "schedule_cost_aware",
    "schedule_dp_balanced",
    "schedule_dynamic_cp",
    "schedule_legacy",
    "schedule_time",
    "verify",
]


def __getattr__(name):
    """Only reached when dcpsched._core is not built: its names fail clearly."""
    if _CORE_MISSING is not None and name in __all__:
        raise ImportError(
            f"dcpsched.{name} needs the compiled extension dcpsched._core, which is "
            "not built here (build it with CMake or pip, python/README.md); only the "
            "pure-Python modules (cost_model, cost_profile, calibrate, replay) work "
            "without it") from _CORE_MISSING
    raise AttributeError(f"module 'dcpsched' has no attribute {name!r}")

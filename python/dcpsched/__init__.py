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
  verify                    the schedule checker, a runtime guard
  CostProfile, schedule_time  a schedule in GPU seconds by a measured cost
                            profile (docs/cost_model.md)

Errors: TypeError for an argument of the wrong type or shape;
InvalidInputError (a ValueError) for input outside the limits;
UnschedulableError (a ValueError) for input upstream's algorithm cannot
schedule; RuntimeError for an internal error.

`python3 -m dcpsched.conformance --megatron PATH` compares this package with
the scheduler of a Megatron-LM checkout (dcpsched/conformance/).
"""

from dcpsched._core import (
    CostProfile,
    InvalidInputError,
    UnschedulableError,
    __version__,
    align_to_vpp_group,
    next_group_packing_aware,
    schedule_dp_balanced,
    schedule_dynamic_cp,
    schedule_legacy,
    schedule_time,
    verify,
)

__all__ = [
    "CostProfile",
    "InvalidInputError",
    "UnschedulableError",
    "__version__",
    "align_to_vpp_group",
    "next_group_packing_aware",
    "schedule_dp_balanced",
    "schedule_dynamic_cp",
    "schedule_legacy",
    "schedule_time",
    "verify",
]

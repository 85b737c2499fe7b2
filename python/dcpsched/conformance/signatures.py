"""Upstream's parameters that dcpsched does not model, read from upstream itself.

A conformance run is only as good as the parameters it passes: when upstream
gains one (Megatron-LM PR #6479 gave next_hdp_group_packing_aware
max_num_seqs), a check that never sets it compares upstream's default
behaviour only and stays green while dcpsched lacks the feature. So the run
reads, with inspect.signature, every upstream callable it calls (of the
schedulers the checkout carries): the scheduler classes' __init__ through
their MRO, their get_groups_and_subsamples, next_hdp_group_packing_aware
and align_sample_id_groups; and compares them with MODELLED, the parameters
dcpsched has a counterpart for. Each parameter upstream has that MODELLED
lacks is named as "function(parameter)" (cli.py then fails the run).
*args and **kwargs are forwarding, not parameters of their own.
"""

import inspect
from typing import Dict, FrozenSet, List

# Per upstream callable (by its shown name "Class.method", else by its
# __name__), the parameters dcpsched models.
MODELLED: Dict[str, FrozenSet[str]] = {
    # The legacy scheduler (hybrid_cp_schedule.py): its group's size() is G.
    "BalancedCPScheduler.__init__": frozenset({"self", "max_seq_len_per_rank",
                                               "dp_cp_group"}),
    # config: taken and read by nothing (the check passes None; were it
    # read, upstream would raise and the check would say so).
    "BalancedCPScheduler.get_groups_and_subsamples": frozenset({"self", "sample_id_seqlens",
                                                                "config"}),
    # BasePackingScheduler, DpBalancedScheduler, DefaultDynamicCPScheduler.
    "__init__": frozenset({"self", "max_seqlen_per_dp_cp_rank", "cp_size", "dp_size",
                           "microbatch_group_size_per_vp_stage", "max_num_seqs",
                           "min_cp_size"}),
    "get_groups_and_subsamples": frozenset({"self", "sample_id_seqlens"}),
    "next_hdp_group_packing_aware": frozenset({"sample_seqlens", "total_gpus",
                                               "max_seq_len_per_rank", "min_cp_size",
                                               "max_num_seqs"}),
    "align_sample_id_groups": frozenset({"sample_id_groups",
                                         "microbatch_group_size_per_vp_stage"}),
}
_FORWARDING = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _parameters(function) -> List[str]:
    return [name for name, parameter in inspect.signature(function).parameters.items()
            if parameter.kind not in _FORWARDING]


def _called(upstream):
    """(shown name, callable) for every upstream callable the check calls."""
    called = []
    for scheduler in (upstream.dynamic_cp_scheduler, upstream.dp_balanced_scheduler,
                      upstream.legacy_scheduler):
        if scheduler is None:
            continue
        for cls in scheduler.__mro__:
            if cls is not object and "__init__" in vars(cls):
                called.append((f"{cls.__name__}.__init__", vars(cls)["__init__"]))
        method = scheduler.get_groups_and_subsamples
        called.append((method.__qualname__, method))
    for name, function in (("next_hdp_group_packing_aware", upstream.next_group_packing_aware),
                           ("align_sample_id_groups", upstream.align_sample_id_groups)):
        if function is not None:
            called.append((name, function))
    return called


def unmodelled_parameters(upstream) -> List[str]:
    """"function(parameter)" for each parameter of an upstream callable the
    check calls that dcpsched does not model, each once, in call order."""
    found = []
    for shown, function in _called(upstream):
        modelled = MODELLED.get(shown, MODELLED.get(function.__name__, frozenset()))
        for name in _parameters(function):
            entry = f"{shown}({name})"
            if name not in modelled and entry not in found:
                found.append(entry)
    return found

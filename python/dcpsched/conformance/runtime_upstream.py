"""Loads the runtime side of a Megatron-LM checkout: its dynamic-CP process
groups and the batch function that uses them, for the distributed harness.

One step past run(): a training step hands each microbatch to
data_schedule.py's get_batch_on_this_rank_for_sequence_packing, which looks
the rank's CP group up with parallel_state.py's
get_dynamic_data_context_parallel_groups (groups that
create_dynamic_dp_cp_groups made at start-up) and splits the rank's samples
over it. load() loads megatron/core/parallel_state.py and
megatron/core/packed_seq_params.py from the user's checkout as they are
(never copied), with the real torch, the rest of Megatron-LM served by
stand-ins while they load, and wires them into the already loaded pipeline
(pipeline_upstream.py), whose data_schedule.py imported both names as
stand-ins. What cannot run on CPU with torch 1.13 is replaced, and named
(Runtime.shims):

- is_torch_min_version (megatron.core.utils, not loaded: it imports
  torch.distributed.checkpoint and Megatron-LM's checkpointing, which
  torch 1.13 lacks): compares torch.__version__ (parallel_state's
  create_group reads it to drop group_desc, which torch < 2.4 lacks);
- torch.distributed.new_group, as create_group calls it: without
  use_local_synchronization when False (its meaning in torch 1.13, which
  lacks the argument);
- get_thd_partitioned_indices (Transformer Engine, CUDA only), where the
  checkout's data_schedule_utils.py uses it: cpu_shims.thd_zigzag_indices.

Start-up itself (initialize_model_parallel) needs NCCL and CUDA barriers;
start_groups() does what its dynamic_context_parallel block does, with the
checkout's own create_dynamic_dp_cp_groups: refuse an odd G, create the
groups for every DPxCP rank list, and make the whole DPxCP group the one
get_dynamic_data_context_parallel_groups returns for size G.
"""

import dataclasses
import pathlib
import re
import types
from typing import List, Optional

import torch
import torch.distributed as dist

from dcpsched.conformance import cpu_shims, pipeline_upstream, runtime_groups, upstream

PARALLEL_STATE = pathlib.Path("megatron", "core", "parallel_state.py")
PACKED_SEQ_PARAMS = pathlib.Path("megatron", "core", "packed_seq_params.py")
PARALLEL_STATE_MODULE = "megatron.core.parallel_state"
PACKED_SEQ_PARAMS_MODULE = "megatron.core.packed_seq_params"
# parallel_state's globals for the whole DPxCP group (the names vary by commit).
DP_CP_GROUP_GLOBALS = ("_DATA_PARALLEL_GROUP_WITH_CP", "_DATA_PARALLEL_GROUP_WITH_CP_WITH_GTP_REMAT")
NEEDED = ("create_dynamic_dp_cp_groups", "get_dynamic_data_context_parallel_groups")
GET_BATCH = "get_batch_on_this_rank_for_sequence_packing"


@dataclasses.dataclass
class Runtime:
    """The checkout's runtime side, as loaded and wired."""

    parallel_state: types.ModuleType
    get_batch: object  # get_batch_on_this_rank_for_sequence_packing
    shims: List[str]


def _version_tuple(text: str):
    return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])


def torch_at_least(version, check_equality=True):
    """is_torch_min_version's answer, from torch.__version__ (release numbers only)."""
    have, want = _version_tuple(torch.__version__), _version_tuple(version)
    return have >= want if check_equality else have > want


def _new_group_without_local_synchronization(real):
    def new_group(*args, use_local_synchronization=False, group_desc=None, **kwargs):
        if use_local_synchronization:
            raise NotImplementedError("new_group(use_local_synchronization=True) needs torch "
                                      ">= 2.1; the harness runs torch " + torch.__version__)
        del group_desc  # a label only; torch < 2.4 has none
        return real(*args, **kwargs)
    new_group.dcpsched_shim = True
    return new_group


def check_has_runtime(checkout) -> None:
    """Raises upstream.MissingFunction if the checkout lacks what the lookup needs."""
    root = pathlib.Path(checkout)
    path = root / PARALLEL_STATE
    if not path.is_file():
        raise upstream.MissingFunction(f"{path} not found: the distributed harness runs the "
                                       "runtime's CP group lookup from it")
    text = path.read_text(errors="replace")
    missing = [name for name in NEEDED if f"def {name}(" not in text]
    schedule = root / upstream.DATASETS / "data_schedule.py"
    if f"def {GET_BATCH}(" not in schedule.read_text(errors="replace"):
        missing.append(f"data_schedule.py: {GET_BATCH}")
    if missing:
        raise upstream.MissingFunction(
            f"the checkout at {root} lacks what the runtime's group lookup needs: "
            f"{', '.join(missing)}")


def load(checkout, pipeline) -> Runtime:
    """The checkout's parallel_state and batch function, wired into `pipeline`
    (pipeline_upstream.load's); raises upstream.MissingFunction if absent."""
    check_has_runtime(checkout)
    root = pathlib.Path(checkout)
    files = [(PARALLEL_STATE_MODULE, root / PARALLEL_STATE)]
    if (root / PACKED_SEQ_PARAMS).is_file():
        files.append((PACKED_SEQ_PARAMS_MODULE, root / PACKED_SEQ_PARAMS))
    modules = upstream.load_modules(files, pipeline_upstream.PIPELINE_STUBBED_ROOTS)
    state = modules[0]
    shims = []
    if upstream.is_stand_in(vars(state).get("is_torch_min_version")):
        state.is_torch_min_version = torch_at_least
        shims.append("is_torch_min_version (megatron.core.utils, not loaded: it imports "
                     "torch.distributed.checkpoint, which torch 1.13 lacks) -> compares "
                     f"torch.__version__ ({torch.__version__})")
    pipeline_upstream.refuse_stand_ins(state)
    if not getattr(dist.new_group, "dcpsched_shim", False):
        dist.new_group = _new_group_without_local_synchronization(dist.new_group)
    shims.append("torch.distributed.new_group as parallel_state's create_group calls it -> "
                 "without use_local_synchronization=False and group_desc (torch 1.13 lacks "
                 "both; False is its behaviour)")
    # data_schedule.py imported parallel_state and packed_seq_params' names as
    # stand-ins: give it the loaded ones.
    schedule = pipeline.loaded.schedule_module
    provided = {"parallel_state": state}
    if len(modules) > 1:
        provided.update({name: value for name, value in vars(modules[1]).items()
                         if not name.startswith("__")})
    for module in (schedule, pipeline.loaded.utils_module):
        for name, value in list(vars(module).items()):
            if pipeline_upstream.is_refusing(value) and name in provided:
                setattr(module, name, provided[name])
    utils = pipeline.loaded.utils_module
    if pipeline_upstream.is_refusing(vars(utils).get("get_thd_partitioned_indices")):
        utils.get_thd_partitioned_indices = cpu_shims.thd_zigzag_indices
        shims.append("get_thd_partitioned_indices (Transformer Engine, CUDA only) -> "
                     + cpu_shims.THD_ZIGZAG)
    return Runtime(parallel_state=state, get_batch=getattr(schedule, GET_BATCH), shims=shims)


def start_groups(runtime: Runtime, world: int, tp: int, min_cp_size: int):
    """The dynamic-CP groups start-up creates for tp x (G = world / tp) ranks
    (Megatron-LM's order: tp fastest): {size: this rank's group}, or the
    reason start-up refuses (a string). Collective: every rank calls it
    with the same arguments, in the same order."""
    total = world // tp
    if runtime_groups.odd_group_refused(total):
        return (f"G={total} is odd: Megatron-LM refuses an odd number of DPxCP ranks for "
                "dynamic CP at start-up")
    rank = dist.get_rank()
    mine = {}
    for t in range(tp):
        ranks = [t + tp * i for i in range(total)]
        mine.update(runtime.parallel_state.create_dynamic_dp_cp_groups(
            rank, ranks, None, min_cp_size=min_cp_size))
    return mine


def use_groups(runtime: Runtime, created: dict, dp_cp_group) -> Optional[str]:
    """Makes `created` (start_groups') and the whole DPxCP group the groups
    parallel_state answers with; returns an internal-error message if the
    lookup of size G then does not give the whole group."""
    state = runtime.parallel_state
    state._DYNAMIC_DP_CP_GROUPS = created  # pylint: disable=protected-access
    for name in DP_CP_GROUP_GLOBALS:
        if hasattr(state, name):
            setattr(state, name, dp_cp_group)
    whole = state.get_dynamic_data_context_parallel_groups(group_size=dp_cp_group.size())
    if dist.get_process_group_ranks(whole) != dist.get_process_group_ranks(dp_cp_group):
        return ("the checkout's get_dynamic_data_context_parallel_groups does not give the "
                "whole DPxCP group for its size: the harness's wiring does not fit it")
    return None

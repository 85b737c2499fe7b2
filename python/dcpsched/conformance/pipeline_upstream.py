"""Loads upstream's data pipeline (wrap_data_iterator, run) with the real torch.

The distributed harness's rank processes load data_schedule.py and
data_schedule_utils.py from the checkout as upstream.load() does (the real
files, never copied), but with the real torch, so upstream's gather,
rerouting, packing and broadcasts run on torch.distributed. The rest of
Megatron-LM (megatron.core.*, Transformer Engine) is still served by
stand-ins while the files load. Afterwards every stand-in left in the two
modules' globals is replaced by one that raises when used, except these
two, which run() calls and which the harness provides (named in the
report, STAND_INS):

- mtp_on_this_rank (megatron.core.transformer.multi_token_prediction):
  False, the answer of upstream's function without multi-token prediction
  layers (the harness's config has mtp_num_layers None; any other value is
  refused);
- RerunDataIterator (megatron.core.rerun_state_machine): an iterator that
  yields what it wraps, as upstream's does with its rerun state machine
  disabled (no replay).

So if the checkout's run() comes to use any other Megatron-LM function the
harness does not provide, the run fails saying which, rather than checking
less than it claims.
"""

import dataclasses
import sys
import types
from typing import Dict

from dcpsched.conformance import upstream

# Loaded with the real torch and numpy: only Megatron-LM's other packages
# (and CUDA-only libraries) are stand-ins.
PIPELINE_STUBBED_ROOTS = ("megatron", "transformer_engine", "apex", "triton")

STAND_INS = (
    "mtp_on_this_rank -> False (no multi-token prediction; mtp_num_layers None)",
    "RerunDataIterator -> yields what it wraps (rerun state machine disabled)",
)


class MissingStandIn(RuntimeError):
    """Upstream's pipeline used a Megatron-LM function the harness does not provide."""


class PassThroughDataIterator:
    """RerunDataIterator with the rerun state machine disabled: next() is the
    wrapped iterator's next()."""

    def __init__(self, iterable):
        self.iterable = iterable

    def __next__(self):
        return next(self.iterable)


def mtp_on_this_rank(config, ignore_virtual=True, vp_stage=None):  # pylint: disable=unused-argument
    """Upstream's answer without multi-token prediction layers."""
    if getattr(config, "mtp_num_layers", None) is not None:
        raise MissingStandIn("the harness models no multi-token prediction (mtp_num_layers)")
    return False


def _refusing(module_name, name):
    def refuse(*args, **kwargs):
        raise MissingStandIn(
            f"upstream's {module_name} used {name}, a Megatron-LM name the distributed harness "
            "does not provide: this checkout's pipeline needs more than the harness runs")
    refuse.__name__ = name
    refuse.refuses_stand_in = True
    return refuse


def is_refusing(value) -> bool:
    """True if `value` is a refusing stand-in this module put in place."""
    return getattr(value, "refuses_stand_in", False) is True


def refuse_stand_ins(module, provided=None) -> None:
    """Replaces every stand-in left in the module's globals by one that
    raises MissingStandIn when used, but those `provided` ({name: value})."""
    provided = provided or {}
    for name, value in list(vars(module).items()):
        if name in provided:
            setattr(module, name, provided[name])
        elif upstream.is_stand_in(value):
            setattr(module, name, _refusing(module.__name__, name))


_PROVIDED = {"mtp_on_this_rank": mtp_on_this_rank, "RerunDataIterator": PassThroughDataIterator}


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """Upstream's pipeline, as loaded."""

    loaded: upstream.Upstream
    wrap_data_iterator: object
    scheduler_map: Dict[str, type]


def check_has_pipeline(loaded: upstream.Upstream) -> None:
    """Raises upstream.MissingFunction if the loaded checkout has no
    wrap_data_iterator, scheduler_map or DpBalancedScheduler.run."""
    schedule = loaded.schedule_module
    missing = [name for name in ("wrap_data_iterator", "scheduler_map")
               if getattr(schedule, name, None) is None or upstream.is_stand_in(
                   getattr(schedule, name))]
    if not callable(getattr(loaded.dp_balanced_scheduler, "run", None)):
        missing.append("DpBalancedScheduler.run")
    if missing:
        raise upstream.MissingFunction(
            f"{loaded.schedule_file} lacks what the distributed harness needs: "
            f"{', '.join(missing)}")


def load(checkout) -> Pipeline:
    """Upstream's data pipeline of `checkout`; raises upstream.MissingFunction
    if it has no wrap_data_iterator / scheduler_map / run()."""
    loaded = upstream.load(checkout, stubbed_roots=PIPELINE_STUBBED_ROOTS)
    check_has_pipeline(loaded)
    schedule = loaded.schedule_module
    for module in (loaded.schedule_module, loaded.utils_module):
        refuse_stand_ins(module, _PROVIDED)
    _expose(loaded)
    return Pipeline(loaded=loaded, wrap_data_iterator=schedule.wrap_data_iterator,
                    scheduler_map=schedule.scheduler_map)


def _expose(loaded) -> None:
    """Makes `from megatron.core.datasets import data_schedule` give the loaded
    module (the drop-in's install_into_megatron imports it so)."""
    names = ["megatron", "megatron.core", "megatron.core.datasets"]
    for name in names:
        if name not in sys.modules:
            sys.modules[name] = types.ModuleType(name)
    sys.modules["megatron.core"].datasets = sys.modules["megatron.core.datasets"]
    sys.modules["megatron"].core = sys.modules["megatron.core"]
    datasets = sys.modules["megatron.core.datasets"]
    datasets.data_schedule = loaded.schedule_module
    datasets.data_schedule_utils = loaded.utils_module
    sys.modules[upstream.SCHEDULE_MODULE] = loaded.schedule_module
    sys.modules[upstream.UTILS_MODULE] = loaded.utils_module

"""Loads the scheduling code of a Megatron-LM checkout, as it is, without torch.

megatron/core/datasets/data_schedule_utils.py and data_schedule.py, and
megatron/core/pipeline_parallel/hybrid_cp_schedule.py where the checkout has
it, are loaded from the checkout the user names: the real files,
unmodified, never copied, and no bytecode is written next to them. Their imports that play no part in
scheduling (torch, the rest of megatron.core: process groups, Transformer
Engine, packed-sequence helpers) are served by stand-in modules for the time
of the loading, so no GPU, no torch and no Megatron-LM install are needed.
A stand-in yields, for any attribute, a class that can be called, used as a
decorator, subclassed and used in annotations; scheduling never calls one.

load() returns the schedulers the checkout carries (and the modules, for
tools that install into them, e.g. the drop-in's install_into_megatron);
each one it lacks is None there, and Upstream.schedulers() says which are
which (SCHEDULERS):

  packing-aware  DefaultDynamicCPScheduler, next_hdp_group_packing_aware,
                 align_sample_id_groups (Megatron-LM dev, PR #6479)
  dp_balanced    DpBalancedScheduler (dev; main, without max_num_seqs)
  legacy         BalancedCPScheduler of hybrid_cp_schedule.py (dev and main)

load() raises MissingFunction only for a path that is no checkout (no
data_schedule.py or data_schedule_utils.py); require() raises it for a
tool that needs a scheduler the checkout lacks (the distributed harness
needs the packing-aware one).

Which runtime runs the legacy scheduler's schedule decides which CP groups
exist (runtime_groups.py): a checkout whose parallel_state.py defines
create_hybrid_dp_cp_groups (Megatron-LM main) runs it on those groups,
legacy_runtime_rule "hybrid"; otherwise (dev) on dev's dynamic-CP groups,
"dynamic" (invariant 11).
"""

import dataclasses
import importlib.abc
import inspect
import importlib.machinery
import importlib.util
import pathlib
import sys
import types
from typing import Callable, Dict, List, Optional

DATASETS = pathlib.Path("megatron", "core", "datasets")
HYBRID_CP_FILE = pathlib.Path("megatron", "core", "pipeline_parallel", "hybrid_cp_schedule.py")
PARALLEL_STATE_FILE = pathlib.Path("megatron", "core", "parallel_state.py")
UTILS_MODULE = "megatron.core.datasets.data_schedule_utils"
SCHEDULE_MODULE = "megatron.core.datasets.data_schedule"
HYBRID_CP_MODULE = "megatron.core.pipeline_parallel.hybrid_cp_schedule"
# Where main's runtime creates the hybrid-CP groups the legacy scheduler's
# schedules run on (runtime_groups.hybrid_cp_violations).
HYBRID_GROUPS_DEFINITION = "def create_hybrid_dp_cp_groups("

# The schedulers a checkout may carry: name -> what it is made of, as
# (attribute of Upstream, upstream's name, the file it is in).
SCHEDULERS = {
    "packing-aware": (("dynamic_cp_scheduler", "DefaultDynamicCPScheduler", "data_schedule.py"),
                      ("next_group_packing_aware", "next_hdp_group_packing_aware",
                       "data_schedule_utils.py"),
                      ("align_sample_id_groups", "align_sample_id_groups",
                       "data_schedule_utils.py")),
    "dp_balanced": (("dp_balanced_scheduler", "DpBalancedScheduler", "data_schedule.py"),),
    "legacy": (("legacy_scheduler", "BalancedCPScheduler", "hybrid_cp_schedule.py"),),
}
# Top-level packages served by stand-ins (but for the two real modules).
STUBBED_ROOTS = ("torch", "megatron", "transformer_engine", "apex", "triton", "numpy")


class MissingFunction(Exception):
    """The checkout lacks a file, or a function or class the check needs."""


@dataclasses.dataclass(frozen=True)
class Upstream:
    """The upstream callables, and where they came from; None where the
    checkout lacks one."""

    dynamic_cp_scheduler: Optional[type]       # DefaultDynamicCPScheduler
    dp_balanced_scheduler: Optional[type]      # DpBalancedScheduler
    next_group_packing_aware: Optional[Callable]  # next_hdp_group_packing_aware
    align_sample_id_groups: Optional[Callable]
    schedule_file: pathlib.Path
    utils_file: pathlib.Path
    schedule_module: types.ModuleType  # data_schedule, as loaded
    utils_module: types.ModuleType     # data_schedule_utils, as loaded
    legacy_scheduler: Optional[type] = None    # BalancedCPScheduler
    legacy_file: Optional[pathlib.Path] = None  # hybrid_cp_schedule.py
    # The runtime the legacy scheduler's schedules run on: "hybrid"
    # (create_hybrid_dp_cp_groups, Megatron-LM main) or "dynamic" (dev's
    # dynamic-CP groups, invariant 11).
    legacy_runtime_rule: str = "dynamic"

    @property
    def files(self) -> List[pathlib.Path]:
        """The upstream files loaded."""
        return [self.schedule_file, self.utils_file] + (
            [self.legacy_file] if self.legacy_file is not None else [])

    @property
    def step_takes_max_num_seqs(self) -> bool:
        """True if next_hdp_group_packing_aware has a max_num_seqs parameter
        (Megatron-LM PR #6479): then DefaultDynamicCPScheduler caps the
        samples per rank with it. Megatron-LM dev's step has none, so there
        the class accepts max_num_seqs and ignores it."""
        return (self.next_group_packing_aware is not None and "max_num_seqs" in
                inspect.signature(self.next_group_packing_aware).parameters)

    @property
    def dp_balanced_takes_max_num_seqs(self) -> bool:
        """True if a constructor of DpBalancedScheduler's class chain has a
        max_num_seqs parameter (Megatron-LM dev); main's has none."""
        return self.dp_balanced_scheduler is not None and any(
            "max_num_seqs" in inspect.signature(vars(cls)["__init__"]).parameters
            for cls in self.dp_balanced_scheduler.__mro__
            if cls is not object and "__init__" in vars(cls))

    def schedulers(self) -> Dict[str, List[str]]:
        """Per scheduler of SCHEDULERS, the upstream names the checkout lacks
        ("file: name"); [] for a scheduler it carries whole."""
        return {scheduler: [f"{file}: {name}" for attribute, name, file in parts
                            if getattr(self, attribute) is None]
                for scheduler, parts in SCHEDULERS.items()}

    def has(self, scheduler: str) -> bool:
        """True if the checkout carries the whole scheduler (SCHEDULERS)."""
        return not self.schedulers()[scheduler]

    def require(self, scheduler: str) -> None:
        """Raises MissingFunction naming what the checkout lacks of `scheduler`."""
        missing = self.schedulers()[scheduler]
        if missing:
            raise MissingFunction(
                f"the checkout at {self.schedule_file.parents[3]} lacks the {scheduler} "
                f"scheduler: {', '.join(missing)} (Megatron-LM's dev branch has it; main "
                "does not)")


class _StubType(type):
    """Metaclass of the stand-in classes: any attribute is another stand-in;
    calling one with a single callable returns it (a decorator), otherwise a
    new stand-in."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StubType(name, (_Stub,), {})

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return _StubType(cls.__name__, (_Stub,), {})

    def __getitem__(cls, item):
        return cls


class _Stub(metaclass=_StubType):
    """Base of the stand-in classes."""


class _StubModule(types.ModuleType):
    """A stand-in module (and package): every attribute is a stand-in class."""

    def __init__(self, name):
        super().__init__(name, "stand-in for the conformance check")
        self.__path__ = []  # a package, so submodules import

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _StubType(name, (_Stub,), {})
        setattr(self, name, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves every module under the stubbed roots but the real ones as a stand-in."""

    def __init__(self, real, roots=STUBBED_ROOTS):
        self._real = real
        self._roots = roots

    def find_spec(self, fullname, path=None, target=None):
        if not _is_stubbed(fullname, self._roots) or fullname in self._real:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return _StubModule(spec.name)

    def exec_module(self, module):
        pass


def _is_stubbed(name, roots=STUBBED_ROOTS):
    return name.split(".")[0] in roots


def _forget_stubbed_modules(roots=STUBBED_ROOTS):
    """Removes torch, megatron, ... from sys.modules (real or stand-in)."""
    for name in [name for name in sys.modules if _is_stubbed(name, roots)]:
        del sys.modules[name]


def _load_file(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module




def load_modules(files, stubbed_roots, keep=True):
    """Loads each (module name, path) of `files`, in order, as that module,
    every module under stubbed_roots but these served by stand-ins while
    they load (no bytecode written); returns the modules. sys.modules is
    left as it was (but for the names of `files`, which stay loaded where
    `keep`)."""
    saved_modules = {name: module for name, module in sys.modules.items()
                     if _is_stubbed(name, stubbed_roots)}
    saved_bytecode = sys.dont_write_bytecode
    finder = _StubFinder({name for name, _ in files}, stubbed_roots)
    sys.meta_path.insert(0, finder)
    sys.dont_write_bytecode = True
    loaded = []
    try:
        _forget_stubbed_modules(stubbed_roots)
        for name, path in files:
            loaded.append(_load_file(name, path))
    finally:
        sys.meta_path.remove(finder)
        sys.dont_write_bytecode = saved_bytecode
        _forget_stubbed_modules(stubbed_roots)
        sys.modules.update(saved_modules)
    if keep:
        for name, module in zip((name for name, _ in files), loaded):
            sys.modules[name] = module
    return loaded


def is_stand_in(value) -> bool:
    """True if `value` is a stand-in class or module served while loading."""
    return isinstance(value, (_StubType, _StubModule))


def load(checkout, stubbed_roots=STUBBED_ROOTS) -> Upstream:
    """The scheduling code of the Megatron-LM checkout at `checkout`.

    stubbed_roots: the top-level packages served by stand-ins; the
    distributed harness (distributed_rank.py) leaves torch and numpy out,
    so the real torch serves upstream's data pipeline."""
    root = pathlib.Path(checkout)
    schedule_file = root / DATASETS / "data_schedule.py"
    utils_file = root / DATASETS / "data_schedule_utils.py"
    legacy_file = root / HYBRID_CP_FILE
    for path in (utils_file, schedule_file):
        if not path.is_file():
            raise MissingFunction(f"{path} not found: is {root} a Megatron-LM checkout?")
    files = [(UTILS_MODULE, utils_file)]
    if legacy_file.is_file():
        # Before data_schedule.py, which imports it (Megatron-LM main).
        files.append((HYBRID_CP_MODULE, legacy_file))
    files.append((SCHEDULE_MODULE, schedule_file))
    try:
        loaded = load_modules(files, stubbed_roots, keep=False)
        modules = dict(zip((name for name, _ in files), loaded))
    except ImportError as error:
        raise MissingFunction(f"{schedule_file} does not import: {error}") from error
    schedule, utils = modules[SCHEDULE_MODULE], modules[UTILS_MODULE]
    legacy = modules.get(HYBRID_CP_MODULE)
    parallel_state = root / PARALLEL_STATE_FILE
    hybrid_groups = (parallel_state.is_file() and HYBRID_GROUPS_DEFINITION in
                     parallel_state.read_text(encoding="utf-8", errors="replace"))

    def defined(module, name):
        value = getattr(module, name, None) if module is not None else None
        return None if value is None or is_stand_in(value) else value

    return Upstream(
        dynamic_cp_scheduler=defined(schedule, "DefaultDynamicCPScheduler"),
        dp_balanced_scheduler=defined(schedule, "DpBalancedScheduler"),
        next_group_packing_aware=defined(utils, "next_hdp_group_packing_aware"),
        align_sample_id_groups=defined(utils, "align_sample_id_groups"),
        schedule_file=schedule_file,
        utils_file=utils_file,
        schedule_module=schedule,
        utils_module=utils,
        legacy_scheduler=defined(legacy, "BalancedCPScheduler"),
        legacy_file=legacy_file if legacy is not None else None,
        legacy_runtime_rule="hybrid" if hybrid_groups else "dynamic")

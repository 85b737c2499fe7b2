"""Loads the scheduling code of a Megatron-LM checkout, as it is, without torch.

megatron/core/datasets/data_schedule_utils.py and data_schedule.py are loaded
from the checkout the user names: the real files, unmodified, never copied,
and no bytecode is written next to them. Their imports that play no part in
scheduling (torch, the rest of megatron.core: process groups, Transformer
Engine, packed-sequence helpers) are served by stand-in modules for the time
of the loading, so no GPU, no torch and no Megatron-LM install are needed.
A stand-in yields, for any attribute, a class that can be called, used as a
decorator, subclassed and used in annotations; scheduling never calls one.

load() returns the four functions the check compares (and the two modules,
for tools that install into them, e.g. the drop-in's install_into_megatron),
or raises
MissingFunction naming what the checkout lacks (Megatron-LM `main` has no
DefaultDynamicCPScheduler, next_hdp_group_packing_aware or
align_sample_id_groups).
"""

import dataclasses
import importlib.abc
import inspect
import importlib.machinery
import importlib.util
import pathlib
import sys
import types
from typing import Callable

DATASETS = pathlib.Path("megatron", "core", "datasets")
UTILS_MODULE = "megatron.core.datasets.data_schedule_utils"
SCHEDULE_MODULE = "megatron.core.datasets.data_schedule"
# Top-level packages served by stand-ins (but for the two real modules).
STUBBED_ROOTS = ("torch", "megatron", "transformer_engine", "apex", "triton", "numpy")


class MissingFunction(Exception):
    """The checkout lacks a file, or a function or class the check needs."""


@dataclasses.dataclass(frozen=True)
class Upstream:
    """The upstream callables, and where they came from."""

    dynamic_cp_scheduler: type       # DefaultDynamicCPScheduler
    dp_balanced_scheduler: type      # DpBalancedScheduler
    next_group_packing_aware: Callable  # next_hdp_group_packing_aware
    align_sample_id_groups: Callable
    schedule_file: pathlib.Path
    utils_file: pathlib.Path
    schedule_module: types.ModuleType  # data_schedule, as loaded
    utils_module: types.ModuleType     # data_schedule_utils, as loaded

    @property
    def step_takes_max_num_seqs(self) -> bool:
        """True if next_hdp_group_packing_aware has a max_num_seqs parameter
        (Megatron-LM PR #6479): then DefaultDynamicCPScheduler caps the
        samples per rank with it. Megatron-LM dev's step has none, so there
        the class accepts max_num_seqs and ignores it."""
        return "max_num_seqs" in inspect.signature(self.next_group_packing_aware).parameters


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




def load_modules(files, stubbed_roots):
    """Loads each (module name, path) of `files`, in order, as that module,
    every module under stubbed_roots but these served by stand-ins while
    they load (no bytecode written); returns the modules. sys.modules is
    left as it was (but for the names of `files`, which stay loaded)."""
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
    for name, module in zip((name for name, _ in files), loaded):
        sys.modules[name] = module
    return loaded


def is_stand_in(value) -> bool:
    """True if `value` is a stand-in class or module served while loading."""
    return isinstance(value, (_StubType, _StubModule))


def load(checkout, stubbed_roots=STUBBED_ROOTS) -> Upstream:
    """The scheduling functions of the Megatron-LM checkout at `checkout`.

    stubbed_roots: the top-level packages served by stand-ins; the
    distributed harness (distributed_rank.py) leaves torch and numpy out,
    so the real torch serves upstream's data pipeline."""
    root = pathlib.Path(checkout)
    schedule_file = root / DATASETS / "data_schedule.py"
    utils_file = root / DATASETS / "data_schedule_utils.py"
    for path in (utils_file, schedule_file):
        if not path.is_file():
            raise MissingFunction(f"{path} not found: is {root} a Megatron-LM checkout?")
    saved_modules = {name: module for name, module in sys.modules.items()
                     if _is_stubbed(name, stubbed_roots)}
    saved_bytecode = sys.dont_write_bytecode
    finder = _StubFinder({UTILS_MODULE, SCHEDULE_MODULE}, stubbed_roots)
    sys.meta_path.insert(0, finder)
    sys.dont_write_bytecode = True
    try:
        _forget_stubbed_modules(stubbed_roots)
        utils = _load_file(UTILS_MODULE, utils_file)
        try:
            schedule = _load_file(SCHEDULE_MODULE, schedule_file)
        except ImportError as error:
            raise MissingFunction(f"{schedule_file} does not import: {error}") from error
    finally:
        sys.meta_path.remove(finder)
        sys.dont_write_bytecode = saved_bytecode
        _forget_stubbed_modules(stubbed_roots)
        sys.modules.update(saved_modules)
    missing = [f"{path.name}: {name}" for path, module, name in (
        (schedule_file, schedule, "DefaultDynamicCPScheduler"),
        (schedule_file, schedule, "DpBalancedScheduler"),
        (utils_file, utils, "next_hdp_group_packing_aware"),
        (utils_file, utils, "align_sample_id_groups")) if getattr(module, name, None) is None]
    if missing:
        raise MissingFunction(
            f"the checkout at {root} lacks what the check needs: {', '.join(missing)}"
            " (Megatron-LM's dev branch has them; main does not)")
    return Upstream(
        dynamic_cp_scheduler=schedule.DefaultDynamicCPScheduler,
        dp_balanced_scheduler=schedule.DpBalancedScheduler,
        next_group_packing_aware=utils.next_hdp_group_packing_aware,
        align_sample_id_groups=utils.align_sample_id_groups,
        schedule_file=schedule_file,
        utils_file=utils_file,
        schedule_module=schedule,
        utils_module=utils)

"""The package dcpsched: its version, type stubs and docstrings.

__version__ is the CMake project version; dcpsched/_core.pyi declares every
function of the extension with the extension's own parameters, and py.typed
marks the package as typed (PEP 561); every public function of the package,
the conformance check's included, has a docstring.
"""

import ast
import importlib
import inspect
import pathlib
import pkgutil
import re

import dcpsched
import dcpsched.conformance
import dcpsched.megatron
from conftest import REPO
from dcpsched.conformance import known_upstreams

PACKAGE_DIR = pathlib.Path(dcpsched.__file__).parent


def cmake_project_version():
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(dcpsched\s+VERSION\s+([0-9.]+)", text).group(1)


def test_version_is_the_cmake_project_version():
    assert dcpsched.__version__ == cmake_project_version()


def test_upstream_checked_names_the_revisions_and_agrees_with_the_conformance_check():
    """dcpsched.UPSTREAM_CHECKED (core/upstream_revisions.h, also printed by
    `dcpsched --version`) names each Megatron-LM revision whose files the
    conformance check knows by SHA-256 (main's too, since the check compares
    main's DpBalancedScheduler)."""
    checked = {(branch, commit) for branch, commit, _ in dcpsched.UPSTREAM_CHECKED}
    assert checked == {("dev", "66d54b474b"), ("PR #6479 head", "986bf45787"),
                       ("main", "a9381be598")}
    for name in known_upstreams.KNOWN_UPSTREAMS:
        assert any(name == f"Megatron-LM {branch} {commit}"
                   for branch, commit, _ in dcpsched.UPSTREAM_CHECKED), name
    assert all(outcome for _, _, outcome in dcpsched.UPSTREAM_CHECKED)


def test_the_benchmark_workload_is_the_command_lines():
    """The generator behind `dcpsched schedule` (io/workload.h): the main
    job's batch is 256 samples, 257262 tokens, lengths 128..8192 (the
    README's report), and the same seed gives the same lengths."""
    batch = dcpsched.benchmark_workload()
    assert [i for i, _ in batch] == list(range(256))
    lengths = [n for _, n in batch]
    assert (sum(lengths), min(lengths), max(lengths)) == (257262, 128, 8192)
    assert dcpsched.benchmark_workload(256, seed=5154) == batch
    assert dcpsched.benchmark_workload(256, seed=1) != batch
    assert dcpsched.benchmark_workload(0) == []
    skewed = dcpsched.benchmark_workload(1000, preset="skewed")
    assert skewed != dcpsched.benchmark_workload(1000)
    for bad in ({"preset": "uniform"}, {"seed": -1}):
        try:
            dcpsched.benchmark_workload(8, **bad)
        except dcpsched.InvalidInputError as error:
            assert str(next(iter(bad))) in str(error)
        else:
            raise AssertionError(f"{bad} accepted")


def test_the_package_is_typed():
    assert (PACKAGE_DIR / "py.typed").is_file()
    assert (PACKAGE_DIR / "_core.pyi").is_file()


def stub_functions():
    tree = ast.parse((PACKAGE_DIR / "_core.pyi").read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def public_functions():
    return {name: getattr(dcpsched, name) for name in dcpsched.__all__
            if callable(getattr(dcpsched, name)) and not isinstance(getattr(dcpsched, name), type)}


def test_the_cost_profile_class_has_a_stub_with_its_methods():
    tree = ast.parse((PACKAGE_DIR / "_core.pyi").read_text())
    stub = next(node for node in tree.body
                if isinstance(node, ast.ClassDef) and node.name == "CostProfile")
    stubbed = {node.name for node in stub.body if isinstance(node, ast.FunctionDef)}
    public = {name for name in dir(dcpsched.CostProfile)
              if not name.startswith("_") and callable(getattr(dcpsched.CostProfile, name))}
    assert public <= stubbed
    for name in public:
        assert (getattr(dcpsched.CostProfile, name).__doc__ or "").strip(), name


def test_every_function_has_a_stub_with_its_parameters():
    stubs = stub_functions()
    functions = public_functions()
    assert set(stubs) == set(functions)
    for name, function in functions.items():
        stub = stubs[name]
        parameters = list(inspect.signature(function).parameters.values())
        assert [a.arg for a in stub.args.args + stub.args.kwonlyargs] == (
            [p.name for p in parameters]), name
        assert [a.arg for a in stub.args.kwonlyargs] == [
            p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY], name
        with_defaults = [p.name for p in parameters if p.default is not inspect.Parameter.empty]
        stub_defaults = stub.args.defaults + [d for d in stub.args.kw_defaults if d is not None]
        assert len(stub_defaults) == len(with_defaults), name
        assert stub.returns is not None, name


def test_the_exceptions_are_value_errors_in_the_stub():
    tree = ast.parse((PACKAGE_DIR / "_core.pyi").read_text())
    classes = {node.name: [ast.unparse(b) for b in node.bases]
               for node in tree.body if isinstance(node, ast.ClassDef)}
    exceptions = {name: bases for name, bases in classes.items() if name.endswith("Error")}
    assert exceptions == {"InvalidInputError": ["ValueError"],
                          "UnschedulableError": ["ValueError"]}
    assert set(classes) - set(exceptions) == {"CostProfile"}
    assert issubclass(dcpsched.InvalidInputError, ValueError)
    assert issubclass(dcpsched.UnschedulableError, ValueError)


def test_every_function_has_a_docstring():
    undocumented = [name for name, function in public_functions().items()
                    if not (function.__doc__ or "").strip()]
    assert not undocumented
    modules = [dcpsched, dcpsched.megatron, dcpsched.conformance] + [
        importlib.import_module(f"dcpsched.conformance.{info.name}")
        for info in pkgutil.iter_modules(dcpsched.conformance.__path__)]
    for module in modules:
        assert (module.__doc__ or "").strip(), module.__name__
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(value) or inspect.isclass(value):
                assert (value.__doc__ or "").strip(), f"{module.__name__}.{name}"
            if inspect.isclass(value):
                for method_name, method in vars(value).items():
                    if inspect.isfunction(method) and not method_name.startswith("_"):
                        assert (method.__doc__ or "").strip(), \
                            f"{module.__name__}.{name}.{method_name}"

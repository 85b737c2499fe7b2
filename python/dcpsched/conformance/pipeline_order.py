"""dcpsched's pipeline op order against a Megatron-LM checkout's.

    python3 -m dcpsched.conformance --megatron PATH --pipeline-order [--all-differences]

core/pipeline_order.h (dcpsched.pipeline_stage_order) says in which order
each pipeline rank runs its forward and backward passes; the runtime step
model (docs/runtime_step.md) runs every rank in that order. This check
loads megatron/core/pipeline_parallel/schedules.py from the checkout as it
is (upstream.load_modules: the real file, unmodified, never copied, its
other imports served by stand-ins) and takes from it:

- get_forward_backward_func: which schedule runs a shape, as the training
  loop picks it from the pipeline size P and the virtual size V (None for
  V = 1): forward_backward_no_pipelining, ..._without_interleaving (1F1B) or
  ..._with_interleaving;
- get_pp_rank_microbatches(M, V, N, forward_only=False, p2p_communicator=C):
  pipeline rank p's warm-up forwards, C a stand-in whose pp_group answers
  size() P and rank() p and whose virtual_pipeline_model_parallel_size is V
  (None for V = 1);
- get_schedule_table(M, V, N) and convert_schedule_table_to_order(warm-up,
  V, table): the signed order (c + 1 for a forward on chunk c, c - V for a
  backward of table chunk c). Where schedules.py lacks
  convert_schedule_table_to_order (Megatron-LM main keeps it in
  megatron/core/transformer/cuda_graphs.py alone), it is taken from there:
  that file is loaded as schedules.py is, or, where it does not load with
  stand-ins (main's compares torch versions as it loads), its definition
  alone is compiled from the file.

Which microbatch each op runs, as forward_backward_pipelining_with_interleaving
runs it: forward op i runs table entry i (get_microbatch_id_in_model_chunk
and get_model_chunk_id read the table at i), and a backward on chunk c pops
chunk c's oldest stored forward (input_tensors[c].pop(0) and
output_tensors[c].pop(0) in backward_step_helper_preprocess), so it runs the
oldest microbatch chunk c has run forward and not yet backward. The check
follows those queues. Every chunk runs its forwards in microbatch order, so
backward op i is then table entry i on chunk V - 1 - c, which is
docs/runtime_step.md's rule; 1F1B pops its one queue the same way.

Two things the schedule functions decide themselves, and which cannot run
without GPUs and a model, are read from their own source: the set-up of
the function get_forward_backward_func picks (its top-level assignments,
ifs and asserts before its first loop) is evaluated on the shape alone,
with the names num_microbatches (M), model (a list of V chunks), config
(microbatch_group_size_per_vp_stage N, virtual_pipeline_model_parallel_size
and pipeline_model_parallel_size only) and p2p_communicator (the stand-in,
with total_stages P and current_stage p as well); a statement that needs
anything else is skipped, and the report says how many ran.

- Refusals: a raise, or an assert that fails, among them is upstream
  refusing the shape (dev: with_interleaving's ValueError for N outside
  [P, M] and RuntimeError for a last group of 0 < M mod N < P;
  no_pipelining's assertion that it runs one model chunk, for V > 1 at
  P = 1). dcpsched must refuse those shapes too (InvalidInputError), and
  only those.
- The 1F1B warm-up: forward_backward_pipelining_without_interleaving computes
  its own (num_warmup_microbatches: P - p - 1, at most M, in dev); that is
  the warm-up of V = 1, P > 1, and the report notes the shapes where
  get_pp_rank_microbatches says otherwise.

Shapes (DEFAULT_SHAPES): P in 1..8, V in 1..4, M in 1..24, N in 1..M + 1
(so N below P and above M are tried too), every pipeline rank p of P. The
report opens with the checkout's path and git commit and the SHA-256 of
each file the functions came from (known or not: known_upstreams.py), says
which upstream function each piece came from, then each refusal upstream
makes (where in its source, how many shapes), each difference (the first
MAX_SHOWN, or all with --all-differences), and closes with

    pipeline-order: E equal, D differ, B both refuse (S shapes: P 1..8, V 1..4,
        M 1..24, N 1..M+1, every pipeline rank)

(one line).

Exit status: 0 when nothing differs, 1 on a difference, 2 when the checkout
lacks the file or a function, 3 when the check cannot evaluate what it
needs (NOT CHECKED), 4 when no shape was compared.
"""

import ast
import builtins
import collections
import dataclasses
import inspect
import pathlib
import subprocess
import sys
import textwrap
import types
from typing import Callable, Dict, List, Optional, Tuple

import dcpsched
from dcpsched.conformance import known_upstreams, upstream

SCHEDULES_FILE = pathlib.Path("megatron", "core", "pipeline_parallel", "schedules.py")
CUDA_GRAPHS_FILE = pathlib.Path("megatron", "core", "transformer", "cuda_graphs.py")
SCHEDULES_MODULE = "megatron.core.pipeline_parallel.schedules"
CUDA_GRAPHS_MODULE = "megatron.core.transformer.cuda_graphs"
# The upstream functions the check calls.
NEEDED = ("get_forward_backward_func", "get_pp_rank_microbatches", "get_schedule_table",
          "convert_schedule_table_to_order")
WITHOUT_INTERLEAVING = "forward_backward_pipelining_without_interleaving"
WARMUP = "num_warmup_microbatches"
# Differences printed without --all-differences.
MAX_SHOWN = 10
EXIT_AGREE, EXIT_DIFFER, EXIT_USAGE, EXIT_NOT_CHECKED, EXIT_NOTHING = 0, 1, 2, 3, 4
EQUAL, DIFFER, BOTH_REFUSE = "equal", "differ", "both refuse"
CLOSING = "pipeline-order: {equal} equal, {differ} differ, {both} both refuse ({shapes} shapes: {ranges})"


@dataclasses.dataclass(frozen=True)
class Shapes:
    """The shapes compared: P in 1..max_stages, V in 1..max_virtual, M in
    1..max_microbatches, N in 1..M + 1, every pipeline rank."""

    max_stages: int = 8
    max_virtual: int = 4
    max_microbatches: int = 24

    def __iter__(self):
        for stages in range(1, self.max_stages + 1):
            for virtual in range(1, self.max_virtual + 1):
                for count in range(1, self.max_microbatches + 1):
                    for group in range(1, count + 2):
                        for rank in range(stages):
                            yield Shape(stages, virtual, count, group, rank)

    def describe(self) -> str:
        """The ranges, as the closing line says them."""
        return (f"P 1..{self.max_stages}, V 1..{self.max_virtual}, M 1..{self.max_microbatches}, "
                "N 1..M+1, every pipeline rank")


DEFAULT_SHAPES = Shapes()


@dataclasses.dataclass(frozen=True)
class Shape:
    """One pipeline rank of one pipeline: P stages, V chunks, M microbatches
    in groups of N (microbatch_group_size_per_vp_stage), rank p."""

    stages: int
    virtual: int
    count: int
    group: int
    rank: int

    def __str__(self):
        return (f"P={self.stages} V={self.virtual} M={self.count} N={self.group} "
                f"rank {self.rank}")


class CheckFailed(Exception):
    """The check cannot evaluate what it needs from the checkout (NOT CHECKED)."""


class PipelineGroupStandIn:
    """A pipeline-parallel process group as upstream's schedule code reads
    it: size() and rank()."""

    def __init__(self, stages: int, rank: int):
        self._stages = stages
        self._rank = rank

    def size(self) -> int:
        """P."""
        return self._stages

    def rank(self) -> int:
        """p."""
        return self._rank


class P2PCommunicatorStandIn:
    """What upstream's schedule code reads of a P2PCommunicator: its
    pp_group, total_stages, current_stage and
    virtual_pipeline_model_parallel_size (None without interleaving)."""

    def __init__(self, stages: int, rank: int, virtual: Optional[int]):
        self.pp_group = PipelineGroupStandIn(stages, rank)
        self.total_stages = stages
        self.current_stage = rank
        self.virtual_pipeline_model_parallel_size = virtual


@dataclasses.dataclass
class _Site:
    """A raise or assert of a set-up statement: its lines and what it raises."""

    first_line: int
    last_line: int
    is_assert: bool
    raises: str


@dataclasses.dataclass
class _Statement:
    """One top-level set-up statement, compiled on its own."""

    line: int
    code: types.CodeType
    sites: List[_Site]
    ran: bool = False  # completed on at least one shape


@dataclasses.dataclass
class SetUp:
    """The set-up statements of one upstream schedule function."""

    name: str
    file: str
    statements: List[_Statement]
    marker: str  # the file name the compiled statements carry

    def site_of(self, error: BaseException, statement: _Statement) -> Optional[_Site]:
        """The raise or assert of `statement` where `error` was raised, if it
        was raised at one (innermost frame of the statement's own code)."""
        line = None
        trace = error.__traceback__
        while trace is not None:
            if trace.tb_frame.f_code.co_filename == self.marker:
                line = trace.tb_lineno
            trace = trace.tb_next
        if line is None:
            return None
        for site in statement.sites:
            if site.first_line <= line <= site.last_line:
                return site
        return None


def _raised_name(node: ast.Raise) -> str:
    """The exception class a raise names: ValueError for raise ValueError(msg)."""
    target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return "an exception"


_SET_UP_KINDS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.Assert)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def set_up_of(function: Callable) -> SetUp:
    """The set-up of an upstream schedule function: its top-level
    assignments, ifs and asserts before its first top-level loop, each
    compiled on its own with its line numbers in the file."""
    lines, first = inspect.getsourcelines(function)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    definition = tree.body[0]
    file = inspect.getsourcefile(function) or "<unknown>"
    marker = f"{file} (set-up of {function.__name__}, evaluated on the shape)"
    statements = []
    for node in definition.body:
        if isinstance(node, _LOOPS):
            break
        if not isinstance(node, _SET_UP_KINDS):
            continue
        sites = []
        for inner in ast.walk(node):
            if isinstance(inner, ast.Raise) and inner.exc is not None:
                sites.append(_Site(inner.lineno, inner.end_lineno, False, _raised_name(inner)))
            elif isinstance(inner, ast.Assert):
                sites.append(_Site(inner.lineno, inner.end_lineno, True, "AssertionError"))
        module = ast.Module(body=[node], type_ignores=[])
        statements.append(_Statement(node.lineno, compile(module, marker, "exec"), sites))
    return SetUp(function.__name__, file, statements, marker)


@dataclasses.dataclass(frozen=True)
class Refusal:
    """Upstream refusing a shape: where (function, line) and what it raises."""

    function: str
    line: int
    error: str
    message: str

    def site(self) -> Tuple[str, int, str]:
        """The refusal's place in upstream's source, which groups the report."""
        return (self.function, self.line, self.error)

    def __str__(self):
        return f"{self.error}: {self.message}"


def evaluate_set_up(set_up: SetUp, namespace: dict) -> Tuple[Optional[Refusal], dict]:
    """Runs the set-up statements in order in a copy of `namespace`:
    (the refusal, if one raises at a raise or fails at an assert; the names
    bound). A statement that fails anywhere else needs more than the shape:
    it is skipped, and binds nothing."""
    bound = dict(namespace)
    for statement in set_up.statements:
        trial = dict(bound)
        try:
            exec(statement.code, trial)  # pylint: disable=exec-used
        except Exception as error:  # pylint: disable=broad-except
            site = set_up.site_of(error, statement)
            if site is None or (site.is_assert and not isinstance(error, AssertionError)):
                continue
            if type(error).__name__ == site.raises:
                message = str(error)
            else:
                message = (f"(its message needs more than the shape: {type(error).__name__}: "
                           f"{error})")
            return Refusal(set_up.name, site.first_line, site.raises, message), bound
        statement.ran = True
        bound = trial
    return None, bound


def shape_namespace(shape: Shape) -> dict:
    """The names a set-up is evaluated with (see the module docstring)."""
    virtual = shape.virtual if shape.virtual > 1 else None
    config = types.SimpleNamespace(microbatch_group_size_per_vp_stage=shape.group,
                                   virtual_pipeline_model_parallel_size=virtual,
                                   pipeline_model_parallel_size=shape.stages)
    return {"__builtins__": builtins, "num_microbatches": shape.count,
            "model": [object() for _ in range(shape.virtual)], "config": config,
            "p2p_communicator": P2PCommunicatorStandIn(shape.stages, shape.rank, virtual)}


def _git(root: pathlib.Path, *arguments) -> Optional[str]:
    try:
        result = subprocess.run(["git", "-C", str(root), *arguments], capture_output=True,
                                text=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def git_commit_line(root: pathlib.Path, files: List[pathlib.Path]) -> str:
    """Which commit of which git checkout `root` is, and whether the files
    loaded differ from it; said plainly where it is no git checkout."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return f"upstream checkout: {root}: not a git checkout, so no commit to name"
    if pathlib.Path(top).resolve() != root.resolve():
        return (f"upstream checkout: {root}: not the top of a git checkout (it lies in {top}), "
                "so no commit to name")
    commit = _git(root, "rev-parse", "HEAD") or "unknown"
    changed = _git(root, "status", "--porcelain", "--", *[str(f) for f in files])
    state = ("the files loaded as committed" if changed == "" else
             "the files loaded DIFFER from the commit (uncommitted changes)" if changed else
             "whether the files loaded are as committed is unknown")
    return f"upstream checkout: {root}, git commit {commit} ({state})"


def _defined(module, name):
    value = vars(module).get(name) if module is not None else None
    return None if value is None or upstream.is_stand_in(value) else value


def _definition_alone(path: pathlib.Path, name: str) -> Callable:
    """The top-level function `name` of the file at `path`, its definition
    alone compiled from the file (no other line of it runs); raises
    upstream.MissingFunction if the file has none, or one that needs more
    (decorators)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            if node.decorator_list:
                raise upstream.MissingFunction(f"{path}: {name} is decorated; the check "
                                               "cannot compile its definition alone")
            namespace = {"__builtins__": builtins, "__name__": CUDA_GRAPHS_MODULE}
            exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"),  # pylint: disable=exec-used
                 namespace)
            return namespace[name]
    raise upstream.MissingFunction(f"{path} defines no {name}")


@dataclasses.dataclass
class PipelineUpstream:
    """The checkout's op-order functions, and where each came from."""

    root: pathlib.Path
    functions: Dict[str, Callable]
    sources: Dict[str, str]  # name -> "schedules.py", ...
    files: List[pathlib.Path]
    _set_ups: Dict[str, SetUp] = dataclasses.field(default_factory=dict)

    def set_up(self, function: Callable) -> SetUp:
        """The set-up of a schedule function (set_up_of), made once."""
        if function.__name__ not in self._set_ups:
            self._set_ups[function.__name__] = set_up_of(function)
        return self._set_ups[function.__name__]

    def set_ups(self) -> List[SetUp]:
        """The set-ups evaluated so far."""
        return list(self._set_ups.values())


def load(checkout) -> PipelineUpstream:
    """The op-order functions of the Megatron-LM checkout at `checkout`;
    raises upstream.MissingFunction naming what it lacks."""
    root = pathlib.Path(checkout)
    path = root / SCHEDULES_FILE
    if not path.is_file():
        raise upstream.MissingFunction(f"{path} not found: is {root} a Megatron-LM checkout?")
    try:
        schedules, = upstream.load_modules([(SCHEDULES_MODULE, path)], upstream.STUBBED_ROOTS,
                                           keep=False)
    except Exception as error:  # pylint: disable=broad-except
        raise upstream.MissingFunction(
            f"{path} does not load with stand-ins: {type(error).__name__}: {error}") from error
    functions = {name: _defined(schedules, name) for name in NEEDED}
    sources = {name: SCHEDULES_FILE.name for name, value in functions.items() if value}
    files = [path]
    convert = "convert_schedule_table_to_order"
    graphs = root / CUDA_GRAPHS_FILE
    if functions[convert] is None and graphs.is_file():
        files.append(graphs)
        try:
            module, = upstream.load_modules([(CUDA_GRAPHS_MODULE, graphs)],
                                            upstream.STUBBED_ROOTS, keep=False)
            functions[convert] = _defined(module, convert)
            sources[convert] = f"{CUDA_GRAPHS_FILE.name} (loaded with stand-ins)"
        except Exception as error:  # pylint: disable=broad-except
            functions[convert] = _definition_alone(graphs, convert)
            sources[convert] = (f"{CUDA_GRAPHS_FILE.name} (its definition alone: the file does "
                                f"not load with stand-ins, {type(error).__name__}: "
                                f"{str(error)[:100]})")
    missing = [name for name, value in functions.items() if value is None]
    if missing:
        raise upstream.MissingFunction(
            f"the checkout at {root} lacks what the op-order check calls: "
            f"{', '.join(missing)} (looked for in {SCHEDULES_FILE}"
            f"{' and ' + str(CUDA_GRAPHS_FILE) if graphs.is_file() else ''})")
    return PipelineUpstream(root, functions, sources, files)


def ops_of(signed: List[int], table: List[Tuple[int, int]],
           chunks: int) -> List[Tuple[int, int, bool]]:
    """The (microbatch, chunk, forward) ops of convert_schedule_table_to_order's
    signed order, microbatches as the schedule runs them (module
    docstring); raises ValueError where the order cannot run (a forward
    whose chunk is not its table entry's, a backward with no forward left
    on its chunk, a value out of range)."""
    queues = [collections.deque() for _ in range(chunks)]
    forwards = 0
    ops = []
    for position, value in enumerate(signed):
        if 1 <= value <= chunks:
            chunk = value - 1
            if forwards >= len(table) or table[forwards][1] != chunk:
                raise ValueError(f"op {position} is a forward on chunk {chunk}, but schedule "
                                 f"table entry {forwards} is {table[forwards:forwards + 1]}")
            microbatch = table[forwards][0]
            forwards += 1
            queues[chunk].append(microbatch)
            ops.append((microbatch, chunk, True))
        elif -chunks <= value <= -1:
            chunk = -value - 1
            if not queues[chunk]:
                raise ValueError(f"op {position} is a backward on chunk {chunk}, which has no "
                                 "forward left to pop")
            ops.append((queues[chunk].popleft(), chunk, False))
        else:
            raise ValueError(f"op {position} is {value!r}, not a chunk of {chunks}")
    return ops


@dataclasses.dataclass
class UpstreamAnswer:
    """Upstream's ops for a shape, or its refusal; `note` where
    get_pp_rank_microbatches and the 1F1B function disagree on the warm-up."""

    ops: Optional[List[Tuple[int, int, bool]]] = None
    refusal: Optional[Refusal] = None
    note: Optional[str] = None


def upstream_answer(up: PipelineUpstream, shape: Shape) -> UpstreamAnswer:
    """Upstream's op order of `shape`'s pipeline rank (module docstring)."""
    virtual = shape.virtual if shape.virtual > 1 else None
    try:
        function = up.functions["get_forward_backward_func"](pp_size=shape.stages,
                                                             vp_size=virtual)
    except Exception as error:  # pylint: disable=broad-except
        raise CheckFailed(
            f"get_forward_backward_func(pp_size={shape.stages}, vp_size={virtual}) raises "
            f"{type(error).__name__}: {error}, so which schedule runs cannot be read: NOT "
            "CHECKED") from error
    set_up = up.set_up(function)
    refusal, bound = evaluate_set_up(set_up, shape_namespace(shape))
    if refusal is not None:
        return UpstreamAnswer(refusal=refusal)
    step = "get_pp_rank_microbatches"
    try:
        warmup = up.functions[step](
            shape.count, shape.virtual, shape.group, forward_only=False,
            p2p_communicator=P2PCommunicatorStandIn(shape.stages, shape.rank, virtual))[2]
        note = None
        if function.__name__ == WITHOUT_INTERLEAVING:
            if WARMUP not in bound:
                raise CheckFailed(
                    f"{function.__name__} ({set_up.file}) does not set {WARMUP} from the shape "
                    f"alone in its set-up ({shape}), so its 1F1B warm-up cannot be read: NOT "
                    "CHECKED")
            if bound[WARMUP] != warmup:
                note = (f"{step} gives {warmup} warm-up forwards, {function.__name__} "
                        f"{bound[WARMUP]}")
            warmup = bound[WARMUP]
        step = "get_schedule_table"
        table = up.functions[step](shape.count, shape.virtual, shape.group)
        step = "convert_schedule_table_to_order"
        signed = up.functions[step](warmup, shape.virtual, table)
        step = "the op order"
        return UpstreamAnswer(ops=ops_of(list(signed), list(table), shape.virtual), note=note)
    except CheckFailed:
        raise
    except Exception as error:  # pylint: disable=broad-except
        return UpstreamAnswer(refusal=Refusal(step, 0, type(error).__name__, str(error)))


def _first_difference(theirs, ours) -> str:
    for index, (a, b) in enumerate(zip(theirs, ours)):
        if a != b:
            return f"op {index}: upstream {a}, dcpsched {b}"
    return f"upstream runs {len(theirs)} ops, dcpsched {len(ours)}"


def compare(up: PipelineUpstream, shape: Shape) -> Tuple[str, str, UpstreamAnswer]:
    """(outcome, what differs or "", upstream's answer) for one shape."""
    answer = upstream_answer(up, shape)
    try:
        ours = dcpsched.pipeline_stage_order(shape.stages, shape.virtual, shape.count,
                                             shape.rank, microbatch_group_size=shape.group)
        refused = None
    except dcpsched.InvalidInputError as error:
        ours, refused = None, str(error)
    if answer.refusal is not None:
        if refused is not None:
            return BOTH_REFUSE, "", answer
        return DIFFER, f"upstream refuses ({answer.refusal}), dcpsched runs an order", answer
    if refused is not None:
        return DIFFER, f"upstream runs an order, dcpsched refuses: {refused}", answer
    if answer.ops != ours:
        return DIFFER, _first_difference(answer.ops, ours), answer
    return EQUAL, "", answer


def _print_upstream(up: PipelineUpstream, out) -> None:
    print(git_commit_line(up.root, up.files), file=out)
    for line in known_upstreams.pipeline_report_lines(up.files):
        print(line, file=out)
    by_source = collections.defaultdict(list)
    for name in NEEDED:
        by_source[up.sources[name]].append(name)
    print("upstream functions: " + "; ".join(
        f"{', '.join(names)} from {source}" for source, names in by_source.items()), file=out)


def run_check(checkout, out, shapes: Shapes = DEFAULT_SHAPES,
              all_differences: bool = False) -> int:
    """The check against the checkout at `checkout`; prints the report to
    `out` and returns the exit status (module docstring)."""
    try:
        up = load(checkout)
    except upstream.MissingFunction as error:
        print(f"conformance: {error}", file=sys.stderr)
        return EXIT_USAGE
    _print_upstream(up, out)
    counts = collections.Counter()
    refusals = collections.defaultdict(lambda: [0, collections.Counter(), None])
    notes = []
    differences = []
    try:
        for shape in shapes:
            outcome, what, answer = compare(up, shape)
            counts[outcome] += 1
            if answer.refusal is not None:
                entry = refusals[answer.refusal.site()]
                entry[0] += 1
                entry[1][outcome] += 1
                entry[2] = entry[2] or (shape, answer.refusal.message)
            if answer.note is not None:
                notes.append((shape, answer.note))
            if outcome == DIFFER:
                differences.append((shape, what))
    except CheckFailed as error:
        print(f"conformance: {error}", file=sys.stderr)
        return EXIT_NOT_CHECKED
    for set_up in up.set_ups():
        ran = sum(statement.ran for statement in set_up.statements)
        print(f"set-up of {set_up.name}: {ran} of its {len(set_up.statements)} top-level "
              "assignments, ifs and asserts before its first loop ran on the shape alone (the "
              "others need more)", file=out)
    for (function, line, error), (count, outcomes, (shape, message)) in refusals.items():
        where = f"{function} line {line}" if line else function
        print(f"upstream refuses: {where}: {error}: {count} shapes ("
              + ", ".join(f"{n} {kind}" for kind, n in sorted(outcomes.items()))
              + f"), e.g. {shape}: {message[:240]}", file=out)
    if notes:
        shape, note = notes[0]
        print(f"note: on {len(notes)} shapes get_pp_rank_microbatches and {WITHOUT_INTERLEAVING} "
              f"disagree on the warm-up (the latter is used), e.g. {shape}: {note}", file=out)
    shown = differences if all_differences else differences[:MAX_SHOWN]
    for shape, what in shown:
        print(f"differ: {shape}: {what}", file=out)
    if len(shown) < len(differences):
        print(f"... and {len(differences) - len(shown)} more differences (--all-differences "
              "lists them all)", file=out)
    total = sum(counts.values())
    print(CLOSING.format(equal=counts[EQUAL], differ=counts[DIFFER], both=counts[BOTH_REFUSE],
                         shapes=total, ranges=shapes.describe()), file=out)
    if total == 0:
        print("conformance: NOTHING CHECKED: no shape compared", file=out)
        return EXIT_NOTHING
    return EXIT_DIFFER if counts[DIFFER] else EXIT_AGREE

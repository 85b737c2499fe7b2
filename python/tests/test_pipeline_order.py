"""The pipeline-order conformance check (dcpsched.conformance.pipeline_order)
against fixture checkouts (no upstream code here).

fixtures/megatron_pipeline_order/ holds a schedules.py with upstream's
names and signatures, written from docs/runtime_step.md's rule, so the
check must find every shape equal there; the tests derive copies with one
planted difference each (the interleaved warm-up off by one, the 1F1B
warm-up off by one, a refusal dropped) and a copy without the functions,
and check that each is reported as it should be.
"""

import io
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import dcpsched
from dcpsched.conformance import known_upstreams, pipeline_order

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "megatron_pipeline_order"
SCHEDULES = pathlib.Path("megatron", "core", "pipeline_parallel", "schedules.py")
CLOSING = re.compile(r"^pipeline-order: (\d+) equal, (\d+) differ, (\d+) both refuse "
                     r"\((\d+) shapes: (.*)\)$", re.MULTILINE)
# Small enough for a quick test, large enough for every kind of shape:
# refusals of all three kinds, 1F1B, interleaving with N above P.
SHAPES = pipeline_order.Shapes(max_stages=4, max_virtual=3, max_microbatches=9)


def copy_fixture(tmp_path, old=None, new=None):
    """The fixture checkout copied to tmp_path/checkout, with the line
    marked `old` ("# planted: NAME") in schedules.py replaced by `new`."""
    checkout = tmp_path / "checkout"
    shutil.copytree(FIXTURE, checkout)
    if old is not None:
        path = checkout / SCHEDULES
        text = path.read_text()
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new))
    return checkout


def check(checkout, shapes=SHAPES, all_differences=False):
    """run_check's (status, report, closing counts (equal, differ, both, shapes))."""
    out = io.StringIO()
    status = pipeline_order.run_check(checkout, out, shapes, all_differences)
    report = out.getvalue()
    match = CLOSING.search(report)
    counts = tuple(int(n) for n in match.groups()[:4]) if match else None
    return status, report, counts


def test_the_fixture_checkout_agrees_on_every_shape(tmp_path):
    status, report, counts = check(copy_fixture(tmp_path))
    assert status == pipeline_order.EXIT_AGREE, report
    equal, differ, both, shapes = counts
    assert differ == 0 and equal > 0 and both > 0, report
    assert shapes == sum(1 for _ in SHAPES) == equal + both
    # Each of upstream's refusals is found where the fixture raises it.
    refusals = re.findall(r"^upstream refuses: (\w+) line \d+: (\w+): (\d+) shapes \((\d+) "
                          r"both refuse\)", report, re.MULTILINE)
    assert {(function, error) for function, error, _, _ in refusals} == {
        ("forward_backward_no_pipelining", "AssertionError"),
        ("forward_backward_pipelining_with_interleaving", "ValueError"),
        ("forward_backward_pipelining_with_interleaving", "RuntimeError")}, report
    assert all(count == refused for _, _, count, refused in refusals)
    assert sum(int(count) for _, _, count, _ in refusals) == both
    # Which upstream: no git checkout, the file's hash, not a known upstream.
    assert "not a git checkout, so no commit to name" in report, report
    schedules = tmp_path / "checkout" / SCHEDULES
    assert (f"upstream file: {schedules} sha256 {known_upstreams.sha256_of(schedules)}"
            in report), report
    assert "upstream files: NOT the files dcpsched's op order was checked against" in report
    assert ("upstream functions: get_forward_backward_func, get_pp_rank_microbatches, "
            "get_schedule_table, convert_schedule_table_to_order from schedules.py") in report


def test_an_interleaved_warm_up_off_by_one_is_a_difference(tmp_path):
    checkout = copy_fixture(
        tmp_path, "(num_model_chunks - 1) * group  # planted: interleaved warm-up",
        "(num_model_chunks - 1) * group + 1")
    status, report, counts = check(checkout)
    assert status == pipeline_order.EXIT_DIFFER, report
    assert counts[1] > 0, report
    differences = re.findall(r"^differ: P=(\d+) V=(\d+) .*: op \d+: upstream .*, dcpsched .*$",
                             report, re.MULTILINE)
    assert differences and all(int(p) > 1 and int(v) > 1 for p, v in differences), report
    assert len(differences) == min(counts[1], pipeline_order.MAX_SHOWN)
    # --all-differences lists every one.
    _, every, _ = check(checkout, all_differences=True)
    assert len(re.findall(r"^differ: ", every, re.MULTILINE)) == counts[1]


def test_a_1f1b_warm_up_off_by_one_is_read_from_the_1f1b_function(tmp_path):
    """1F1B's warm-up is the one forward_backward_pipelining_without_interleaving
    computes, not get_pp_rank_microbatches': changing the former alone is a
    difference, and the two disagreeing is noted."""
    checkout = copy_fixture(
        tmp_path, "min(num_microbatches, stages_after_this)  # planted: 1F1B warm-up",
        "min(num_microbatches, stages_after_this + 1)")
    status, report, counts = check(checkout)
    assert status == pipeline_order.EXIT_DIFFER, report
    assert re.search(r"^note: on \d+ shapes get_pp_rank_microbatches and "
                     r"forward_backward_pipelining_without_interleaving disagree on the warm-up",
                     report, re.MULTILINE), report
    assert re.search(r"^differ: P=\d+ V=1 ", report, re.MULTILINE), report
    assert not re.search(r"^differ: P=\d+ V=[23] ", report, re.MULTILINE), report


def test_a_refusal_upstream_drops_is_a_difference(tmp_path):
    checkout = copy_fixture(tmp_path, "if 0 < last_group < stages:  # planted: last group",
                            "if False:")
    status, report, counts = check(checkout)
    assert status == pipeline_order.EXIT_DIFFER, report
    assert re.search(r"^differ: P=\d+ V=\d+ M=\d+ N=\d+ rank \d+: upstream runs an order, "
                     r"dcpsched refuses: interleaving \d+ microbatches in groups of \d+ leaves "
                     r"a last group of", report, re.MULTILINE), report


def test_a_checkout_without_the_functions_is_a_usage_error(tmp_path, capsys):
    status, report, _ = check(tmp_path)
    assert status == pipeline_order.EXIT_USAGE
    assert f"{tmp_path / SCHEDULES} not found" in capsys.readouterr().err
    checkout = copy_fixture(tmp_path, "def get_schedule_table(", "def schedule_table(")
    status, _, _ = check(checkout)
    assert status == pipeline_order.EXIT_USAGE
    assert "lacks what the op-order check calls: get_schedule_table" in capsys.readouterr().err


def test_convert_is_taken_from_cuda_graphs_where_schedules_lacks_it(tmp_path):
    """Megatron-LM main keeps convert_schedule_table_to_order in
    transformer/cuda_graphs.py, which does not load with stand-ins: its
    definition alone is compiled from there."""
    checkout = copy_fixture(tmp_path)
    path = checkout / SCHEDULES
    text = path.read_text()
    start = text.index("def convert_schedule_table_to_order(")
    path.write_text(text[:start])
    graphs = checkout / pipeline_order.CUDA_GRAPHS_FILE
    graphs.parent.mkdir(parents=True)
    graphs.write_text("import torch\n\nif torch.__version__ >= (2, 0):\n    pass\n\n\n"
                      + text[start:])
    status, report, counts = check(checkout)
    assert status == pipeline_order.EXIT_AGREE, report
    assert counts[1] == 0
    assert ("convert_schedule_table_to_order from cuda_graphs.py (its definition alone: the "
            "file does not load with stand-ins, ") in report, report
    assert f"upstream file: {graphs} sha256 " in report


def test_a_git_checkout_names_its_commit(tmp_path):
    checkout = copy_fixture(tmp_path)
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    try:
        subprocess.run(git[:3] + ["init", "-q"], check=True, capture_output=True)
        subprocess.run(git + ["add", "."], check=True, capture_output=True)
        subprocess.run(git + ["commit", "-q", "-m", "fixture"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"git is not usable here: {error}")
    commit = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    shapes = pipeline_order.Shapes(2, 2, 4)
    _, report, _ = check(checkout, shapes)
    assert (f"upstream checkout: {checkout}, git commit {commit} (the files loaded as "
            "committed)") in report, report
    (checkout / SCHEDULES).write_text((checkout / SCHEDULES).read_text() + "\n")
    _, report, _ = check(checkout, shapes)
    assert "the files loaded DIFFER from the commit (uncommitted changes)" in report, report


def test_the_command_line_runs_it(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dcpsched.conformance", "--megatron", str(copy_fixture(tmp_path)),
         "--pipeline-order"], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    equal, differ, both, shapes, ranges = CLOSING.search(result.stdout).groups()
    assert int(differ) == 0 and int(shapes) == int(equal) + int(both) == 46656
    assert ranges == "P 1..8, V 1..4, M 1..24, N 1..M+1, every pipeline rank"
    result = subprocess.run(
        [sys.executable, "-m", "dcpsched.conformance", "--megatron", str(tmp_path),
         "--pipeline-order", "--exhaustive", "test"], capture_output=True, text=True,
        timeout=60, check=False)
    assert result.returncode == 2 and "--pipeline-order is a check of its own" in result.stderr


def test_the_shapes_are_those_the_docstring_names():
    shapes = list(pipeline_order.DEFAULT_SHAPES)
    assert len(shapes) == len(set(shapes)) == 46656
    assert {s.stages for s in shapes} == set(range(1, 9))
    assert {s.virtual for s in shapes} == set(range(1, 5))
    assert {s.count for s in shapes} == set(range(1, 25))
    assert all(1 <= s.group <= s.count + 1 and 0 <= s.rank < s.stages for s in shapes)


def test_ops_of_follows_upstreams_queues():
    """The signed order of convert_schedule_table_to_order's docstring (PP 2,
    N 3, M 5, VP 2, warm-up 5) as ops: each backward runs its chunk's oldest
    forward; the same as dcpsched's order for rank 0."""
    table = [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (3, 0), (4, 0), (3, 1), (4, 1)]
    signed = [1, 1, 1, 2, 2, 2, -2, 1, -2, 1, -2, 2, -1, 2, -1, -1, -2, -2, -1, -1]
    assert pipeline_order.ops_of(signed, table, 2) == dcpsched.pipeline_stage_order(
        2, 2, 5, 0, microbatch_group_size=3)
    with pytest.raises(ValueError, match="op 0 is a backward on chunk 1, which has no forward"):
        pipeline_order.ops_of([-2], table, 2)
    with pytest.raises(ValueError, match="op 0 is a forward on chunk 1, but schedule table"):
        pipeline_order.ops_of([2], table, 2)
    with pytest.raises(ValueError, match="op 0 is 3, not a chunk of 2"):
        pipeline_order.ops_of([3], table, 2)

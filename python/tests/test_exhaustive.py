"""dcpsched.conformance.exhaustive: the Python enumeration is the C++ one, and
--exhaustive runs it against a checkout by the tool's contract.

The C++ enumerator's list comes from the exhaustive_check program
(tests/exhaustive_check.cc --list), whose path ctest passes in
DCPSCHED_EXHAUSTIVE_CHECK (python/CMakeLists.txt).
"""

import hashlib
import os
import re
import subprocess
import sys

import pytest

from dcpsched.conformance import checks, exhaustive
from test_conformance import as_dev, conformance, copy_fixture

SMALL_SETS = ("G=1..5,12 n=0..3 lens=1,m-1,m,m+1,2m,-3,8,3m+2 mslpr=1,3 min_cp=1,2 "
              "vpp=none,3 max_num_seqs=none,2")
CLOSING = re.compile(r"^conformance --exhaustive: (\d+) problems of the sets \((\d+) checks\): "
                     r"(\d+) equal, (\d+) differ, (\d+) both reject, (\d+) upstream hangs "
                     r"\(dcpsched rejects\), (\d+) outside, (\d+) skipped$", re.MULTILINE)


def cpp(*args):
    """Runs exhaustive_check ARGS; its stdout."""
    program = os.environ.get("DCPSCHED_EXHAUSTIVE_CHECK")
    if not program:
        pytest.skip("DCPSCHED_EXHAUSTIVE_CHECK is not set (ctest sets it)")
    return subprocess.run([program, *args], capture_output=True, text=True, check=True,
                          timeout=300).stdout


def python_lines(sets_text):
    return [problem.line() for problem in exhaustive.problems(exhaustive.parse_sets(sets_text))]


def test_python_lists_the_problems_the_cpp_enumerator_lists():
    cpp_lines = cpp("--list", f"--sets={SMALL_SETS}").splitlines()
    assert python_lines(SMALL_SETS) == cpp_lines
    assert len(cpp_lines) == exhaustive.count_problems(exhaustive.parse_sets(SMALL_SETS))
    assert len(cpp_lines) > 10000


def test_the_sanitized_test_sets_have_the_same_digest():
    cpp_digest = hashlib.sha256(cpp("--list", "--sets=test-sanitized").encode()).hexdigest()
    lines = python_lines("test-sanitized")
    assert len(lines) == 19968
    assert hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest() == \
        cpp_digest


@pytest.mark.parametrize("name", sorted(exhaustive.NAMED_SETS))
def test_named_sets_are_the_cpp_named_sets(name):
    count, text = cpp("--count", f"--sets={name}").strip().split(" problems: ")
    sets = exhaustive.parse_sets(name)
    assert exhaustive.format_sets(sets) == text
    assert exhaustive.count_problems(sets) == int(count)


@pytest.mark.parametrize("text, why", [
    ("n=1 lens=1 mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "G: missing"),
    ("G=0 n=1 lens=1 mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "G: 0 is outside"),
    ("G=1,1 n=1 lens=1 mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "G: 1 is listed twice"),
    ("G=1 n=13 lens=1 mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "n: 13 is outside"),
    ("G=1 n=1 lens=1 mslpr=4 min_cp=3 vpp=none max_num_seqs=none", "not a power of two"),
    ("G=1 n=1 lens=-m mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "not c, km, km+c"),
    ("G=1 n=1 lens=m+ mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "not c, km, km+c"),
    ("G=1 n=1 lens=m,1m mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "1m is listed twice"),
    ("G=1 n=1 lens=1 mslpr=4 min_cp=1 vpp=0 max_num_seqs=none", "vpp: 0 is not 'none'"),
    ("G=1 n=1 k=2 lens=1 mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "unknown field 'k=2'"),
])
def test_sets_both_sides_refuse(text, why):
    with pytest.raises(exhaustive.SetsError, match=re.escape(why)):
        exhaustive.parse_sets(text)
    program = os.environ.get("DCPSCHED_EXHAUSTIVE_CHECK")
    if program:
        result = subprocess.run([program, "--count", f"--sets={text}"], capture_output=True,
                                text=True, check=False)
        assert result.returncode == 2 and why in result.stderr, result.stderr


def test_against_a_checkout_that_calls_dcpsched_everything_agrees(tmp_path):
    checkout = copy_fixture(tmp_path)
    sets = "G=1..6 n=0..2 lens=1,m-1,m,m+1,2m,4m mslpr=4 min_cp=1,2 vpp=none,2 max_num_seqs=none,1"
    status, output, _ = conformance("--megatron", checkout, "--exhaustive", sets,
                                    "--timeout", 1, cwd=tmp_path)
    assert status == 0, output
    closing = CLOSING.search(output)
    assert closing, output
    problems, checked, equal, differ, both, hangs, outside, _ = map(int, closing.groups())
    assert problems == exhaustive.count_problems(exhaustive.parse_sets(sets)) == 6 * 8 * 43
    assert differ == 0 and hangs == 0 and outside == 0, output
    # Every problem runs at least its schedule and step checks, and the
    # dp_balanced one where min_cp divides G.
    assert checked >= 2 * problems and equal > 0 and both > 0, output
    # Where the checkout's answers are dcpsched's own refusals, the table
    # names each kind: the runtime's groups (invariant 11) among them.
    assert ("get_groups_and_subsamples: both reject: dcpsched FAILED_PRECONDITION: upstream "
            "returns a schedule its runtime cannot run (invariant 11)") in output, output


def test_a_difference_is_printed_as_a_problem_line_and_exits_1(tmp_path):
    # The class applies the cap its step lacks (test_conformance.py).
    checkout = copy_fixture(tmp_path, lambda name, text: (
        as_dev(name, text) if name == "data_schedule_utils.py" else text))
    status, output, _ = conformance(
        "--megatron", checkout, "--exhaustive",
        "G=1..4 n=2..3 lens=1,m mslpr=4 min_cp=1 vpp=none max_num_seqs=1", cwd=tmp_path)
    assert status == 1, output
    assert re.search(r"^differ: get_groups_and_subsamples: G=\d+ mslpr=4 min_cp=1 vpp=none "
                     r"max_num_seqs=1 samples=", output, re.MULTILINE), output
    closing = CLOSING.search(output)
    assert closing and int(closing.group(4)) > 0, output


@pytest.mark.parametrize("sets, why", [
    ("G=1 n=1 lens=-5 mslpr=4 min_cp=1 vpp=none max_num_seqs=none", "name no problem"),
    ("G=1 n=1", "lens: missing"),
])
def test_nothing_checked_exits_2_saying_why(tmp_path, sets, why):
    status, output, _ = conformance("--megatron", copy_fixture(tmp_path), "--exhaustive", sets,
                                    cwd=tmp_path)
    assert status == 2 and why in output, output


def test_a_difference_that_does_not_reproduce_counts_as_its_rerun(monkeypatch, capsys):
    """A timed-out upstream call on a loaded machine: the first run differs,
    the rerun with a longer timeout is equal."""
    calls = []

    def run_checks(worker, problem, timeout, only=None):
        calls.append((problem, timeout, only))
        kind = checks.DIFFER if len(calls) == 1 else checks.EQUAL
        return [checks.Outcome("next_hdp_group_packing_aware", kind,
                               checks.Answer(hung=kind == checks.DIFFER), checks.Answer(value=1),
                               problem)]

    monkeypatch.setattr(checks, "run_checks", run_checks)
    sets = "G=1 n=1 lens=1 mslpr=4 min_cp=2 vpp=none max_num_seqs=none"  # no dp_balanced
    assert exhaustive.run(None, sets, 0.1, sys.stdout) == 0
    out = capsys.readouterr().out
    assert "not reproduced: next_hdp_group_packing_aware: G=1 mslpr=4 min_cp=2" in out, out
    assert calls[1][1] == pytest.approx(0.1 * exhaustive.CONFIRM_FACTOR)
    assert calls[1][2] == "next_hdp_group_packing_aware"
    assert "(1 differences did not reproduce" in out
    assert CLOSING.search(out).group(4) == "0", out
    # A difference that comes back stays one.
    calls.clear()
    monkeypatch.setattr(checks, "run_checks", lambda w, p, t, only=None: [checks.Outcome(
        "next_hdp_group_packing_aware", checks.DIFFER, checks.Answer(value=2),
        checks.Answer(value=1), p)])
    assert exhaustive.run(None, sets, 0.1, sys.stdout) == 1
    out = capsys.readouterr().out
    assert "differ: next_hdp_group_packing_aware: G=1" in out and "not reproduced" not in out

"""dcpsched.conformance against fixture checkouts (no upstream code here).

fixtures/megatron_calls_dcpsched/ holds scheduling files with upstream's
names and signatures that call dcpsched itself, so a run against it must
find everything equal; the tests derive from it a copy with one planted
difference (found, shrunk, exit 1), a copy that hangs where dcpsched
refuses (counted as hangs, exit 0) and a copy without the functions, as
Megatron-LM main is (exit 2). The fixture's step takes max_num_seqs, as
Megatron-LM PR #6479's does; dropping the lines marked "# Megatron-LM PR
#6479" makes it Megatron-LM dev's (as_dev), and adding a parameter makes one
dcpsched does not model (exit 1, never a clean closing line).
"""

import collections
import dataclasses
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

import dcpsched
from conftest import REPO
from dcpsched.conformance import (checks, cli, corpus, generators, known_upstreams,
                                  runtime_groups, shrink, signatures, upstream)
from dcpsched.conformance.golden import GoldenWriter
from dcpsched.conformance.problems import DpBalancedProblem, DynamicCpProblem
from dcpsched.conformance.worker import UpstreamWorker
from test_golden import assert_schedule_equal, assert_step_equal, run as run_golden_case

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "megatron_calls_dcpsched"
DATASETS = pathlib.Path("megatron", "core", "datasets")
CLOSING = re.compile(r"^conformance: (\d+) equal, (\d+) differ, (\d+) both reject, "
                     r"(\d+) upstream hangs \(dcpsched rejects\), (\d+) upstream returns a "
                     r"schedule its runtime cannot run \(dcpsched refuses: invariant 11\), "
                     r"(\d+) upstream fails where dcpsched schedules"
                     r"(?:; generated problems only \(no fuzz corpora\))?$")
MAIN_LIKE = pathlib.Path(__file__).parent / "fixtures" / "megatron_main_like"
# A class of differences: its first line, and its smallest problem shrunk.
DIFFER_CLASS = re.compile(r"^differ: (\S+): (.*): (\d+) problems?\n  smallest, shrunk: (.*)\n"
                          r"  (.*)\n  run it: (.*)\n", re.MULTILINE)
STEP_RETURN = "    return micro_batches, leftovers, exec_times, sample_ids\n"
PR6479_MARK = "# Megatron-LM PR #6479"
CAPPED = re.compile(r"^\d+ problems; (\d+) set max_num_seqs \(the cap changes dcpsched's "
                    r"schedule in (\d+)\)", re.MULTILINE)


def conformance(*args, cwd=None):
    """Runs `python3 -m dcpsched.conformance ARGS`; returns (status, stdout, counts)."""
    result = subprocess.run([sys.executable, "-m", "dcpsched.conformance", *map(str, args)],
                            capture_output=True, text=True, cwd=cwd, timeout=900, check=False)
    lines = result.stdout.splitlines()
    match = CLOSING.match(lines[-1]) if lines else None
    counts = tuple(int(n) for n in match.groups()) if match else None
    return result.returncode, result.stdout + result.stderr, counts


def copy_fixture(tmp_path, edit=None):
    """The fixture checkout copied to tmp_path/checkout, edit(file name, text) applied."""
    checkout = tmp_path / "checkout"
    shutil.copytree(FIXTURE, checkout)
    if edit:
        for path in (checkout / DATASETS).glob("*.py"):
            path.write_text(edit(path.name, path.read_text()))
    return checkout


def small_corpus(tmp_path, count):
    """tmp_path/fuzz_packing_aware with the first `count` committed inputs."""
    directory = tmp_path / "fuzz_packing_aware"
    directory.mkdir()
    for path in sorted((REPO / "corpus" / "fuzz_packing_aware").glob("*"))[:count]:
        if path.is_file():
            shutil.copy(path, directory / path.name)
    return directory


def test_everything_equal_against_a_checkout_that_calls_dcpsched(tmp_path):
    checkout = copy_fixture(tmp_path)
    golden = tmp_path / "golden"
    status, output, counts = conformance("--megatron", checkout, "--cases", 300,
                                         "--write-golden", golden, cwd=tmp_path)
    assert status == 0, output
    assert counts is not None, output
    equal, differ, both_reject, hangs, runtime, fails = counts
    # The fixture's upstream is dcpsched's whole-schedule call: what dcpsched
    # refuses, it refuses too.
    assert differ == 0 and hangs == 0 and runtime == 0 and fails == 0, output
    # The report opens with the files' hashes; the fixture is no known upstream.
    lines = output.splitlines()
    for number, name in enumerate(("data_schedule.py", "data_schedule_utils.py")):
        digest = known_upstreams.sha256_of(checkout / DATASETS / name)
        assert lines[number] == f"upstream file: {checkout / DATASETS / name} sha256 {digest}"
    assert lines[2].startswith("upstream files: NOT the files dcpsched was checked against")
    assert "unmodelled:" not in output
    # The fixture's step takes the cap: problems set it, and it mattered.
    assert "passed to upstream's DefaultDynamicCPScheduler and next_hdp_group_packing_aware" \
        in output
    capped = CAPPED.search(output)
    assert capped and int(capped.group(1)) > 50 and int(capped.group(2)) > 10, output
    # 300 generated problems and every problem of the committed corpora, each
    # compared by one to three checks.
    committed = sum(1 for d in corpus.committed_corpora(REPO) for p in d.rglob("*") if p.is_file())
    assert committed > 1000
    assert equal + both_reject >= 300 + committed, output
    assert both_reject > 0, output  # the corpora hold inputs both refuse
    for directory in corpus.committed_corpora(REPO):
        assert str(directory) in output
    # No bytecode written next to the "upstream" files.
    assert not list(checkout.rglob("__pycache__"))
    # The golden files say what the checkout answered, in tests/golden's format.
    names = {path.name for path in golden.glob("*.jsonl")}
    assert names == {"packing_aware_schedule.jsonl", "packing_aware_step.jsonl",
                     "dp_balanced_schedule.jsonl", "vpp_align.jsonl"}, names
    caps = collections.Counter()  # (kind, with a cap) of the packing-aware cases
    for path in golden.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            case = json.loads(line)
            numbers = [case[f] for f in ("total_gpus", "dp_size", "cp_size", "min_cp_size",
                                         "max_seq_len_per_rank", "vpp_group", "max_num_seqs")]
            numbers += [value for pair in case["samples"] for value in pair]
            assert all(-(1 << 63) <= n < 1 << 63 for n in numbers if n is not None), line
            if case["scheduler"] == "packing_aware":
                caps[case["kind"], case["max_num_seqs"] is not None] += 1
            expect = case["expect"]
            if not expect["ok"]:
                with pytest.raises(ValueError):
                    run_golden_case(case)
            elif case["kind"] == "step":
                assert_step_equal(run_golden_case(case), expect)
            else:
                assert_schedule_equal(run_golden_case(case), expect["groups"])
    # The writer says the cap the check compared under, with it and without.
    for kind in ("schedule", "step"):
        assert caps[kind, True] > 0 and caps[kind, False] > 0, caps


def parse_problem_line(line):
    """A DynamicCpProblem from its line (io/problem_text.h's form)."""
    fields = dict(field.split("=", 1) for field in line.split())
    samples = tuple(tuple(int(v) for v in sample.split(":"))
                    for sample in fields["samples"].split(",") if sample)
    vpp = None if fields["vpp"] == "none" else int(fields["vpp"])
    cap = int(fields["max_num_seqs"]) if "max_num_seqs" in fields else None
    return DynamicCpProblem(samples, int(fields["G"]), int(fields["mslpr"]),
                            int(fields["min_cp"]), vpp, cap)


def test_problem_line_names_the_cap_only_when_set():
    problem = DynamicCpProblem(((0, 9), (1, 3)), 4, 8, 1, None, 3)
    assert problem.line() == "G=4 mslpr=8 min_cp=1 vpp=none max_num_seqs=3 samples=0:9,1:3"
    uncapped = dataclasses.replace(problem, max_num_seqs=None)
    assert uncapped.line() == "G=4 mslpr=8 min_cp=1 vpp=none samples=0:9,1:3"
    for each in (problem, uncapped):
        assert parse_problem_line(each.line()) == each


def test_shrinking_drops_a_cap_the_difference_does_not_need():
    problem = DynamicCpProblem(((0, 9), (1, 3), (2, 5)), 4, 8, 1, None, 2)
    assert shrink.shrink(problem, lambda p: len(p.samples) >= 1).max_num_seqs is None
    kept = shrink.shrink(problem, lambda p: p.max_num_seqs == 2)
    assert kept.max_num_seqs == 2 and kept.samples == ()


def as_dev(name, text):
    """The fixture as Megatron-LM dev: no max_num_seqs in the step, and the
    class does not pass its own."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if PR6479_MARK not in line)


def test_a_checkout_whose_step_takes_no_cap_gets_the_cap_in_its_class_only(tmp_path):
    checkout = copy_fixture(tmp_path, as_dev)
    assert not upstream.load(checkout).step_takes_max_num_seqs
    status, output, counts = conformance("--megatron", checkout, "--cases", 150,
                                         "--no-corpora", cwd=tmp_path)
    assert status == 0 and counts is not None and counts[1] == 0, output
    assert "passed to upstream's DefaultDynamicCPScheduler only" in output
    capped = CAPPED.search(output)
    assert capped and int(capped.group(1)) > 30 and capped.group(2) == "0", output


def test_a_class_that_applies_the_cap_its_step_lacks_differs(tmp_path):
    """The class gets the problems' caps: one that uses it, on a checkout
    whose step takes none (so dcpsched gets none), must differ."""
    checkout = copy_fixture(tmp_path, lambda name, text: (
        as_dev(name, text) if name == "data_schedule_utils.py" else text))
    status, output, counts = conformance("--megatron", checkout, "--cases", 60,
                                         "--no-corpora", cwd=tmp_path)
    assert status == 1 and counts is not None and counts[1] > 0, output
    assert re.search(r"^differ: get_groups_and_subsamples: .*\n  smallest, shrunk: "
                     r".* max_num_seqs=\d+ samples=", output, re.MULTILINE), output


def add_unmodelled_parameter(name, text):
    """DefaultDynamicCPScheduler gains a parameter dcpsched has no counterpart for."""
    if name != "data_schedule.py":
        return text
    init = "    def __init__(self, *args, min_cp_size=1, **kwargs):\n"
    assert init in text
    return text.replace(init, "    def __init__(self, *args, min_cp_size=1, "
                              "max_tokens_per_group=None, **kwargs):\n")


def test_an_upstream_parameter_dcpsched_does_not_model_fails_the_run(tmp_path):
    checkout = copy_fixture(tmp_path, add_unmodelled_parameter)
    assert signatures.unmodelled_parameters(upstream.load(checkout)) == [
        "DefaultDynamicCPScheduler.__init__(max_tokens_per_group)"]
    status, output, counts = conformance("--megatron", checkout, "--cases", 20,
                                         "--no-corpora", cwd=tmp_path)
    assert status == 1, output
    assert counts is None, output  # never a clean closing line
    assert "unmodelled: upstream's DefaultDynamicCPScheduler.__init__(max_tokens_per_group)" \
        in output
    assert re.search(r"^conformance: \d+ equal, 0 differ, .*; NOT CONFORMANT: dcpsched does "
                     r"not model upstream's DefaultDynamicCPScheduler.__init__"
                     r"\(max_tokens_per_group\) yet$", output, re.M), output


def test_the_fixtures_parameters_are_all_modelled():
    assert signatures.unmodelled_parameters(upstream.load(FIXTURE)) == []


def test_known_upstreams_are_named_only_for_their_exact_files(tmp_path):
    for name, hashes in known_upstreams.KNOWN_UPSTREAMS.items():
        assert known_upstreams.known_upstream(hashes) == name
        assert known_upstreams.known_upstream({**hashes, "data_schedule.py": "0" * 64}) is None
    files = [FIXTURE / DATASETS / "data_schedule.py", FIXTURE / DATASETS / "data_schedule_utils.py"]
    lines = known_upstreams.report_lines(files)
    assert lines[0].endswith(known_upstreams.sha256_of(files[0]))
    assert "NOT the files dcpsched was checked against" in lines[2]


def plant_exec_time_difference(name, text):
    """One ulp more exec time on rank 0 when a sample is longer than mslpr."""
    if name != "data_schedule_utils.py":
        return text
    assert STEP_RETURN in text
    return text.replace(STEP_RETURN, (
        "    if any(length > max_seq_len_per_rank for _, length in sample_seqlens):\n"
        "        import math\n"
        "        exec_times[0] = math.nextafter(exec_times[0], math.inf)\n") + STEP_RETURN)


def test_a_planted_difference_is_found_and_shrunk(tmp_path):
    checkout = copy_fixture(tmp_path, plant_exec_time_difference)
    status, output, counts = conformance("--megatron", checkout, "--cases", 40, "--corpus",
                                         small_corpus(tmp_path, 5), cwd=tmp_path)
    assert status == 1, output
    assert counts is not None and counts[1] > 1, output
    # One class, every difference counted in it, shown once.
    (check, label, count, line, where, _), = DIFFER_CLASS.findall(output)
    assert check == "next_hdp_group_packing_aware", output
    assert label == "both return; they differ at answer[2][*] (floats)", output
    assert int(count) == counts[1], output
    # The report says where: rank 0's exec time, bit patterns shown.
    assert re.match(r"answer\[2\]\[0\]: upstream \S+ \(0x[0-9a-f.p+]+\), dcpsched", where), where
    with UpstreamWorker(upstream.load(checkout)) as planted:

        def differs(problem):
            outcomes = checks.run_checks(planted, problem, 5.0, "next_hdp_group_packing_aware")
            return outcomes[0].kind == checks.DIFFER

        problem = parse_problem_line(line)
        assert differs(problem), line
        # The smallest that still shows it: dropping the cap or any sample,
        # or shortening any length by one token, makes the difference go away.
        if problem.max_num_seqs is not None:
            assert not differs(dataclasses.replace(problem, max_num_seqs=None)), line
        assert len(problem.samples) <= 8, line
        for index, (sample_id, length) in enumerate(problem.samples):
            others = problem.samples[:index] + problem.samples[index + 1:]
            assert not differs(problem.with_samples(others)), (line, index)
            if length > 1:
                shorter = others[:index] + ((sample_id, length - 1),) + others[index:]
                assert not differs(problem.with_samples(shorter)), (line, index)


def plant_tie_break(name, text):
    """The step breaks a tie the other way: where two samples of the same
    length are both placed, their ids trade places (as a tie-break that
    prefers the later of equal candidates would have it)."""
    if name != "data_schedule_utils.py":
        return text
    assert STEP_RETURN in text
    return text.replace(STEP_RETURN, (
        "    by_length = {}\n"
        "    for sample_id, length in sample_seqlens:\n"
        "        by_length.setdefault(length, []).append(sample_id)\n"
        "    tied = next((ids[:2] for ids in by_length.values() if len(ids) >= 2), None)\n"
        "    if tied and all(any(i in ids for ids in sample_ids) for i in tied):\n"
        "        swap = {tied[0]: tied[1], tied[1]: tied[0]}\n"
        "        sample_ids = [[swap.get(i, i) for i in ids] for ids in sample_ids]\n") + STEP_RETURN)


def cli_program():
    """The dcpsched program of the build whose module the tests import."""
    path = pathlib.Path(os.environ.get(
        "DCPSCHED_CLI", pathlib.Path(dcpsched.__file__).resolve().parents[2] / "dcpsched"))
    if not path.is_file():
        pytest.skip(f"no dcpsched program at {path} (set DCPSCHED_CLI)")
    return path


def test_a_tie_break_mutant_gives_one_grouped_report_that_runs_in_the_cli(tmp_path):
    checkout = copy_fixture(tmp_path, plant_tie_break)
    status, output, counts = conformance("--megatron", checkout, "--cases", 60, "--no-corpora",
                                         "--all-differences", cwd=tmp_path)
    assert status == 1 and counts is not None and counts[1] > 1, output
    (check, label, count, line, _, command), = DIFFER_CLASS.findall(output)
    assert check == "next_hdp_group_packing_aware", output
    assert label == "both return; they differ at answer[3][*][*] (values)", output
    assert int(count) == counts[1], output
    # --all-differences lists every problem of the class, unshrunk.
    listed = re.findall(r"^    generated #\d+ \(seed 5154\): (G=.*)$", output, re.MULTILINE)
    assert len(listed) == counts[1], output
    # Shrunk to the tie itself: two samples of one length.
    problem = parse_problem_line(line)
    assert len(problem.samples) == 2 and problem.samples[0][1] == problem.samples[1][1], line
    # The line runs as it is in dcpsched's CLI.
    assert command == ("dcpsched schedule --scheduler packing_aware --problem "
                       f"'{line}'"), command
    program = cli_program()
    result = subprocess.run(command, shell=True, capture_output=True, text=True, check=False,
                            timeout=60, env={**os.environ,
                                             "PATH": f"{program.parent}:{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    assert "packing_aware" in result.stdout, result.stdout


def plant_hang(name, text):
    """The dynamic-CP scheduler loops forever where dcpsched refuses."""
    if name != "data_schedule.py":
        return text
    call = "        return dcpsched.schedule_dynamic_cp("
    assert call in text
    return text.replace(call, "        try:\n            dcpsched.schedule_dynamic_cp(\n"
                        "                sample_id_seqlens, self.dp_size * self.cp_size,\n"
                        "                self.max_seqlen_per_dp_cp_rank, min_cp_size=self.min_cp_size,\n"
                        "                vpp_group=self.microbatch_group_size_per_vp_stage)\n"
                        "        except ValueError:\n"
                        "            while True:\n"
                        "                pass\n" + call)


def test_upstream_hangs_are_timed_out_and_counted(tmp_path):
    checkout = copy_fixture(tmp_path, plant_hang)
    status, output, counts = conformance("--megatron", checkout, "--cases", 0, "--timeout",
                                         0.5, "--corpus", small_corpus(tmp_path, 40),
                                         cwd=tmp_path)
    assert status == 0, output
    assert counts is not None and counts[1] == 0 and counts[3] > 0, output


def test_a_checkout_without_a_scheduler_checks_the_others_and_names_it(tmp_path):
    def remove(name, text):
        for definition in ("def next_hdp_group_packing_aware", "class DefaultDynamicCPScheduler"):
            text = text.replace(definition, definition.replace(" ", " _gone_", 1))
        # data_schedule.py imports the step and maps the class, as upstream's
        # does; main has neither.
        text = text.replace('    "default_dynamic_cp": DefaultDynamicCPScheduler,\n', "")
        return text.replace(", next_hdp_group_packing_aware)", ")")
    checkout = copy_fixture(tmp_path, remove)
    status, output, counts = conformance("--megatron", checkout, "--cases", 40, "--no-corpora",
                                         cwd=tmp_path)
    assert status == 0 and counts is not None, output
    assert ("scheduler packing-aware: NOT CHECKED: this checkout lacks data_schedule.py: "
            "DefaultDynamicCPScheduler, data_schedule_utils.py: next_hdp_group_packing_aware\n"
            ) in output
    assert "scheduler dp_balanced: checked (DpBalancedScheduler)" in output
    assert "scheduler legacy: NOT CHECKED: this checkout lacks hybrid_cp_schedule.py: " \
        "BalancedCPScheduler" in output
    assert re.search(r"^compared, per check: DpBalancedScheduler \d+$", output, re.M), output


def test_a_checkout_without_any_scheduler_checks_nothing_and_fails(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / DATASETS).mkdir(parents=True)
    for name in ("data_schedule.py", "data_schedule_utils.py"):
        (checkout / DATASETS / name).write_text('"""No scheduler here."""\n')
    status, output, counts = conformance("--megatron", checkout, "--cases", 5, cwd=tmp_path)
    assert status == 4 and counts is None, output
    assert output.count("NOT CHECKED: this checkout lacks") == 3, output
    assert "NOTHING CHECKED: the checkout at" in output.splitlines()[-1], output


def test_a_run_of_no_problem_checks_nothing_and_fails(tmp_path):
    status, output, _ = conformance("--megatron", FIXTURE, "--cases", 0, "--no-corpora",
                                    cwd=tmp_path)
    assert status == 4, output
    lines = output.splitlines()
    assert lines[-2].endswith("; generated problems only (no fuzz corpora)"), output
    assert lines[-1].startswith("conformance: NOTHING CHECKED: 0 problems"), output


def test_help_gives_the_exit_codes_and_the_time_of_a_default_run(tmp_path):
    result = subprocess.run([sys.executable, "-m", "dcpsched.conformance", "--help"],
                            capture_output=True, text=True, check=True, cwd=tmp_path)
    for code in range(5):
        assert re.search(rf"^  {code}  ", result.stdout, re.M), result.stdout
    assert "a default run" in result.stdout and "minutes" in result.stdout


def test_a_main_like_checkout_checks_dp_balanced_and_runs_legacy_for_information(tmp_path):
    """Megatron-LM main as the fixture stands for it: no packing-aware
    scheduler (named), DpBalancedScheduler with main's assertion (its own
    class, shrunk, exit 0), and the legacy BalancedCPScheduler, another
    algorithm than dcpsched's legacy one, compared for information only, on
    main's groups."""
    status, output, counts = conformance("--megatron", MAIN_LIKE, "--cases", 400, "--no-corpora",
                                         cwd=tmp_path)
    assert status == 0 and counts is not None, output
    equal, differ, _, _, runtime, fails = counts
    assert differ == 0 and runtime == 0 and fails > 0 and equal > 0, output
    assert ("scheduler packing-aware: NOT CHECKED: this checkout lacks data_schedule.py: "
            "DefaultDynamicCPScheduler, data_schedule_utils.py: next_hdp_group_packing_aware, "
            "data_schedule_utils.py: align_sample_id_groups\n") in output
    assert "scheduler dp_balanced: checked (DpBalancedScheduler; its class takes no " \
        "max_num_seqs" in output
    assert re.search(r"^scheduler legacy: FOR INFORMATION ONLY \(BalancedCPScheduler of "
                     r"megatron/core/pipeline_parallel/hybrid_cp_schedule.py, .*its runtime: "
                     r"main's hybrid-CP groups .*\): BalancedCPScheduler is not the algorithm "
                     r"dcpsched's legacy scheduler reproduces", output, re.M), output
    assert re.search(r"^compared, per check: DpBalancedScheduler (\d+)$", output, re.M), output
    # The legacy comparisons are counted apart (the fixture's is dcpsched's
    # own, so they agree), with the schedules main's runtime cannot run
    # confirmed by main's rule.
    information = re.search(r"^for information, not counted below: BalancedCPScheduler: (.*)$",
                            output, re.M)
    assert information and "differ" not in information.group(1), output
    assert re.search(r"\d+ equal", information.group(1)), output
    if "upstream returns a schedule its runtime cannot run" in information.group(1):
        assert "for information: runtime cannot run: BalancedCPScheduler: " in output
        assert "main's hybrid-CP runtime has no group" in output
    # Main's assertion: one class, its smallest example shrunk to as few
    # samples as the ranks need, which dcpsched schedules.
    (count, found), = re.findall(
        r"^upstream fails where dcpsched schedules: DpBalancedScheduler: AssertionError: "
        r"Not enough samples to move: (\d+) problems?\n  smallest, shrunk: (.*)$", output, re.M)
    assert int(count) == fails, output
    shrunk = dict(field.split("=") for field in found.split())
    multiple = int(shrunk["dp"]) * int(shrunk["vpp"] if shrunk["vpp"] != "none" else 1)
    assert len(shrunk["lens"].split(",")) == multiple, found
    assert re.search(r"^  dcpsched returns \[\[\[0\]", output, re.M), output
    assert re.search(r"^  run it: printf '(1\\n)+' \| dcpsched schedule --scheduler dp_balanced ",
                     output, re.M), output


def test_main_like_fixture_fails_where_main_asserts():
    """The smallest case of the issue: main asserts, dev schedules."""
    loaded = upstream.load(MAIN_LIKE)
    scheduler = loaded.dp_balanced_scheduler(64, 1, 2, None)
    with pytest.raises(AssertionError, match="Not enough samples to move"):
        scheduler.get_groups_and_subsamples([(0, 3), (1, 3)])
    assert dcpsched.schedule_dp_balanced([(0, 3), (1, 3)], 2, 1, 64) == [[[0], [1]]]
    assert not loaded.dp_balanced_takes_max_num_seqs and loaded.legacy_runtime_rule == "hybrid"


def test_main_rule_is_per_sample_and_lacks_size_one_groups():
    # G = 12: main creates blocks of 2 and 4 (and the whole 12); not 8.
    assert runtime_groups.hybrid_created_sizes(12) == [2, 4]
    assert runtime_groups.hybrid_cp_violations([[[0]] * 8 + [[1], [2], [3], [4]]], 12)
    assert not runtime_groups.hybrid_cp_violations([[[0]] * 4 + [[1]] * 4 + [[2], [3], [4], [5]]],
                                                   12)
    # Per sample: a rank's second sample on a misaligned pair is found.
    assert runtime_groups.hybrid_cp_violations([[[0, 1], [0], [1], [2]]], 4)
    assert not runtime_groups.hybrid_cp_violations([[[0], [1], [2], [3]]], 4)


def test_a_path_that_is_no_checkout_exits_2(tmp_path):
    status, output, _ = conformance("--megatron", tmp_path, "--cases", 5, cwd=tmp_path)
    assert status == 2 and "data_schedule" in output, output


def test_a_directory_that_is_no_problem_corpus_exits_2(tmp_path):
    checkout = copy_fixture(tmp_path)
    status, output, _ = conformance("--megatron", checkout, "--corpus",
                                    REPO / "corpus" / "fuzz_lengths_file", cwd=tmp_path)
    assert status == 2 and "fuzz_lengths_file" in output, output


def test_loading_leaves_no_stand_ins_behind():
    before = {name for name in sys.modules if name.split(".")[0] in ("torch", "megatron")}
    loaded = upstream.load(FIXTURE)
    after = {name for name in sys.modules if name.split(".")[0] in ("torch", "megatron")}
    assert after == before
    assert loaded.next_group_packing_aware([(0, 3)], 2, 2)[3] == [[0], [0]]


def test_generated_problems_are_valid_and_cover_the_families():
    problems = list(generators.generate(2000, seed=1))
    assert problems == list(generators.generate(2000, seed=1))  # same seed, same problems
    dynamic = [p for p in problems if isinstance(p, DynamicCpProblem)]
    balanced = [p for p in problems if isinstance(p, DpBalancedProblem)]
    for problem in dynamic:  # inside the limits: never InvalidInputError
        try:
            dcpsched.schedule_dynamic_cp(list(problem.samples), problem.total_gpus,
                                         problem.max_seq_len_per_rank,
                                         min_cp_size=problem.min_cp_size,
                                         vpp_group=problem.vpp_group,
                                         max_num_seqs=problem.max_num_seqs)
        except dcpsched.UnschedulableError:
            pass
    def has(predicate):
        return any(predicate(p) for p in dynamic)
    assert has(lambda p: p.total_gpus & (p.total_gpus - 1))            # G not a power of two
    assert has(lambda p: p.min_cp_size > 1)
    assert {p.vpp_group for p in dynamic} >= {None, 1, 2, 3, 4}
    assert has(lambda p: 0 < len(p.samples) < p.total_gpus)             # fewer samples than ranks
    assert has(lambda p: any(abs(i) >= 1 << 40 for i, _ in p.samples))  # sparse 64-bit ids
    assert has(lambda p: any(n in (k * p.max_seq_len_per_rank + d for k in range(1, 9)
                                   for d in (-1, 0, 1)) for _, n in p.samples))
    assert has(lambda p: len(p.samples) >= 2 and len({n for _, n in p.samples}) == 1)
    assert has(lambda p: any(n > 128 and n != 8192 and n % 2 for _, n in p.samples))  # lognormal
    assert has(lambda p: p.total_gpus >= 1024)
    # A good share sets the cap, mostly small, tie-prone problems included.
    assert 0.3 < sum(p.max_num_seqs is not None for p in dynamic) / len(dynamic) < 0.7
    assert {p.max_num_seqs for p in dynamic} >= {None, 1, 2, 3, 4}
    assert has(lambda p: p.max_num_seqs is not None and p.max_num_seqs > 4)
    assert has(lambda p: p.max_num_seqs is not None and len(p.samples) >= 2
               and len({n for _, n in p.samples}) == 1)
    assert len(balanced) > 200 and any(p.max_num_seqs for p in balanced)


# Requests to the worker: module-level functions, called as f(upstream, *args).

def first_step_ranks(up):
    return up.next_group_packing_aware([(0, 3)], 2, 2)[3]


def echo(_, value):
    return value


def divide_by_zero(_):
    return 1 // 0


def loop_forever(_):
    while True:
        pass


def grow_without_end(_):
    """A list that grows until the memory limit stops it (its 256 MiB blocks
    are calloc'd, so untouched: the limit is of address space)."""
    blocks = []
    while True:
        blocks.append(bytes(256 << 20))


def unpicklable(_):
    return lambda: None


def die(_):
    os._exit(3)


def worker_pid(_):
    return os.getpid()


def test_upstream_calls_are_answers_errors_or_hangs():
    with UpstreamWorker(upstream.load(FIXTURE)) as worker:
        # The worker has the loaded upstream, and outlives ordinary calls.
        assert worker.call(first_step_ranks, (), 5.0).value == [[0], [0]]
        pid = worker.call(worker_pid, (), 5.0).value
        assert pid != os.getpid()
        assert worker.call(echo, ([(1, 2.5)],), 5.0).value == [(1, 2.5)]
        assert worker.call(divide_by_zero, (), 5.0).error == (
            "ZeroDivisionError: integer division or modulo by zero")
        assert worker.call(worker_pid, (), 5.0).value == pid
        # A request and a reply larger than a pipe holds (64 KiB).
        large = [(n, n / 3) for n in range(100_000)]
        assert worker.call(echo, (large,), 5.0).value == large
        # A hang is killed; the next call gets a fresh worker.
        assert worker.call(loop_forever, (), 0.3).hung
        assert worker.call(echo, ("after a hang",), 5.0).value == "after a hang"
        restarted = worker.call(worker_pid, (), 5.0).value
        assert restarted != pid
        # A list growing without end: stopped by the memory limit, not by the clock.
        started = time.monotonic()
        assert worker.call(grow_without_end, (), 60.0).hung
        assert time.monotonic() - started < 30
        assert worker.call(echo, ("after MemoryError",), 5.0).value == "after MemoryError"
        assert worker.call(worker_pid, (), 5.0).value != restarted
        # A value that cannot be pickled back.
        assert worker.call(unpicklable, (), 5.0).hung
        assert worker.call(echo, (7,), 5.0).value == 7
        # A worker that dies mid-call.
        assert worker.call(die, (), 5.0).hung
        assert worker.call(echo, (8,), 5.0).value == 8
        last = worker.call(worker_pid, (), 5.0).value
    with pytest.raises(ProcessLookupError):  # reaped on exit
        os.kill(last, 0)


def test_golden_writer_tags_files_and_leaves_out_large_g(tmp_path):
    def outcome(total_gpus, cap):
        problem = DynamicCpProblem(((0, 3),), total_gpus, 8, max_num_seqs=cap)
        groups = [[[0]] * total_gpus]
        return checks.Outcome("get_groups_and_subsamples", checks.EQUAL,
                              checks.Answer(value=groups), checks.Answer(value=groups),
                              problem, max_num_seqs=cap)
    writer = GoldenWriter(tmp_path, tag="pr6479", max_gpus=64)
    for total_gpus, cap in ((2, 3), (64, None), (128, 3)):
        writer.add(outcome(total_gpus, cap))
    assert writer.write() == {"packing_aware_schedule_pr6479.jsonl": 2}
    assert writer.left_out_large == 1
    cases = [json.loads(line) for line in
             (tmp_path / "packing_aware_schedule_pr6479.jsonl").read_text().splitlines()]
    assert [(c["name"], c["total_gpus"], c["max_num_seqs"]) for c in cases] == [
        ("pa-sched-pr6479-0001", 2, 3), ("pa-sched-pr6479-0002", 64, None)]


def test_an_internal_error_exits_3_not_checked(monkeypatch, capsys):
    # One exit-code contract for both modes: a failure of the check itself
    # is NOT CHECKED (3), never a traceback that exits 1 like a difference.
    def broken(*_args, **_kwargs):
        raise RuntimeError("planted failure")
    monkeypatch.setattr(checks, "run_checks", broken)
    status = cli.run(["--megatron", str(FIXTURE), "--cases", "1", "--no-corpora"])
    captured = capsys.readouterr()
    assert status == 3, captured
    assert "planted failure" in captured.err and "NOT CHECKED" in captured.err
    assert "conforms" not in captured.out


def step_by_step(name, text):
    """The dynamic-CP scheduler as upstream's: dcpsched's step until no
    sample is left, then its alignment; so it returns the schedules upstream
    returns where dcpsched's whole-schedule call refuses one the runtime
    cannot run."""
    if name != "data_schedule.py":
        return text
    call = """        return dcpsched.schedule_dynamic_cp(
            sample_id_seqlens, self.dp_size * self.cp_size, self.max_seqlen_per_dp_cp_rank,
            min_cp_size=self.min_cp_size, vpp_group=self.microbatch_group_size_per_vp_stage,
            max_num_seqs=self.max_num_seqs,  # Megatron-LM PR #6479
        )
"""
    assert call in text
    return text.replace(call, """        remaining = sorted(sample_id_seqlens, key=lambda pair: pair[1], reverse=True)
        groups = []
        while remaining:
            _, remaining, _, ids = next_hdp_group_packing_aware(
                remaining, self.dp_size * self.cp_size, self.max_seqlen_per_dp_cp_rank,
                self.min_cp_size, max_num_seqs=self.max_num_seqs)
            groups.append(ids)
        vpp = self.microbatch_group_size_per_vp_stage
        return dcpsched.align_to_vpp_group(groups, vpp) if vpp and vpp > 1 else groups
""")


RUNTIME_REPORT = re.compile(r"^runtime cannot run: get_groups_and_subsamples: (.*)\n"
                            r"  upstream returns (.*)\n  its runtime: (.*)\n  dcpsched: (.*)\n"
                            r"  found in ", re.M)


def test_schedules_the_runtime_cannot_run_are_counted_apart_and_shrunk(tmp_path):
    """Needs the core's invariant 11: dcpsched refuses what the step-by-step
    "upstream" returns where its runtime has no such CP group."""
    checkout = copy_fixture(tmp_path, step_by_step)
    golden = tmp_path / "golden"
    status, output, counts = conformance("--megatron", checkout, "--cases", 200, "--no-corpora",
                                         "--write-golden", golden, cwd=tmp_path)
    assert status == 0 and counts is not None, output
    _, differ, _, _, runtime, _ = counts
    assert differ == 0 and runtime > 0, output
    reports = RUNTIME_REPORT.findall(output)
    assert len(reports) == 1, output
    line, schedule, where, refusal = reports[0]
    problem = parse_problem_line(line)
    assert runtime_groups.violations(eval(schedule), problem.total_gpus,  # pylint: disable=eval-used
                                     problem.min_cp_size)
    assert where.startswith("microbatch ") and "the lookup raises KeyError" in where
    assert refusal.startswith("UnschedulableError: " + runtime_groups.REFUSAL_PREFIX)
    # Shrunk: a few samples, and no sample can be dropped.
    assert len(problem.samples) <= 4, line
    with UpstreamWorker(upstream.load(checkout)) as worker:
        def cannot_run(candidate):
            return checks.run_checks(worker, candidate, 5.0, "get_groups_and_subsamples")[
                0].kind == checks.RUNTIME_CANNOT_RUN
        assert cannot_run(problem)
        for index in range(len(problem.samples)):
            fewer = problem.samples[:index] + problem.samples[index + 1:]
            assert not cannot_run(problem.with_samples(fewer)), (line, index)
    # The golden files say upstream broke invariant 11 there.
    expected = [json.loads(l)["expect"] for l in
                (golden / "packing_aware_schedule.jsonl").read_text().splitlines()]
    assert any(e.get("error", "").startswith("UpstreamInvariantViolation: invariant 11 "
                                             "(runtime groups): ") for e in expected)


def refusing_where(condition):
    """dcpsched.schedule_dynamic_cp, but raising the invariant-11 refusal
    (UnschedulableError) where condition(schedule, total_gpus) holds: a
    stand-in for the core's check, to test the tool's side of it."""
    real = dcpsched.schedule_dynamic_cp

    def schedule(samples, total_gpus, *args, **kwargs):
        # Upstream's schedule, unrefused: the stand-in alone decides.
        groups = real(samples, total_gpus, *args, runnable=False, **kwargs)
        if condition(groups, total_gpus):
            raise dcpsched.UnschedulableError(runtime_groups.REFUSAL_PREFIX + "(planted)")
        return groups
    return schedule


def uncreated_group(groups, total_gpus):
    """A CP size the runtime lacks: a power of two p with G > p >= 2^int(log2 G)."""
    widest = 1 << (total_gpus.bit_length() - 1)
    return widest < total_gpus and any(sum(ids[0] in r for r in mb) == widest
                                       for mb in groups for ids in mb if ids)


def test_the_tool_counts_a_confirmed_refusal_apart(tmp_path, monkeypatch):
    """With a stand-in for the core's refusal (no need for invariant 11 in
    the core): counted apart, shrunk, shown, exit 0."""
    checkout = copy_fixture(tmp_path, step_by_step)
    monkeypatch.setattr(dcpsched, "schedule_dynamic_cp", refusing_where(uncreated_group))
    out = io.StringIO()
    status = cli.run(["--megatron", str(checkout), "--cases", "150", "--no-corpora"], out=out)
    output = out.getvalue()
    counts = CLOSING.match(output.splitlines()[-1])
    assert status == 0 and counts, output
    assert int(counts.group(2)) == 0 and int(counts.group(5)) > 0, output
    (line, _, where, refusal), = RUNTIME_REPORT.findall(output)
    assert "(planted)" in refusal and "the lookup raises KeyError" in where
    assert len(parse_problem_line(line).samples) <= 3, line


def test_an_unconfirmed_refusal_differs(tmp_path, monkeypatch):
    """A refusal naming invariant 11 of schedules the runtime runs (here
    every schedule of two or more microbatches on 8 ranks) is a difference."""
    checkout = copy_fixture(tmp_path, step_by_step)
    monkeypatch.setattr(dcpsched, "schedule_dynamic_cp", refusing_where(
        lambda groups, total_gpus: total_gpus == 8 and len(groups) >= 2))
    out = io.StringIO()
    status = cli.run(["--megatron", str(checkout), "--cases", "150", "--no-corpora"], out=out)
    output = out.getvalue()
    assert status == 1, output
    assert re.search(r"^differ: get_groups_and_subsamples: upstream returns, dcpsched raises "
                     r"UnschedulableError naming invariant 11, which the runtime rule does not "
                     r"confirm: \d+ problems?\n  smallest, shrunk: G=8 ", output, re.M), output

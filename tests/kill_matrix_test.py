#!/usr/bin/python3
"""Checks mutation/kill_matrix.py on small synthetic kill matrices.

The minimal mutant set is checked against its definition, by brute force over
every set of tests and every set of mutants (Ammann, Delamaro, Offutt 2014): a
test set that kills every minimal mutant kills every killed mutant, no smaller
set of mutants has that property, and the minimal set holds no two mutants
killed by the same tests. The per-layer figures are recounted from the raw
matrix by set algebra, independently of the module's loops.

Run: /usr/bin/python3 tests/kill_matrix_test.py [SOURCE_DIR] (ctest kill_matrix).
"""

import itertools
import json
import os
import random
import sys
import unittest

SOURCE_DIR = os.path.abspath(
    sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(SOURCE_DIR, "mutation"))
import kill_matrix as km  # noqa: E402

LAYERS = ["unit", "properties", "corpus", "fuzz"]
TESTS = {"unit": ["u1", "u2"], "properties": ["p1", "p2"], "corpus": ["c1"], "fuzz": ["f1"]}


def random_rows(rng, count):
  rows = []
  for i in range(count):
    kills = {layer: sorted(t for t in tests if rng.random() < 0.3)
             for layer, tests in TESTS.items()}
    rows.append(km.MutantKills(id=f"m{i:02d}", file=rng.choice(["a.cc", "b.cc"]),
                               operator=rng.choice(["op1", "op2"]), kills=kills))
  return rows


def kills(test_set, mutant_set, sets):
  return all(sets[m] & test_set for m in mutant_set)


def brute_force_minimal_size(rows):
  """The size of the smallest set of mutants S such that every test set that
  kills all of S kills every killed mutant, found by trying every S."""
  sets = {r.id: r.killed_by(LAYERS) for r in rows}
  killed = [m for m, s in sets.items() if s]
  tests = sorted(set().union(*sets.values())) if sets else []
  test_sets = [set(c) for n in range(len(tests) + 1) for c in itertools.combinations(tests, n)]
  for size in range(len(killed) + 1):
    for candidate in itertools.combinations(killed, size):
      if all(kills(t, killed, sets) for t in test_sets if kills(t, candidate, sets)):
        return size, test_sets, sets, killed
  raise AssertionError("unreachable: the killed mutants themselves qualify")


class MinimalSetTest(unittest.TestCase):
  def test_hand_made_example(self):
    # m0 killed by {u1}, m1 by {u1, p1}, m2 by {u1} (same as m0), m3 by {p2},
    # m4 by nothing: m0 subsumes m1 and m2 is indistinguishable from m0.
    rows = [km.MutantKills("m0", "a.cc", "op", {"unit": ["u1"]}),
            km.MutantKills("m1", "a.cc", "op", {"unit": ["u1"], "properties": ["p1"]}),
            km.MutantKills("m2", "a.cc", "op", {"unit": ["u1"]}),
            km.MutantKills("m3", "a.cc", "op", {"properties": ["p2"]}),
            km.MutantKills("m4", "a.cc", "op", {"unit": []})]
    self.assertEqual(km.minimal_mutants(rows, LAYERS), ["m0", "m3"])
    self.assertEqual(km.subsumed_by(rows, LAYERS)["m1"], ["m0", "m2"])
    self.assertEqual(km.subsumed_by(rows, LAYERS)["m0"], [])

  def test_random_matrices_against_the_definition(self):
    rng = random.Random(23)
    for trial in range(60):
      rows = random_rows(rng, rng.randint(0, 8))
      with self.subTest(trial=trial):
        minimal = km.minimal_mutants(rows, LAYERS)
        size, test_sets, sets, killed = brute_force_minimal_size(rows)
        self.assertEqual(len(minimal), size)
        # Sufficient: a test set that kills every minimal mutant kills them all.
        for t in test_sets:
          if kills(t, minimal, sets):
            self.assertTrue(kills(t, killed, sets))
        # No two minimal mutants are indistinguishable, none is a survivor, and
        # each is its group's least id.
        self.assertEqual(len({frozenset(sets[m]) for m in minimal}), len(minimal))
        for m in minimal:
          self.assertTrue(sets[m])
          self.assertEqual(m, min(k for k in killed if sets[k] == sets[m]))

  def test_subsumption_matches_the_definition(self):
    rng = random.Random(5)
    for _ in range(30):
      rows = random_rows(rng, 7)
      sets = {r.id: r.killed_by(LAYERS) for r in rows}
      relation = km.subsumed_by(rows, LAYERS)
      for b in sets:
        if not sets[b]:
          self.assertNotIn(b, relation)
          continue
        # A strictly subsumes B: A killed, every test killing A kills B, and
        # some test kills B but not A.
        expected = sorted(a for a in sets if sets[a] and all(t in sets[b] for t in sets[a])
                          and any(t not in sets[a] for t in sets[b]))
        self.assertEqual(relation[b], expected)


class FiguresTest(unittest.TestCase):
  def recount(self, rows, layers):
    """The figures by set algebra over mutant ids."""
    ran = [l for l in LAYERS if l in layers]
    by = {l: {r.id for r in rows if r.kills.get(l)} for l in ran}
    unique = {l: len(by[l] - set().union(*(by[o] for o in ran if o != l))) for l in ran}
    free = set().union(*(by[l] for l in ran if l != "unit"))
    return {l: len(s) for l, s in by.items()}, unique, len(free), len(set().union(*by.values()))

  def test_random_matrices(self):
    rng = random.Random(11)
    for trial in range(40):
      rows = random_rows(rng, rng.randint(1, 12))
      layers = [l for l in LAYERS if rng.random() < 0.8] or ["unit"]
      for r in rows:  # a layer that did not run has no entry
        r.kills = {l: t for l, t in r.kills.items() if l in layers}
      with self.subTest(trial=trial, layers=layers):
        f = km.figures(rows, layers)
        alone, unique, free, any_ = self.recount(rows, layers)
        self.assertEqual(f.alone, alone)
        self.assertEqual(f.unique, unique)
        self.assertEqual(f.no_expectation, free)
        self.assertEqual(f.any, any_)
        self.assertEqual(f.mutants, len(rows))

  def test_equivalent_survivors_leave_the_count_and_stale_entries_stay(self):
    rows = [km.MutantKills("m0", "a.cc", "op", {"unit": ["u1"]}),
            km.MutantKills("m1", "a.cc", "op", {"unit": []}),
            km.MutantKills("m2", "b.cc", "op", {"unit": []})]
    equivalents = {"m0": "stale", "m1": "argued"}
    counted = km.non_equivalent(rows, equivalents, ["unit"])
    self.assertEqual([r.id for r in counted], ["m0", "m2"])
    analysis = km.analyse(rows, equivalents, ["unit"])
    self.assertEqual(analysis[("all", "all")][0].mutants, 2)
    self.assertEqual(analysis[("file", "a.cc")][0].alone["unit"], 1)
    self.assertEqual(analysis[("file", "b.cc")][0].any, 0)
    self.assertEqual(km.status_of(rows[1], equivalents, ["unit"]), "Ignored")
    self.assertEqual(km.status_of(rows[2], equivalents, ["unit"]), "Survived")

  def test_only_equivalent_mutants_give_empty_tables(self):
    rows = [km.MutantKills("m0", "a.cc", "op", {"unit": []})]
    text, analysis = km.markdown_tables(rows, {"m0": "argued"}, ["unit"])
    self.assertEqual(analysis[("all", "all")][0].mutants, 0)
    self.assertIn("| **all** | 0 | 0 | 0 | 0 | 0 |", text)

  def test_golden_kills_are_not_scored(self):
    rows = [km.MutantKills("m0", "a.cc", "op", {"unit": [], "golden": ["golden_test"]})]
    layers = ["unit", "golden"]
    self.assertEqual(km.figures(rows, layers).any, 0)
    self.assertEqual(km.figures(rows, layers).golden, 1)
    self.assertEqual(km.minimal_mutants(rows, layers), [])
    self.assertEqual(km.status_of(rows[0], {}, layers), "Survived")


class SamplingTest(unittest.TestCase):
  """run_mutants.py's stratified sample and parts."""

  def mutants(self, rng, count):
    return [{"id": f"x-{i:04d}", "file": rng.choice(["a.cc", "b.cc", "c.cc"]),
             "operator": rng.choice(["op1", "op2", "op3", "op4"])} for i in range(count)]

  def test_sample_is_reproducible_proportional_and_of_the_asked_size(self):
    import run_mutants
    rng = random.Random(3)
    for trial in range(20):
      mutants = self.mutants(rng, rng.randint(1, 300))
      size = rng.randint(0, len(mutants) + 5)
      with self.subTest(trial=trial):
        sample = run_mutants.stratified_sample(mutants, size, seed=trial)
        self.assertEqual(sample, run_mutants.stratified_sample(list(reversed(mutants)), size,
                                                               seed=trial))
        self.assertEqual(len(sample), min(size, len(mutants)))
        self.assertEqual(len({m["id"] for m in sample}), len(sample))
        strata = {}
        for m in mutants:
          strata.setdefault((m["file"], m["operator"]), []).append(m)
        for key, members in strata.items():
          drawn = sum((m["file"], m["operator"]) == key for m in sample)
          share = len(sample) * len(members) / len(mutants)
          self.assertLess(abs(drawn - share), 1, key)

  def test_parts_are_disjoint_cover_everything_and_differ_by_at_most_one(self):
    import run_mutants
    rng = random.Random(4)
    for trial in range(20):
      mutants = self.mutants(rng, rng.randint(0, 200))
      parts = rng.randint(1, 9)
      with self.subTest(trial=trial, parts=parts):
        chosen = [run_mutants.stratified_part(mutants, k, parts, seed=7)
                  for k in range(1, parts + 1)]
        ids = [m["id"] for part in chosen for m in part]
        self.assertEqual(sorted(ids), sorted(m["id"] for m in mutants))
        sizes = [len(part) for part in chosen]
        self.assertLessEqual(max(sizes) - min(sizes), 1)


class FailedTestsTest(unittest.TestCase):
  """run_mutants.py names the GoogleTest tests a program's log shows failing."""

  LOG = """Running main() from gmock_main.cc
[==========] Running 4 tests from 2 test suites.
[ RUN      ] CheckerTest.Passes
[       OK ] CheckerTest.Passes (0 ms)
[ RUN      ] CheckerTest.Fails
tests/checker_test.cc:10: Failure
[  FAILED  ] CheckerTest.Fails (1 ms)
[ RUN      ] Param/SizeTest.Fits/3
[  FAILED  ] Param/SizeTest.Fits/3, where GetParam() = 4 (0 ms)
[ RUN      ] CheckerTest.Hangs
"""

  def failed(self, text, how):
    import tempfile
    import run_mutants
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
      f.write(text)
    try:
      return run_mutants.Suite.failed_tests(f.name, how)
    finally:
      os.remove(f.name)

  def test_failures_and_the_test_running_at_a_crash_or_hang(self):
    self.assertEqual(self.failed(self.LOG, "failed"),
                     {"CheckerTest.Fails": "failed", "Param/SizeTest.Fits/3": "failed"})
    self.assertEqual(self.failed(self.LOG, "timeout"),
                     {"CheckerTest.Fails": "failed", "Param/SizeTest.Fits/3": "failed",
                      "CheckerTest.Hangs": "timeout"})
    summary = self.LOG.replace("[ RUN      ] CheckerTest.Hangs\n", "") + (
        "[==========] 3 tests ran.\n[  FAILED  ] 2 tests, listed below:\n"
        "[  FAILED  ] CheckerTest.Fails\n")
    self.assertEqual(self.failed(summary, "crashed"),
                     {"CheckerTest.Fails": "failed", "Param/SizeTest.Fits/3": "failed"})


class ElementsReportTest(unittest.TestCase):
  def test_report_has_the_schema_fields(self):
    rows = [km.MutantKills("m0", "core/a.cc", "relational", {"unit": ["S.T"], "fuzz": []},
                           how={"S.T": "crashed"}),
            km.MutantKills("m1", "core/a.cc", "relational", {"unit": [], "fuzz": ["fuzz_x"]},
                           how={"fuzz_x": "timeout"}),
            km.MutantKills("m2", "core/a.cc", "relational", {"unit": [], "fuzz": []})]
    mutants = {m: {"line": 3, "column": 5, "operator": "relational", "before": "<",
                   "after": "<=", "description": "core/a.cc:3:5: relational: < -> <="}
               for m in ("m0", "m1", "m2")}
    tests = {"S.T": ("tests/a_test.cc", "S.T"), "fuzz_x": ("fuzz/fuzz_x.cc", "fuzz_x")}
    report = km.elements_report(rows, mutants, {"core/a.cc": "int a;\n"}, tests,
                                {"m2": "why"}, ["unit", "fuzz"], {"seed": 1})
    json.dumps(report)  # serializable
    self.assertEqual(report["schemaVersion"], "2")
    self.assertEqual(set(report["thresholds"]), {"high", "low"})
    entries = report["files"]["core/a.cc"]["mutants"]
    self.assertEqual([e["status"] for e in entries], ["Killed", "Timeout", "Ignored"])
    self.assertEqual(entries[0]["killedBy"], ["S.T"])
    self.assertEqual(entries[0]["location"], {"start": {"line": 3, "column": 5},
                                              "end": {"line": 3, "column": 6}})
    for e in entries:
      self.assertLessEqual({"id", "mutatorName", "location", "status"}, set(e))
    ids = {t["id"] for f in report["testFiles"].values() for t in f["tests"]}
    self.assertLessEqual({t for e in entries for t in e["killedBy"]}, ids)


class TimeToKillTest(unittest.TestCase):
  """The time-to-kill figures and the four lines a report ends with."""

  def test_counts_within_limits_median_and_survivors(self):
    times = {"a": 0.5, "b": 1.0, "c": 7.0, "d": 61.0, "e": None, "f": 3.0, "x": None}
    ran, within, killed, median, alive = km.time_to_kill(times, {"a", "b", "c", "d", "e", "f"})
    self.assertEqual(ran, 6)  # x is not counted (equivalent)
    self.assertEqual(within, {1: 2, 10: 4, 60: 4})
    self.assertEqual(killed, 5)
    self.assertEqual(median, 3.0)
    self.assertEqual(alive, ["e"])
    self.assertEqual(km.median_time({"a": 1.0, "b": 4.0}, {"a", "b"}), 2.5)
    self.assertIsNone(km.median_time({"a": None}, {"a"}))

  PREFIXES = ["properties alone: ", "fuzzers alone, seed corpora, 7 s per target: ",
              "fuzzers alone, empty corpus, 30 s per target: ",
              "properties + corpus + fuzz (no hand-computed expectations): "]

  def test_end_lines_say_not_run_and_never_make_up_a_figure(self):
    lines = km.end_lines(9, {"properties": 4, "corpus": 5, "fuzz": 6, "fuzz-empty": 2}, 8, 7,
                         30, 12.25)
    self.assertEqual(lines, [
        "properties alone: 4 of 9 non-equivalent mutants killed",
        "fuzzers alone, seed corpora, 7 s per target: 6 of 9",
        "fuzzers alone, empty corpus, 30 s per target: 2 of 9, median time to kill 12.2 s",
        "properties + corpus + fuzz (no hand-computed expectations): 8 of 9"])
    lines = km.end_lines(9, {"unit": 9, "corpus": None}, None, 7, 30, None)
    for line, prefix in zip(lines, self.PREFIXES):
      self.assertTrue(line.startswith(prefix), line)
      self.assertNotRegex(line, r"\d+ of 9")
    self.assertEqual(lines[0], "properties alone: not run")
    self.assertEqual(lines[2], "fuzzers alone, empty corpus, 30 s per target: not run")
    self.assertIn("not run (properties, fuzz did not run)", lines[3])
    lines = km.end_lines(9, {"properties": 3, "fuzz": None, "corpus": None,
                             "fuzz-empty": None}, None, 7, 30, 4.0)
    self.assertIn("not measured alone", lines[1])
    self.assertIn("not measured alone", lines[2])
    self.assertIn("not measured", lines[3])

  def test_matrix_summary_ends_with_the_four_lines(self):
    layers = ["properties", "corpus", "fuzz", "fuzz-empty"]
    rows = [km.MutantKills("m0", "a.cc", "op", {"properties": ["p"], "corpus": [], "fuzz": [],
                                                "fuzz-empty": ["f:empty"]}),
            km.MutantKills("m1", "a.cc", "op", {"properties": [], "corpus": ["c"],
                                                "fuzz": ["f"], "fuzz-empty": []}),
            km.MutantKills("m2", "a.cc", "op", {l: [] for l in layers})]
    lines = km.summary_lines(rows, {"m2": "argued"}, layers, 7, 30,
                             {"fuzz": {"m0": None, "m1": 2.0, "m2": None},
                              "fuzz-empty": {"m0": 5.5, "m1": None, "m2": None}})
    self.assertEqual(lines[-4:], [
        "properties alone: 1 of 2 non-equivalent mutants killed",
        "fuzzers alone, seed corpora, 7 s per target: 1 of 2",
        "fuzzers alone, empty corpus, 30 s per target: 1 of 2, median time to kill 5.5 s",
        "properties + corpus + fuzz (no hand-computed expectations): 2 of 2"])


class RunnerTimeToKillTest(unittest.TestCase):
  """run_mutants.py's fuzz layers on stand-in fuzz targets (shell scripts), and
  the report's time-to-kill table and end lines."""

  TARGET = """#!/bin/sh
# A stand-in libFuzzer target: runs "$SECONDS_TO_RUN" s, prints libFuzzer's
# final stats, and aborts when its name is in $KILLERS.
echo "$0 $*" >> "$CALLS"
sleep "$SECONDS_TO_RUN"
echo "stat::number_of_executed_units: 123"
case " $KILLERS " in *" $(basename "$0") "*) kill -ABRT $$ ;; esac
exit 0
"""

  def setUp(self):
    import tempfile
    import run_mutants
    self.rm = run_mutants
    self.dir = tempfile.mkdtemp()
    self.addCleanup(__import__("shutil").rmtree, self.dir)
    for name in ("t1", "t2", "t3"):
      path = os.path.join(self.dir, name)
      with open(path, "w") as f:
        f.write(self.TARGET)
      os.chmod(path, 0o755)
    suite = run_mutants.Suite.__new__(run_mutants.Suite)
    suite.fuzz_dir = suite.gcc_dir = self.dir
    suite.seed, suite.fuzz_seconds, suite.fuzz_empty_seconds = 5, 1, 2
    suite.lock = __import__("threading").Lock()
    suite.fuzz_targets = lambda file: ["t1", "t2", "t3"]
    suite.property_cases = 1
    self.suite = suite
    os.environ.update(CALLS=os.path.join(self.dir, "calls"), SECONDS_TO_RUN="0.2",
                      KILLERS="t2 t3")

  def calls(self):
    with open(os.environ["CALLS"]) as f:
      return f.read().splitlines()

  def test_empty_corpus_layer_stops_at_the_first_kill(self):
    scratch = os.path.join(self.dir, "scratch")
    os.makedirs(scratch)
    how, target, total, ttk, kills = self.suite.run_fuzz("fuzz-empty", "m", "core/x.cc",
                                                         scratch, stop=True)
    self.assertEqual((how, target, kills), ("crashed", "t2", {"t2": "crashed"}))
    calls = self.calls()
    self.assertEqual(len(calls), 2)  # t3 never ran
    self.assertIn("-max_total_time=2", calls[0])
    self.assertIn("-seed=5", calls[0])
    self.assertNotIn("corpus", calls[0])  # no committed corpus: an empty directory
    self.assertEqual(ttk["target"], "t2")
    self.assertEqual(ttk["executions"], 123)
    # From the layer's start: all of t1, then t2 up to its kill.
    self.assertGreaterEqual(ttk["seconds"], 0.4)
    self.assertGreaterEqual(ttk["seconds"], ttk["target_seconds"])
    self.assertLess(ttk["seconds"], total + 0.01)
    # The matrix names its tests apart from the seed-corpus layer's.
    kills, _, ttk = self.suite.matrix_layer("fuzz-empty", "m", "core/x.cc", scratch)
    self.assertEqual(kills, {"t2:empty": "crashed"})

  def test_seed_corpus_layer_runs_every_target_in_the_matrix(self):
    scratch = os.path.join(self.dir, "scratch")
    os.makedirs(scratch)
    kills, total, ttk = self.suite.matrix_layer("fuzz", "m", "core/x.cc", scratch)
    self.assertEqual(kills, {"t2": "crashed", "t3": "crashed"})
    calls = self.calls()
    self.assertEqual(len(calls), 3)
    self.assertIn("-max_total_time=1", calls[0])
    self.assertIn(os.path.join("corpus", "t1"), calls[0])
    self.assertEqual(ttk["target"], "t2")
    os.environ["KILLERS"] = ""
    kills, _, ttk = self.suite.matrix_layer("fuzz", "m", "core/x.cc", scratch)
    self.assertEqual((kills, ttk), ({}, None))

  def report(self, matrix_run, layers):
    import tempfile
    rm = self.rm
    mutants = [{"id": f"m{i}", "file": "core/a.cc", "line": i, "operator": "op",
                "before": "<", "after": "<="} for i in range(4)]
    ttk = lambda s: {"seconds": s, "target": "t1", "target_seconds": s, "executions": 9}
    outcomes = {
        "m0": rm.Outcome("m0", "properties", "failed", "p", 1.0, "",
                         {"fuzz": ttk(0.5), "fuzz-empty": ttk(3.0)}),
        "m1": rm.Outcome("m1", "fuzz", "crashed", "t1", 1.0, "",
                         {"fuzz": ttk(2.0), "fuzz-empty": None}),
        "m2": rm.Outcome("m2", "fuzz-empty", "crashed", "t1", 1.0, "",
                         {"fuzz": None, "fuzz-empty": ttk(40.0)}),
        "m3": rm.Outcome("m3", "survived", "survived", "", 1.0, "",
                         {"fuzz": None, "fuzz-empty": None}),
    }
    context = {"arguments": "x", "core": "c", "suite": "s", "commit": "h", "date": "d",
               "cores": 2, "jobs": 1, "seed": 1, "property_cases": 10, "fuzz_seconds": 7,
               "fuzz_empty_seconds": 30, "layers": layers, "min_timeout": 20, "selection": "x",
               "wall": "w", "builds": "b", "mutant_seconds": 4.0, "cached": 0}
    matrix = None
    if matrix_run:
      rows = [km.MutantKills("m0", "core/a.cc", "op", {"properties": ["p"], "corpus": [],
                                                       "fuzz": ["t1"],
                                                       "fuzz-empty": ["t1:empty"]}),
              km.MutantKills("m1", "core/a.cc", "op", {"properties": [], "corpus": [],
                                                       "fuzz": ["t1"], "fuzz-empty": []}),
              km.MutantKills("m2", "core/a.cc", "op", {"properties": [], "corpus": [],
                                                       "fuzz": [],
                                                       "fuzz-empty": ["t1:empty"]}),
              km.MutantKills("m3", "core/a.cc", "op", {l: [] for l in layers})]
      matrix = {"rows": rows, "tests": {}, "layer_seconds": {l: 1.0 for l in layers}}
    with tempfile.NamedTemporaryFile("r", suffix=".md", dir=self.dir, delete=False) as f:
      line, closing = rm.write_report(f.name, context, mutants, outcomes, {}, {},
                                      matrix=matrix)
      text = f.read()
    return text, closing

  def test_report_has_the_table_and_ends_with_the_four_lines(self):
    layers = ["properties", "corpus", "fuzz", "fuzz-empty"]
    text, closing = self.report(True, layers)
    lines = text.rstrip("\n").splitlines()
    self.assertEqual(lines[-4:], [
        "properties alone: 1 of 4 non-equivalent mutants killed",
        "fuzzers alone, seed corpora, 7 s per target: 2 of 4",
        "fuzzers alone, empty corpus, 30 s per target: 2 of 4, median time to kill 21.5 s",
        "properties + corpus + fuzz (no hand-computed expectations): 2 of 4"])
    self.assertEqual(closing[-4:], lines[-4:])
    self.assertIn("| fuzz | committed corpora | 7 | 4 | 1 | 2 | 2 | 2 | 1.2 s | 2 |", text)
    self.assertIn("| fuzz-empty | empty corpus | 30 | 4 | 0 | 1 | 2 | 2 | 21.5 s | 2 |", text)
    self.assertIn("Survivors of fuzz-empty (2): `m1`", text)
    self.assertIn("fuzz-empty 30 s per fuzz target, from an empty corpus", text)
    # The JSON report keeps each fuzz layer's time to kill in its config.
    import tempfile
    rm = self.rm
    rows = [km.MutantKills("m0", "core/checker.cc", "op", {"fuzz": ["t1"], "fuzz-empty": []})]
    mutant = {"id": "m0", "file": "core/checker.cc", "line": 1, "column": 1, "operator": "op",
              "before": "<", "after": "<=", "description": "d"}
    context = {"arguments": "", "core": "c", "suite": "s", "commit": "h", "date": "d",
               "seed": 1, "layers": ["fuzz", "fuzz-empty"], "selection": "x",
               "min_timeout": 20, "fuzz_seconds": 7, "fuzz_empty_seconds": 30}
    matrix = {"rows": rows, "tests": {"t1": ("fuzz/t1.cc", "fuzz"),
                                      "t1:empty": ("fuzz/t1.cc", "fuzz-empty")},
              "ttk": {"m0": {"fuzz": {"seconds": 1.5, "target": "t1", "target_seconds": 1.5,
                                      "executions": 3}, "fuzz-empty": None}}}
    with tempfile.NamedTemporaryFile("r", suffix=".json", dir=self.dir, delete=False) as f:
      rm.write_elements_json(f.name, context, [mutant], matrix, {})
      report = json.load(f)
    self.assertEqual(report["config"]["fuzz_empty_seconds"], 30)
    self.assertEqual(report["config"]["time_to_kill"]["layers"],
                     {"fuzz": {"m0": matrix["ttk"]["m0"]["fuzz"]}, "fuzz-empty": {"m0": None}})
    # A first-kill run: properties ran first, on every mutant; the others not alone.
    text, _ = self.report(False, layers)
    lines = text.rstrip("\n").splitlines()
    self.assertEqual(lines[-4], "properties alone: 1 of 4 non-equivalent mutants killed")
    self.assertIn("not measured alone", lines[-3])
    self.assertEqual(lines[-1], "properties + corpus + fuzz (no hand-computed expectations): "
                     "2 of 4")
    # Without the fuzz layers: no table, their lines say not run, the header no setting.
    text, _ = self.report(False, ["unit", "properties"])
    lines = text.rstrip("\n").splitlines()
    self.assertNotIn("Time to kill", text)
    self.assertNotIn("per fuzz target", text)
    self.assertEqual(lines[-3], "fuzzers alone, seed corpora, 7 s per target: not run")
    self.assertEqual(lines[-2], "fuzzers alone, empty corpus, 30 s per target: not run")


class ExhaustiveLayerTest(unittest.TestCase):
  """The exhaustive layer (tests/exhaustive_check.cc) in run_mutants.py, on a
  stand-in program, and in the kill matrix's figures."""

  PROGRAM = """#!/bin/sh
# A stand-in exhaustive_check: records its arguments, prints GoogleTest's lines
# for its three tests, and fails the legacy one when $FAIL_LEGACY is set.
echo "$0 $*" >> "$CALLS"
echo "[ RUN      ] PackingAwareExhaustive.EveryProblemOfTheSets"
echo "[       OK ] PackingAwareExhaustive.EveryProblemOfTheSets (1 ms)"
echo "[ RUN      ] LegacyExhaustive.EveryProblemOfTheSets"
if [ -n "$FAIL_LEGACY" ]; then
  echo "FAILED: legacy matches oracle: ..."
  echo "  problem: G=6 mslpr=4 min_cp=1 vpp=none samples=0:9,1:1,2:1"
  echo "[  FAILED  ] LegacyExhaustive.EveryProblemOfTheSets (1 ms)"
  exit 1
fi
echo "[       OK ] LegacyExhaustive.EveryProblemOfTheSets (1 ms)"
exit 0
"""

  def setUp(self):
    import tempfile
    import threading
    import run_mutants
    self.rm = run_mutants
    self.dir = tempfile.mkdtemp()
    self.addCleanup(__import__("shutil").rmtree, self.dir)
    path = os.path.join(self.dir, "exhaustive_check")
    with open(path, "w") as f:
      f.write(self.PROGRAM)
    os.chmod(path, 0o755)
    suite = run_mutants.Suite.__new__(run_mutants.Suite)
    suite.gcc_dir = self.dir
    suite.programs = {"exhaustive": ["exhaustive_check"]}
    suite.reached, suite.skip_unreached = None, True
    suite.baseline, suite.kills, suite.min_timeout = {}, {}, 30
    suite.seed, suite.property_cases = 1, 1
    suite.lock = threading.Lock()
    self.suite = suite
    self.scratch = os.path.join(self.dir, "scratch")
    os.makedirs(self.scratch)
    os.environ.update(CALLS=os.path.join(self.dir, "calls"), FAIL_LEGACY="1")
    self.addCleanup(os.environ.pop, "FAIL_LEGACY", None)

  def calls(self):
    with open(os.environ["CALLS"]) as f:
      return f.read().splitlines()

  def test_the_layer_runs_exhaustive_check_at_its_sets(self):
    self.assertEqual(self.rm.layer_programs()["exhaustive"], ["exhaustive_check"])
    self.assertTrue(os.path.exists(os.path.join(SOURCE_DIR, "tests", "exhaustive_check.cc")))
    self.assertIn("exhaustive", self.rm.LAYERS)
    self.assertNotIn("exhaustive", self.rm.DEFAULT_LAYERS)  # asked for by name only
    self.assertLess(self.rm.LAYERS.index("exhaustive"), self.rm.LAYERS.index("golden"))
    self.assertIn("exhaustive", self.rm.PRE_GOLDEN)
    self.assertIn("exhaustive", km.SCORING_LAYERS)
    self.assertNotIn("exhaustive", km.NO_EXPECTATION)

  def test_a_kill_is_charged_to_the_failing_scheduler_test(self):
    how, program, _, ttk = self.suite.run_layer("exhaustive", "m", "core/legacy.cc", self.scratch)
    self.assertEqual((how, program, ttk), ("failed", "exhaustive_check", None))
    self.assertIn(f"--sets={self.rm.EXHAUSTIVE_SETS}", self.calls()[0])
    kills, _, ttk = self.suite.matrix_layer("exhaustive", "m", "core/legacy.cc", self.scratch)
    self.assertEqual((kills, ttk), ({"LegacyExhaustive.EveryProblemOfTheSets": "failed"}, None))
    self.assertIn(f"--sets={self.rm.EXHAUSTIVE_SETS}", self.calls()[1])
    del os.environ["FAIL_LEGACY"]
    self.assertEqual(self.suite.matrix_layer("exhaustive", "m", "core/legacy.cc",
                                             self.scratch)[0], {})
    self.assertEqual(self.suite.run_layer("exhaustive", "m", "core/legacy.cc",
                                          self.scratch)[0], "survived")

  def test_the_cache_key_names_the_sets(self):
    import argparse
    args = argparse.Namespace(min_timeout=5.0, seed=1, property_cases=100, fuzz_seconds=10,
                              fuzz_empty_seconds=60)
    key = self.rm.layer_key("exhaustive", "suite", args)
    self.assertEqual(key, f"suite:sets={self.rm.EXHAUSTIVE_SETS}:timeout=5")
    self.assertNotEqual(key, self.rm.layer_key("unit", "suite", args))

  def test_its_kills_alone_and_unique_are_counted(self):
    layers = ["unit", "properties", "exhaustive"]
    rows = [km.MutantKills("m0", "a.cc", "op", {"unit": [], "properties": [],
                                                 "exhaustive": ["E.x"]}),
            km.MutantKills("m1", "a.cc", "op", {"unit": ["u1"], "properties": [],
                                                 "exhaustive": ["E.x"]}),
            km.MutantKills("m2", "a.cc", "op", {"unit": [], "properties": ["p1"],
                                                 "exhaustive": []})]
    f = km.figures(rows, layers)
    self.assertEqual((f.alone["exhaustive"], f.unique["exhaustive"]), (2, 1))
    self.assertEqual(f.any, 3)
    text, _ = km.markdown_tables(rows, {}, layers)
    self.assertIn("| exhaustive alone |", "\n".join(text))
    self.assertIn("| exhaustive unique |", "\n".join(text))


if __name__ == "__main__":
  unittest.main(verbosity=2)

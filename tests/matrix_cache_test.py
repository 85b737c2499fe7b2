#!/usr/bin/python3
"""Checks mutation/matrix_cache.py, and a report made from merged caches alone.

MatrixCacheTest: rows and listings survive a reload, a row stands only under
its key, a later row replaces an earlier one, merge() takes another file's
rows once and refuses a file of another core or one that is not a cache.

CacheOnlyReportTest: mutation/run_mutants.py --matrix --merge-cache ...
--cache-only, on a build root that holds no build, only planted schemata
(five mutants of core/checker.cc) and two shards' caches: the report covers
exactly the mutants with a row for every layer, its selection line says how
many were left out, its four end lines count the merged rows, and nothing
is built.

Run: /usr/bin/python3 tests/matrix_cache_test.py [SOURCE_DIR] (ctest matrix_cache).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.path.abspath(
    sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(SOURCE_DIR, "mutation"))
import matrix_cache  # noqa: E402

CORE = "0123456789abcdef"


class MatrixCacheTest(unittest.TestCase):
  def setUp(self):
    self.directory = tempfile.TemporaryDirectory()
    self.root = self.directory.name

  def tearDown(self):
    self.directory.cleanup()

  def test_rows_and_listings_survive_a_reload_under_their_key_only(self):
    cache = matrix_cache.MatrixCache(self.root, CORE)
    cache.add("m1", "unit", "k1", {"A.b": "failed"}, 1.234)
    cache.add("m1", "fuzz", "k2", {}, 10.0, ttk=None)
    cache.add_listing("unit", "k1", {"A.b": "tests/a_test.cc", "A.c": "tests/a_test.cc"})
    again = matrix_cache.MatrixCache(self.root, CORE)
    self.assertEqual(again.get("m1", "unit", "k1")["kills"], {"A.b": "failed"})
    self.assertEqual(again.get("m1", "unit", "k1")["seconds"], 1.23)
    self.assertIsNone(again.get("m1", "unit", "other key"))
    self.assertIsNone(again.get("m2", "unit", "k1"))
    # A fuzz row carries its time to kill, even when there is none.
    self.assertIn("ttk", again.get("m1", "fuzz", "k2"))
    self.assertNotIn("ttk", again.get("m1", "unit", "k1"))
    self.assertEqual(again.listing("unit", "k1"),
                     {"A.b": "tests/a_test.cc", "A.c": "tests/a_test.cc"})
    self.assertIsNone(again.listing("unit", "k2"))

  def test_a_later_row_replaces_an_earlier_one_and_rows_of_other_keys_stay(self):
    cache = matrix_cache.MatrixCache(self.root, CORE)
    cache.add("m1", "unit", "old", {"A.b": "failed"}, 1)
    cache.add("m1", "unit", "new", {}, 1)
    cache.add("m1", "unit", "new", {"A.c": "crashed"}, 2)
    again = matrix_cache.MatrixCache(self.root, CORE)
    self.assertEqual(again.get("m1", "unit", "new")["kills"], {"A.c": "crashed"})
    self.assertEqual(again.get("m1", "unit", "old")["kills"], {"A.b": "failed"})

  def test_an_unchanged_listing_is_not_written_twice(self):
    cache = matrix_cache.MatrixCache(self.root, CORE)
    cache.add_listing("unit", "k", {"A.b": "tests/a_test.cc"})
    cache.add_listing("unit", "k", {"A.b": "tests/a_test.cc"})
    with open(cache.path) as f:
      self.assertEqual(len(f.readlines()), 1)

  def test_fresh_starts_empty(self):
    matrix_cache.MatrixCache(self.root, CORE).add("m1", "unit", "k", {}, 1)
    self.assertIsNone(matrix_cache.MatrixCache(self.root, CORE, fresh=True).get("m1", "unit", "k"))
    self.assertIsNone(matrix_cache.MatrixCache(self.root, CORE).get("m1", "unit", "k"))

  def shard(self, name, rows, core=CORE):
    root = os.path.join(self.root, name)
    cache = matrix_cache.MatrixCache(root, core)
    for row in rows:
      cache.add(*row)
    cache.add_listing("unit", "k", {"A.b": "tests/a_test.cc"})
    return cache.path

  def test_merge_takes_each_row_once_and_keeps_it(self):
    first = self.shard("s1", [("m1", "unit", "k", {"A.b": "failed"}, 1)])
    second = self.shard("s2", [("m2", "unit", "k", {}, 2), ("m3", "unit", "k", {}, 3)])
    cache = matrix_cache.MatrixCache(os.path.join(self.root, "report"), CORE)
    self.assertEqual(cache.merge(first), (1, 0))
    self.assertEqual(cache.merge(second), (2, 0))
    self.assertEqual(cache.merge(second), (0, 0))
    self.assertEqual(cache.merge(cache.path), (0, 0))
    again = matrix_cache.MatrixCache(os.path.join(self.root, "report"), CORE)
    self.assertEqual(sorted(k[0] for k in again.rows), ["m1", "m2", "m3"])
    self.assertEqual(again.listing("unit", "k"), {"A.b": "tests/a_test.cc"})

  def test_merge_counts_a_row_that_differs_and_the_merged_one_stands(self):
    cache = matrix_cache.MatrixCache(os.path.join(self.root, "report"), CORE)
    cache.add("m1", "fuzz", "k", {}, 10, ttk=None)
    flaky = self.shard("s1", [("m1", "fuzz", "k", {"fuzz_legacy": "failed"}, 4, {"seconds": 4})])
    self.assertEqual(cache.merge(flaky), (1, 1))
    self.assertEqual(cache.get("m1", "fuzz", "k")["kills"], {"fuzz_legacy": "failed"})

  def test_merge_refuses_another_cores_file_and_a_file_that_is_no_cache(self):
    cache = matrix_cache.MatrixCache(os.path.join(self.root, "report"), CORE)
    other = self.shard("s1", [("m1", "unit", "k", {}, 1)], core="fedcba9876543210")
    with self.assertRaisesRegex(ValueError, "core fedcba9876543210, not of this core " + CORE):
      cache.merge(other)
    stray = os.path.join(self.root, "results.json")
    with open(stray, "w") as f:
      f.write("{}\n")
    with self.assertRaisesRegex(ValueError, "not a kill-matrix cache"):
      cache.merge(stray)
    self.assertEqual(cache.rows, {})

  def test_a_damaged_line_is_named(self):
    path = self.shard("s1", [("m1", "unit", "k", {}, 1)])
    with open(path, "a") as f:
      f.write('{"id": "m2"}\n')
    cache = matrix_cache.MatrixCache(os.path.join(self.root, "report"), CORE)
    with self.assertRaisesRegex(ValueError, r"matrix.jsonl:3: neither a kill-matrix row"):
      cache.merge(path)
    with open(path, "a") as f:
      f.write("not json\n")
    with self.assertRaisesRegex(ValueError, r"matrix.jsonl:3:|matrix.jsonl:4: not a JSON"):
      matrix_cache.MatrixCache(os.path.join(self.root, "s1"), CORE)


class CacheOnlyReportTest(unittest.TestCase):
  """run_mutants.py --cache-only over planted shard caches, with the nightly's layers."""

  LAYERS = ["unit", "properties", "corpus", "fuzz", "fuzz-empty"]
  SETTINGS = ["--seed", "1", "--fuzz-seconds", "10", "--fuzz-empty-seconds", "10"]

  @classmethod
  def setUpClass(cls):
    import run_mutants
    cls.runner = run_mutants
    cls.core = run_mutants.core_hash()
    cls.suite = run_mutants.suite_hash()
    settings = argparse.Namespace(seed=1, property_cases=1000, fuzz_seconds=10,
                                  fuzz_empty_seconds=10, min_timeout=5.0)
    cls.keys = {l: run_mutants.layer_key(l, cls.suite, settings) for l in cls.LAYERS}

  def setUp(self):
    self.directory = tempfile.TemporaryDirectory()
    self.root = os.path.join(self.directory.name, "build-root")
    schemata = os.path.join(self.root, "schemata")
    os.makedirs(schemata)
    # Planted schemata: generate() sees its stamp and leaves them.
    with open(os.path.join(schemata, "core_hash"), "w") as f:
      f.write(self.runner.schemata_hash())
    mutants = [{"id": f"checker-planted{i}", "file": "core/checker.cc", "line": 1 + i,
                "column": 1, "operator": "relational", "before": "<", "after": "<=",
                "number": i, "description": f"planted {i}"} for i in range(5)]
    with open(os.path.join(schemata, "mutants.json"), "w") as f:
      json.dump({"mutants": mutants, "dropped_not_compiling": {}, "files": []}, f)

  def tearDown(self):
    self.directory.cleanup()

  def shard(self, name, kills, missing=()):
    """A shard's cache: for each planted mutant number, layer -> its kills
    (a layer not named killed nothing), every layer but those in `missing`."""
    cache = matrix_cache.MatrixCache(os.path.join(self.directory.name, name), self.core)
    for number, by_layer in kills.items():
      for layer in self.LAYERS:
        if (number, layer) in missing:
          continue
        killed = by_layer.get(layer, {})
        ttk = {"seconds": float(number), "target": next(iter(killed)), "target_seconds": 1.0,
               "executions": 100} if killed and layer in ("fuzz", "fuzz-empty") else None
        cache.add(f"checker-planted{number}", layer, self.keys[layer], killed, 1.5, ttk)
    # A layer's tests depend on the suite alone: listings are keyed by its hash.
    for layer, tests in (("unit", {"Unit.a": "tests/checker_test.cc",
                                   "Unit.b": "tests/checker_test.cc"}),
                         ("properties", {"Prop.a": "properties/schedule_properties.cc"}),
                         ("corpus", {"fuzz_legacy_replay": "fuzz/fuzz_legacy.cc"}),
                         ("fuzz", {"fuzz_legacy": "fuzz/fuzz_legacy.cc"}),
                         ("fuzz-empty", {"fuzz_legacy:empty": "fuzz/fuzz_legacy.cc"})):
      cache.add_listing(layer, self.suite, tests)
    return cache.path

  def run_report(self, *caches, settings=SETTINGS):
    out = os.path.join(self.directory.name, "report.md")
    result = subprocess.run(
        [sys.executable, os.path.join(SOURCE_DIR, "mutation", "run_mutants.py"), "--matrix",
         "--layers", ",".join(self.LAYERS), *settings, "--build-root", self.root,
         "--out", out, "--merge-cache", *caches, "--cache-only"],
        capture_output=True, text=True, timeout=300)
    return result, out

  def test_the_report_covers_the_mutants_with_every_row_and_builds_nothing(self):
    # 0: a unit test alone kills it; 1: a property and the empty-corpus fuzzer
    # (at 1 s); 2: corpus replay and the seed-corpus fuzzer; 3: nothing; 4:
    # its fuzz-empty row is missing (a shard that did not finish).
    first = self.shard("shard-1", {0: {"unit": {"Unit.a": "failed"}},
                                   1: {"properties": {"Prop.a": "failed"},
                                       "fuzz-empty": {"fuzz_legacy:empty": "crashed"}}})
    second = self.shard("shard-2", {2: {"corpus": {"fuzz_legacy_replay": "failed"},
                                        "fuzz": {"fuzz_legacy": "failed"}},
                                    3: {}, 4: {"unit": {"Unit.b": "failed"}}},
                        missing={(4, "fuzz-empty")})
    result, out = self.run_report(first, second)
    self.assertEqual(result.returncode, 0, result.stderr + result.stdout)
    with open(out) as f:
      report = f.read()
    self.assertIn("4 of these 5 generated have a cached row for every layer and make this "
                  "report (--cache-only; 1 left out)", report)
    self.assertIn(f"after merging 2 cache files ({first}, {second})", report)
    self.assertIn("no build, no control run, no mutant ran", report)
    self.assertNotIn("checker-planted4", report)
    self.assertIn("`checker-planted3`", report)  # the survivor is listed
    end = result.stdout.splitlines()[-4:]
    self.assertEqual(end, [
        "properties alone: 1 of 4 non-equivalent mutants killed",
        "fuzzers alone, seed corpora, 10 s per target: 1 of 4",
        "fuzzers alone, empty corpus, 10 s per target: 1 of 4, median time to kill 1.0 s",
        "properties + corpus + fuzz (no hand-computed expectations): 2 of 4"])
    self.assertIn("mutation score: 3 of 4 non-equivalent mutants killed", result.stdout)
    # The JSON report lists every test of the listings, killing or not.
    with open(os.path.splitext(out)[0] + ".json") as f:
      elements = json.load(f)
    names = {t["name"] for tf in elements["testFiles"].values() for t in tf["tests"]}
    self.assertIn("unit: Unit.b", names)
    self.assertEqual(len(names), 6)
    for build in ("gcc", "fuzz"):
      self.assertFalse(os.path.exists(os.path.join(self.root, build)), build)

  def test_rows_of_other_settings_are_not_used(self):
    # The shards ran the fuzzers 10 s per target; a report asked for 60 s
    # finds no row to stand on.
    path = self.shard("shard-1", {0: {"unit": {"Unit.a": "failed"}}})
    result, _ = self.run_report(path, settings=["--fuzz-seconds", "60",
                                                "--fuzz-empty-seconds", "10"])
    self.assertNotEqual(result.returncode, 0)
    self.assertIn("none of the 5 selected mutants has a cached row for every layer",
                  result.stderr)
    self.assertIn("--merge-cache", result.stderr)

  def test_a_cache_of_another_core_is_refused(self):
    other = matrix_cache.MatrixCache(os.path.join(self.directory.name, "old"), "0" * 16)
    other.add("checker-planted0", "unit", self.keys["unit"], {}, 1)
    result, _ = self.run_report(other.path)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn(f"not of this core {self.core}", result.stderr)


if __name__ == "__main__":
  unittest.main()

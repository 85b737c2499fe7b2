#!/usr/bin/python3
"""Checks mutation/schemata/runtime.*, the run-time switch of a schemata build.

A small program is compiled against the runtime with a planted table of eight
mutants (ids m0..m7): a relational point (m0..m4, its five other operators),
a statement point (m5) and a literal point it never evaluates (m6, m7).

ReachedRecordTest: with DCPSCHED_MUTANT_REACHED=<dir> a run writes
<dir>/reached-<pid>.txt holding exactly the ids of the points it evaluated;
a child it spawns writes its own file; without the variable nothing is
written; a record that cannot be written fails the run (a lost record would
let mutation/run_mutants.py skip a program that can kill); the live mutant
acts as before while the record is taken. run_mutants.read_reached unions a
program's files, and Suite.reaches skips only what the record rules out, and
nothing under --run-unreached.

Run: /usr/bin/python3 tests/schemata_runtime_test.py [SOURCE_DIR] (ctest schemata_runtime).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.path.abspath(
    sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(SOURCE_DIR, "mutation"))
import run_mutants  # noqa: E402

PROGRAM = r"""
#include <spawn.h>
#include <sys/wait.h>
#include <cstdio>
#include <cstring>

#include "mutation/schemata/runtime.h"

extern const char* const kDcpschedMutantIds[] = {"m0", "m1", "m2", "m3", "m4",
                                                 "m5", "m6", "m7", nullptr};
extern const int kDcpschedMutantCount = 8;
extern char** environ;

namespace m = ::dcpsched_mutation;

int main(int argc, char** argv) {
  // A relational point (m0: < becomes <=, ..., m4: < becomes !=), then a
  // statement point (m5), then a literal point (m6, m7) in a branch never taken.
  const bool less = m::Relational(m::Op::kLt, 0, 1, 1);
  int removed = 0;
  if (m::IsActive(5)) {} else removed = 1;
  if (argc > 2) return m::Literal(6, 2, 7);
  std::printf("less=%d statement=%d\n", less, removed);
  if (argc > 1 && std::strcmp(argv[1], "spawn") == 0) {
    char* child_argv[] = {argv[0], nullptr};
    pid_t pid;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, child_argv, environ) != 0) return 2;
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 2;
  }
  return 0;
}
"""


class ReachedRecordTest(unittest.TestCase):
  @classmethod
  def setUpClass(cls):
    cls.build = tempfile.mkdtemp(prefix="schemata-runtime-")
    source = os.path.join(cls.build, "program.cc")
    with open(source, "w") as f:
      f.write(PROGRAM)
    cls.program = os.path.join(cls.build, "program")
    subprocess.run([os.environ.get("CXX", "g++"), "-std=c++20", "-Wall", "-Werror",
                    f"-I{SOURCE_DIR}", source,
                    os.path.join(SOURCE_DIR, "mutation/schemata/runtime.cc"),
                    "-o", cls.program], check=True)

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.build, ignore_errors=True)

  def setUp(self):
    self.directory = tempfile.TemporaryDirectory()
    self.record = os.path.join(self.directory.name, "record")
    os.makedirs(self.record)

  def tearDown(self):
    self.directory.cleanup()

  def run_program(self, *args, **env):
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("DCPSCHED_MUTANT", "DCPSCHED_MUTANT_REACHED")}
    environment.update(env)
    return subprocess.run([self.program, *args], env=environment, capture_output=True,
                          text=True)

  def files(self):
    return sorted(os.listdir(self.record))

  def test_a_run_records_exactly_the_points_it_evaluates(self):
    run = self.run_program(DCPSCHED_MUTANT_REACHED=self.record)
    self.assertEqual(run.returncode, 0, run.stderr)
    self.assertEqual(run.stdout, "less=0 statement=1\n")
    self.assertEqual(len(self.files()), 1)
    self.assertRegex(self.files()[0], r"^reached-\d+\.txt$")
    self.assertEqual(run_mutants.read_reached(self.record), {"m0", "m1", "m2", "m3", "m4", "m5"})

  def test_a_spawned_child_writes_its_own_record(self):
    run = self.run_program("spawn", DCPSCHED_MUTANT_REACHED=self.record)
    self.assertEqual(run.returncode, 0, run.stderr)
    self.assertEqual(len(self.files()), 2)
    for name in self.files():
      with open(os.path.join(self.record, name)) as f:
        self.assertEqual(f.read().split(), ["m0", "m1", "m2", "m3", "m4", "m5"])

  def test_nothing_is_written_without_the_variable(self):
    run = self.run_program(DCPSCHED_MUTANT_REACHED="")
    self.assertEqual(run.returncode, 0, run.stderr)
    self.assertEqual(self.files(), [])

  def test_a_record_that_cannot_be_written_fails_the_run(self):
    run = self.run_program(DCPSCHED_MUTANT_REACHED=os.path.join(self.record, "missing"))
    self.assertEqual(run.returncode, 3)
    self.assertIn("DCPSCHED_MUTANT_REACHED: cannot write", run.stderr)

  def test_the_live_mutant_acts_while_the_record_is_taken(self):
    run = self.run_program(DCPSCHED_MUTANT="m0", DCPSCHED_MUTANT_REACHED=self.record)
    self.assertEqual(run.stdout, "less=1 statement=1\n")  # 1 <= 1
    run = self.run_program(DCPSCHED_MUTANT="m5", DCPSCHED_MUTANT_REACHED=self.record)
    self.assertEqual(run.stdout, "less=0 statement=0\n")  # the statement removed
    run = self.run_program(DCPSCHED_MUTANT="m6")
    self.assertEqual(run.stdout, "less=0 statement=1\n")  # its point is never reached

  def test_an_unknown_mutant_aborts(self):
    run = self.run_program(DCPSCHED_MUTANT="nope")
    self.assertLess(run.returncode, 0)
    self.assertIn("DCPSCHED_MUTANT=nope: no such mutant", run.stderr)


class ReachesTest(unittest.TestCase):
  def test_a_program_runs_on_a_mutant_only_when_its_record_reaches_it(self):
    suite = run_mutants.Suite.__new__(run_mutants.Suite)
    suite.skip_unreached = True
    suite.reached = None  # a hand-written mutant's suite: no record, every program runs
    self.assertTrue(suite.reaches("a_test", "m0"))
    suite.reached = {"a_test": {"m0", "m5"}, "b_test": set()}
    self.assertTrue(suite.reaches("a_test", "m5"))
    self.assertFalse(suite.reaches("a_test", "m6"))
    self.assertFalse(suite.reaches("b_test", "m0"))
    suite.skip_unreached = False  # --run-unreached
    self.assertTrue(suite.reaches("b_test", "m0"))


if __name__ == "__main__":
  unittest.main()
